import { expect } from 'chai';
import { HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { WebhookWorker } from '../../workers/webhooks/deliveries.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import type { Receiver, Received } from '../helpers/webhook-receiver.ts';
import { startReceiver, until, verifyWebhook } from '../helpers/webhook-receiver.ts';

type Agent = { agent_id: string; api_key: string; body: { webhook_secret: string } };

const ADMIN_EMAIL = 'replayer@example.com';
const ADMIN_PASSWORD = 'admin password 1';
const MEMBER_EMAIL = 'member-replay@example.com';
const MEMBER_PASSWORD = 'member password 1';

describe('api: webhook replay (POST /api/agent/webhooks/replay and the admin route; receiver written from docs/WEBHOOKS.md)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let worker: WebhookWorker;
  let agent: Agent;
  let stranger: Agent;
  let receiver: Receiver;
  /** The agent's delivery ids in their original (queue) order. */
  let ids: string[];
  /** The first request that carried each delivery. */
  const originals = new Map<string, Received>();

  const seconds = () => Math.floor(svc.clock.now().getTime() / 1000);
  const replay = (a: Agent, body: unknown) => svc.req('POST', '/api/agent/webhooks/replay', { apiKey: a.api_key, body });
  const login = async (email: string, password: string) => {
    const r = await svc.req('POST', '/api/auth/login', { body: { email, password } });
    expect(r.status, r.text).to.equal(200);
    return { authorization: `Bearer ${r.body.access_token as string}` };
  };
  const adminReplay = async (agentId: string, body: unknown, who = { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }) =>
    svc.req('POST', `/api/admin/agents/${agentId}/webhooks/replay`, { headers: await login(who.email, who.password), body });
  const queuedAt = async (deliveryId: string) =>
    String((await svc.running.services.store.collection('webhook_deliveries').findOne({ _id: deliveryId }))?.queued_at);
  const ofReplay = (replayId: string) => receiver.received.filter((r) => r.headers['x-svc-replay'] === replayId);
  /** Runs due deliveries and replays (the job bodies) until `n` requests of the replay arrived. */
  const replayed = (replayId: string, n: number) =>
    until(async () => {
      await worker.drain();
      await worker.sweep();
      const got = ofReplay(replayId);
      return got.length >= n ? got : null;
    }, `${n} requests of replay ${replayId}`);
  const deliveryIdsOf = (got: Received[]) => got.map((r) => String(r.headers['x-svc-delivery']));

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ WEBHOOK_ALLOW_LOOPBACK: '1', ADMIN_EMAILS: ADMIN_EMAIL, RATE_LIMIT_SCALE: '1' }));
    worker = defined(svc.running.workers, 'the workers').webhooks;
    worker.random = () => 0.5; // jitter factor exactly 1
    await signUp(svc, outbox, ADMIN_EMAIL, ADMIN_PASSWORD);
    await signUp(svc, outbox, MEMBER_EMAIL, MEMBER_PASSWORD);
    agent = (await svc.register()) as Agent;
    stranger = (await svc.register()) as Agent;
    receiver = await startReceiver({ secret: agent.body.webhook_secret, now: () => svc.clock.now().getTime() });
    const patched = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: receiver.url } });
    expect(patched.status).to.equal(200);
    // Four deliveries queued a minute apart (each queued, at the clock's time, before the clock moves).
    const store = svc.running.services.store;
    for (let i = 0; i < 4; i++) {
      expect((await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key })).status).to.equal(200);
      await until(
        async () => {
          await worker.drain();
          return (await store.collection('webhook_deliveries').count({ agent_id: agent.agent_id })) === i + 1;
        },
        `delivery ${i + 1} queued`,
      );
      svc.clock.advance(MINUTE);
    }
    await until(async () => {
      await worker.drain();
      await worker.sweep();
      const docs = await store.collection('webhook_deliveries').find({ agent_id: agent.agent_id });
      return docs.length === 4 && docs.every((d) => d.status === 'delivered');
    }, 'the four original deliveries');
    ids = (await store.collection('webhook_deliveries').find({ agent_id: agent.agent_id }, { sort: { seq: 1 } })).map((d) => d._id);
    for (const r of receiver.received) {
      const id = String(r.headers['x-svc-delivery']);
      if (!originals.has(id)) originals.set(id, r);
    }
    expect([...originals.keys()]).to.have.members(ids);
    const queued = await Promise.all(ids.map((id) => queuedAt(id)));
    expect(new Set(queued).size, 'four distinct queue times').to.equal(4);
  });
  // Each test starts an hour later: a fresh window of the replay rate limit.
  beforeEach(() => svc.clock.advance(HOUR));
  after(async () => {
    await receiver.close();
    await stopWithOutbox(svc, outbox);
  });

  it('replays from a cursor of the deliveries list: the same delivery ids in their original order, original bodies, fresh timestamps and signatures', async () => {
    const list = await svc.req('GET', '/api/agent/webhooks/deliveries?after=0', { apiKey: agent.api_key });
    expect(list.status).to.equal(200);
    const second = (list.body.attempts as Array<{ delivery_id: string; cursor: string; replay_id: string | null }>).find((a) => a.delivery_id === ids[1]);
    const cursor = defined(second, 'the second delivery in the list').cursor;
    expect(second?.replay_id).to.equal(null);

    const r = await replay(agent, { from: cursor });
    expect(r.status, r.text).to.equal(202);
    expect(r.body).to.include({ agent_id: agent.agent_id, deliveries: 3, first_delivery_id: ids[1], last_delivery_id: ids[3], has_more: false });
    expect(r.body.replay_id).to.match(/^rpl_/);

    const got = await replayed(r.body.replay_id as string, 3);
    expect(deliveryIdsOf(got)).to.deep.equal(ids.slice(1));
    for (const g of got) {
      const original = defined(originals.get(String(g.headers['x-svc-delivery'])), 'the original request');
      expect(g.verified, g.reason ?? '').to.equal(true);
      expect(g.raw.equals(original.raw)).to.equal(true);
      expect(g.headers['x-svc-timestamp']).to.equal(String(seconds()));
      expect(Number(g.headers['x-svc-timestamp'])).to.be.at.least(Number(original.headers['x-svc-timestamp']) + 3600);
      expect(g.headers['x-svc-signature']).to.not.equal(original.headers['x-svc-signature']);
      expect(g.headers['x-svc-attempt']).to.equal('1');
      // The original request, sent again now, would be refused for its old timestamp: the replay is not a resend of old bytes.
      expect(verifyWebhook('timestamped', receiver.secrets, original.headers, original.raw, seconds())).to.equal(false);
    }
    // A receiver that deduplicates by delivery id accepts none of them a second time.
    expect(got.every((g) => g.duplicate)).to.equal(true);
  });

  it('replays from a time, up to to_time (exclusive), and caps the count with limit', async () => {
    const from = await queuedAt(ids[2]);
    const all = await replay(agent, { from_time: from });
    expect(all.status, all.text).to.equal(202);
    expect(all.body).to.include({ deliveries: 2, first_delivery_id: ids[2], last_delivery_id: ids[3] });
    expect(deliveryIdsOf(await replayed(all.body.replay_id as string, 2))).to.deep.equal(ids.slice(2));

    const bounded = await replay(agent, { from_time: await queuedAt(ids[0]), to_time: await queuedAt(ids[2]) });
    expect(bounded.body).to.include({ deliveries: 2, first_delivery_id: ids[0], last_delivery_id: ids[1], has_more: false });
    expect(deliveryIdsOf(await replayed(bounded.body.replay_id as string, 2))).to.deep.equal(ids.slice(0, 2));

    const capped = await replay(agent, { from_time: await queuedAt(ids[0]), limit: 1 });
    expect(capped.body).to.include({ deliveries: 1, first_delivery_id: ids[0], last_delivery_id: ids[0], has_more: true });
    expect(deliveryIdsOf(await replayed(capped.body.replay_id as string, 1))).to.deep.equal([ids[0]]);
  });

  it('answers 202 with 0 deliveries for a range with nothing in it', async () => {
    const r = await replay(agent, { from_time: new Date(svc.clock.now().getTime() + HOUR).toISOString() });
    expect(r.status, r.text).to.equal(202);
    expect(r.body).to.include({ deliveries: 0, first_delivery_id: null, last_delivery_id: null, has_more: false });
  });

  it('keeps the original order when a replayed delivery fails: it is retried on the schedule and the later ones wait for it', async () => {
    receiver.script = [500];
    const r = await replay(agent, { from_time: await queuedAt(ids[0]) });
    expect(r.body.deliveries).to.equal(4);
    const replayId = r.body.replay_id as string;
    // The failed attempt is recorded (at the clock's time) before the clock moves to its retry.
    await until(async () => {
      await worker.drain();
      await worker.sweep();
      return svc.running.services.store.collection('webhook_attempts').findOne({ replay_id: replayId, outcome: 'failed' });
    }, 'the failed replay attempt');
    svc.clock.advance(30_000); // the first retry's delay (jitter factor 1)
    const got = await replayed(replayId, 5);
    expect(deliveryIdsOf(got)).to.deep.equal([ids[0], ...ids]);
    expect(got.map((g) => g.headers['x-svc-attempt'])).to.deep.equal(['1', '2', '1', '1', '1']);

    // The delivery log shows the replayed attempts, marked with their replay.
    const list = await svc.req('GET', '/api/agent/webhooks/deliveries?limit=100', { apiKey: agent.api_key });
    const mine = (list.body.attempts as Array<{ delivery_id: string; replay_id: string | null; outcome: string; attempt: number }>).filter(
      (a) => a.replay_id === replayId,
    );
    expect(mine).to.have.length(5);
    expect(mine.map((a) => a.outcome).sort()).to.deep.equal(['delivered', 'delivered', 'delivered', 'delivered', 'failed']);
    // A replayed attempt's cursor starts a replay at its delivery, like an original attempt's.
    const replayedThird = (list.body.attempts as Array<{ delivery_id: string; replay_id: string | null; cursor: string }>).find(
      (a) => a.replay_id === replayId && a.delivery_id === ids[2],
    );
    const again = await replay(agent, { from: defined(replayedThird, 'the replayed attempt of the third delivery').cursor });
    expect(again.body).to.include({ deliveries: 2, first_delivery_id: ids[2], last_delivery_id: ids[3] });
    expect(deliveryIdsOf(await replayed(again.body.replay_id as string, 2))).to.deep.equal(ids.slice(2));
  });

  it('signs a replay with the current secret after a rotation, and with the current scheme (webhook-id is the original delivery id)', async () => {
    const oldSecret = receiver.secrets[0];
    const rotated = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/webhook/regenerate-secret`, {
      apiKey: agent.api_key,
      body: { keep_previous_seconds: 0 },
    });
    expect(rotated.status).to.equal(200);
    const newSecret = rotated.body.webhook_secret as string;
    receiver.secrets = [newSecret];
    const r = await replay(agent, { from_time: await queuedAt(ids[3]) });
    const [got] = await replayed(r.body.replay_id as string, 1);
    expect(got.verified, got.reason ?? '').to.equal(true);
    expect(verifyWebhook('timestamped', [oldSecret], got.headers, got.raw, seconds())).to.equal(false);

    expect(
      (await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { signature_scheme: 'standard_webhooks' } }))
        .status,
    ).to.equal(200);
    receiver.scheme = 'standard_webhooks';
    const s = await replay(agent, { from_time: await queuedAt(ids[3]) });
    const [standard] = await replayed(s.body.replay_id as string, 1);
    expect(standard.verified, standard.reason ?? '').to.equal(true);
    expect(standard.headers['webhook-id']).to.equal(ids[3]);
    expect(standard.headers['webhook-timestamp']).to.equal(String(seconds()));
    receiver.scheme = 'delivery_timestamped';
    expect(
      (await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { signature_scheme: 'delivery_timestamped' } }))
        .status,
    ).to.equal(200);
  });

  it('refuses neither or both of from and from_time, unknown fields and a limit over 1,000 with 422, a foreign cursor with 400', async () => {
    const cases: unknown[] = [
      {},
      { from: '0', from_time: new Date().toISOString() },
      { from_time: 'yesterday' },
      { from: '0', extra: 1 },
      { from: '0', limit: 1001 },
    ];
    for (const body of cases) {
      const r = await replay(agent, body);
      expect(r.status, JSON.stringify(body)).to.equal(422);
    }
    const bad = await replay(agent, { from: 'not a cursor!' });
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('invalid_cursor');
    expect((await svc.req('POST', '/api/agent/webhooks/replay', { body: { from: '0' } })).status).to.equal(401);
  });

  it("refuses a plain agent another agent's deliveries (403), and an agent without a webhook (409 webhook_not_configured)", async () => {
    const list = await svc.req('GET', '/api/agent/webhooks/deliveries?after=0', { apiKey: agent.api_key });
    const cursor = (list.body.attempts as Array<{ cursor: string }>)[0].cursor;
    const foreign = await replay(stranger, { from: cursor });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('forbidden');
    const none = await replay(stranger, { from: '0' });
    expect(none.status).to.equal(409);
    expect(none.body.code).to.equal('webhook_not_configured');
  });

  it('lets a super admin replay for the agent (202, delivered); others get 403 admin_required, an unknown agent 404', async () => {
    const r = await adminReplay(agent.agent_id, { from_time: await queuedAt(ids[1]), to_time: await queuedAt(ids[2]) });
    expect(r.status, r.text).to.equal(202);
    expect(r.body).to.include({ agent_id: agent.agent_id, deliveries: 1, first_delivery_id: ids[1] });
    const [got] = await replayed(r.body.replay_id as string, 1);
    expect(got.headers['x-svc-delivery']).to.equal(ids[1]);
    expect(got.verified).to.equal(true);

    const member = await adminReplay(agent.agent_id, { from: '0' }, { email: MEMBER_EMAIL, password: MEMBER_PASSWORD });
    expect(member.status).to.equal(403);
    expect(member.body.code).to.equal('admin_required');
    const unknown = await adminReplay('agt_unknown00000000000000', { from: '0' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('agent_not_found');
    const noHook = await adminReplay(stranger.agent_id, { from: '0' });
    expect(noHook.status).to.equal(409);
    expect(noHook.body.code).to.equal('webhook_not_configured');
  });

  it('rate-limits replays: 10 per hour per agent, then 429 rate_limited', async () => {
    const future = new Date(svc.clock.now().getTime() + HOUR).toISOString();
    for (let i = 0; i < 10; i++) expect((await replay(agent, { from_time: future })).status).to.equal(202);
    const limited = await replay(agent, { from_time: future });
    expect(limited.status).to.equal(429);
    expect(limited.body.code).to.equal('rate_limited');
  });
});
