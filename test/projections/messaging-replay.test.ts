import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import { DAY, HOUR } from '../../events/kernel/clock.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';
import { checksumsOf } from '../helpers/checksums.ts';

const MINE = [
  'inbox_events',
  'notifications',
  'blocks',
  'member_dms',
  'webhooks',
  'webhook_deliveries',
  'webhook_attempts',
  'mesh_threads',
  'mesh_thread_members',
  'mesh_messages',
  'agent_presence',
];

const checksums = (store: ReadStore) => checksumsOf(store, MINE);

describe('projections: messaging read models replay', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    const [a, b, c] = [await svc.register(), await svc.register(), await svc.register()];
    svc.clock.advance(HOUR);
    const workers = svc.running.workers;
    if (!workers) throw new Error('the test service runs without workers');
    const receiver = await startReceiver({ secret: b.body.webhook_secret, now: () => svc.clock.now().getTime() });
    try {
      await svc.req('PATCH', `/api/protocol/agents/${b.agent_id}/webhook`, { apiKey: b.api_key, body: { webhook_url: receiver.url } });
      receiver.script = [500];
      await svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message: 'hello' } });
      await svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_email: 'someone@example.com', message: 'hi' } });
      await svc.req('POST', '/api/agent/a2a/message', {
        apiKey: a.api_key,
        body: { to_agent_id: b.agent_id, intent: 'collaboration', payload: { x: 1 }, sign: true },
      });
      const worker = workers.webhooks;
      await until(async () => {
        await worker.drain();
        await worker.sweep();
        return (await svc.running.services.store.collection('webhook_attempts').count({})) >= 2;
      }, 'attempts');
      svc.clock.advance(60_000);
      await worker.sweep();
      await svc.req('POST', `/api/agent/blocks/${c.agent_id}`, { apiKey: b.api_key });
      const t = await svc.req('POST', '/api/agent/group-dm', {
        apiKey: a.api_key,
        body: { participant_agent_ids: [b.agent_id, c.agent_id], first_message: 'group' },
      });
      await svc.req('POST', `/api/agent/group-dm/${t.body.thread_id}/message`, { apiKey: c.api_key, body: { message: 'reply' } });
      await svc.req('GET', '/api/agent/notifications?limit=1', { apiKey: b.api_key });
      await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'online', capacity: 10 } });
      svc.clock.advance(91 * DAY);
      await svc.req('POST', '/api/agent/group-dm', { apiKey: b.api_key, body: { participant_agent_ids: [a.agent_id], first_message: 'later' } });
      await workers.expireNotifications();
    } finally {
      await receiver.close();
    }
  });
  after(async () => {
    await svc.stop();
  });

  it('writes only events that match their JSON Schema, every messaging and webhook type among them', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      'DirectMessageSent',
      'AgentBlocked',
      'A2AMessageSent',
      'PassportKeyIssued',
      'MeshThreadCreated',
      'MeshThreadMessagePosted',
      'NotificationsRead',
      'NotificationsExpired',
      'AgentHeartbeatReceived',
      'WebhookConfigured',
      'WebhookDeliveryQueued',
      'WebhookDeliveryAttempted',
    ]) {
      expect(types.has(t), t).to.equal(true);
    }
    for (const e of events) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });

  it('covers every messaging read model with data', async () => {
    for (const name of MINE) expect(await svc.running.services.store.collection(name).count({}), name).to.be.greaterThan(0);
  });

  it('rebuilds the same messaging read models from the log, and applying every event twice changes nothing', async () => {
    const live = await checksums(svc.running.services.store);
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
    await runner.start();
    await runner.stop();
    expect(await checksums(store)).to.deep.equal(live);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: <N extends string>(n: N) => store.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksums(store)).to.deep.equal(live);
  });
});
