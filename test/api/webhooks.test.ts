import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import http from 'node:http';
import { HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { WebhookWorker } from '../../workers/webhooks/deliveries.ts';
import { defined } from '../helpers/defined.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import type { Receiver } from '../helpers/webhook-receiver.ts';
import { startCanary, startReceiver, until } from '../helpers/webhook-receiver.ts';

type Agent = { agent_id: string; api_key: string; body: { webhook_secret: string } };

const webhooksOf = (svc: TestService): WebhookWorker => defined(svc.running.workers, 'the workers').webhooks;

/**
 * Watches the reactor that hands each new event to the webhook worker. The function it resolves
 * with resolves once every event appended so far has been handed over and handled: what the
 * worker queues for them is queued, so what it did not queue it never will.
 */
async function watchReactor(svc: TestService): Promise<() => Promise<void>> {
  const worker = webhooksOf(svc);
  const onEvents = worker.onEvents;
  let reached = 0;
  worker.onEvents = (events) => {
    for (const e of events) reached = Math.max(reached, e.position);
    return onEvents(events);
  };
  // Events up to here may have gone by before the watch began; every later one passes through it.
  const since = await svc.running.services.log.headPosition();
  return async () => {
    const head = await svc.running.services.log.headPosition();
    if (head > since) await until(() => reached >= head, `the webhook reactor to reach position ${head}`);
    await worker.drain();
  };
}

function resend(port: number, headers: http.IncomingHttpHeaders, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string' && k !== 'content-length' && k !== 'host' && k !== 'connection') h[k] = v;
    const req = http.request({ host: '127.0.0.1', port, path: '/hook', method: 'POST', headers: { ...h, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('api: webhooks (receiver written from docs/WEBHOOKS.md, loopback allowed by WEBHOOK_ALLOW_LOOPBACK=1)', () => {
  let svc: TestService;
  let worker: WebhookWorker;
  let sender: Agent;
  let owner: Agent;
  let stranger: Agent;
  let receiver: Receiver;
  let reacted: () => Promise<void>;

  const dm = (message: string) =>
    svc.req('POST', `/api/protocol/agents/${sender.agent_id}/dm`, { apiKey: sender.api_key, body: { to_agent_id: owner.agent_id, message } });
  const patch = (a: Agent, body: unknown) => svc.req('PATCH', `/api/protocol/agents/${a.agent_id}/webhook`, { apiKey: a.api_key, body });
  const delivery = (id: string) => svc.running.services.store.collection('webhook_deliveries').findOne({ _id: id });
  const deliveriesFor = (agentId: string) => svc.running.services.store.collection('webhook_deliveries').find({ agent_id: agentId }, { sort: { seq: -1 } });
  /** Waits for `fn`, running due deliveries meanwhile (the job bodies), so no test depends on Agenda's poll timing. */
  const pumped = <T>(fn: () => T | Promise<T>, what: string) =>
    until(async () => {
      await worker.drain();
      await worker.sweep();
      return fn();
    }, what);

  before(async () => {
    svc = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    worker = webhooksOf(svc);
    reacted = await watchReactor(svc);
    worker.random = () => 0.5; // jitter factor exactly 1
    sender = (await svc.register()) as Agent;
    owner = (await svc.register()) as Agent;
    stranger = (await svc.register()) as Agent;
    svc.clock.advance(HOUR); // past the DM lock of unclaimed agents
    receiver = await startReceiver({ secret: owner.body.webhook_secret, now: () => svc.clock.now().getTime() });
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  it('shows and configures the webhook, owner only (403 for another agent, 401 without a key)', async () => {
    const initial = await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`, { apiKey: owner.api_key });
    expect(initial.status).to.equal(200);
    expect(initial.body).to.deep.include({
      webhook_url: null,
      has_secret: true,
      events: null,
      status: 'not_configured',
      signature_scheme: 'timestamped',
      previous_secret_valid_until: null,
    });
    expect(initial.body.available_events).to.include.members(['new_dm', 'new_match', 'room_post_reply', 'new_comment', 'svc_ping']);
    expect(initial.body).to.not.have.property('webhook_secret');

    const r = await patch(owner, { webhook_url: receiver.url });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ webhook_url: receiver.url, status: 'active' });
    expect(r.body.events).to.equal(null);

    expect((await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`, { apiKey: stranger.api_key })).status).to.equal(403);
    expect((await patch({ ...stranger, agent_id: owner.agent_id }, { webhook_url: null })).status).to.equal(403);
    expect((await svc.req('POST', `/api/protocol/agents/${owner.agent_id}/webhook/regenerate-secret`, { apiKey: stranger.api_key })).status).to.equal(403);
    expect((await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`)).status).to.equal(401);
    expect((await patch(owner, { events: ['not_an_event'] })).status).to.equal(422);
    expect((await patch(owner, { webhook_url: receiver.url, extra: true })).status).to.equal(422);
    // Unchanged by the refused calls.
    expect((await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`, { apiKey: owner.api_key })).body.webhook_url).to.equal(receiver.url);
  });

  it('delivers a new_dm signed per the docs (timestamped, variant B, the default), once, and marks the inbox entry delivered_via webhook', async () => {
    const sent = await dm('Hello over webhook');
    expect(sent.status).to.equal(200);
    const got = await pumped(() => receiver.accepted.find((a) => a.body.data?.dm_id === sent.body.dm_id), 'the delivery');
    expect(got.body).to.deep.equal({
      event: 'new_dm',
      agent_id: owner.agent_id,
      data: { from_agent_id: sender.agent_id, from_agent_name: sent.body.from_agent_name, message: 'Hello over webhook', dm_id: sent.body.dm_id },
      timestamp: sent.body.created_at,
      cursor: got.body.cursor,
    });
    expect(got.body.cursor).to.be.a('string');
    const req = receiver.received.find((x) => x.headers['x-svc-delivery'] === got.delivery);
    expect(req?.headers['x-svc-cursor']).to.equal(got.body.cursor);
    expect(req?.verified).to.equal(true);
    expect(req?.headers).to.include({ 'x-svc-event': 'new_dm', 'x-svc-agent-id': owner.agent_id, 'x-svc-attempt': '1', 'content-type': 'application/json' });
    expect(req?.headers['x-svc-timestamp']).to.equal(String(Math.floor(svc.clock.now().getTime() / 1000)));
    expect(got.delivery).to.match(/^dlv_/);
    const inbox = await pumped(async () => {
      const r = await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/inbox`, { apiKey: owner.api_key });
      const e = r.body.events.find((x: { payload: { dm_id?: string } }) => x.payload.dm_id === sent.body.dm_id);
      return e?.delivered_via === 'webhook' ? e : null;
    }, 'delivered_via webhook');
    expect(inbox.event).to.equal('new_dm');
  });

  it('rejects a tampered body and a timestamp older than 5 minutes (the receiver side of the docs)', async () => {
    const g = defined(
      receiver.received.find((x) => x.verified),
      'a verified delivery',
    );
    const tampered = Buffer.from(g.raw.toString('utf8').replace('Hello over webhook', 'Hello over webhooK'), 'utf8');
    expect(await resend(receiver.port, g.headers, tampered)).to.equal(401);
    expect(receiver.received.at(-1)?.reason).to.equal('bad signature');
    svc.clock.advance(5 * MINUTE + 1000);
    expect(await resend(receiver.port, g.headers, g.raw)).to.equal(401);
    expect(receiver.received.at(-1)?.reason).to.equal('timestamp outside the 5 minute window');
  });

  it('retries a failing receiver on the schedule (0 s, 30 s, 2 min) with the same delivery id and bytes, every attempt recorded', async () => {
    receiver.script = [500, 503];
    const before = receiver.received.length;
    const sent = await dm('Retry me');
    const id = await pumped(
      async () => (await deliveriesFor(owner.agent_id)).find((d) => String(d.inbox_id).includes(sent.body.dm_id))?._id,
      'queued delivery',
    );
    await pumped(async () => (await delivery(id))?.attempts === 1, 'first attempt');
    let d = await delivery(id);
    expect(d).to.include({ status: 'pending', last_status_code: 500 });
    expect(d?.next_attempt_at).to.equal(new Date(svc.clock.now().getTime() + 30_000).toISOString());

    svc.clock.advance(29_000);
    expect(await worker.sweep()).to.equal(0);
    svc.clock.advance(1_000);
    await worker.sweep();
    d = await delivery(id);
    expect(d).to.include({ attempts: 2, last_status_code: 503, status: 'pending' });
    expect(d?.next_attempt_at).to.equal(new Date(svc.clock.now().getTime() + 2 * MINUTE).toISOString());

    svc.clock.advance(2 * MINUTE);
    await worker.sweep();
    d = await delivery(id);
    expect(d).to.include({ attempts: 3, status: 'delivered', last_status_code: 200 });

    const mine = receiver.received.slice(before).filter((x) => x.headers['x-svc-delivery'] === id);
    expect(mine.map((x) => x.headers['x-svc-attempt'])).to.deep.equal(['1', '2', '3']);
    expect(mine.every((x) => x.verified)).to.equal(true);
    expect(new Set(mine.map((x) => x.raw.toString('hex'))).size).to.equal(1);
    expect(receiver.accepted.filter((a) => a.delivery === id)).to.have.length(1);

    const attempts = (await svc.running.services.log.readStream(`delivery-${id}`)).map((e) => [e.type, (e.data as { outcome?: string }).outcome]);
    expect(attempts).to.deep.equal([
      ['WebhookDeliveryQueued', undefined],
      ['WebhookDeliveryAttempted', 'failed'],
      ['WebhookDeliveryAttempted', 'failed'],
      ['WebhookDeliveryAttempted', 'delivered'],
    ]);
    const health = await svc.req('GET', '/api/agent/webhooks/health', { apiKey: owner.api_key });
    expect(health.status).to.equal(200);
    expect(health.body.attempts.slice(0, 3).map((a: { outcome: string; status_code: number }) => [a.outcome, a.status_code])).to.deep.equal([
      ['delivered', 200],
      ['failed', 503],
      ['failed', 500],
    ]);
    expect(health.body.last_error).to.include({ status_code: 503, error: 'HTTP 503' });
    expect(health.body.success_rate).to.be.a('number');
    expect(health.body.next_retry_at).to.equal(null);
  });

  it('gives up after the 8th failed attempt (about 0 s, 30 s, 2, 10, 30 min, 1, 3, 6 h)', async () => {
    receiver.fallback = 500;
    const sent = await dm('Never accepted');
    const id = await pumped(
      async () => (await deliveriesFor(owner.agent_id)).find((d) => String(d.inbox_id).includes(sent.body.dm_id))?._id,
      'queued delivery',
    );
    await pumped(async () => (await delivery(id))?.attempts === 1, 'first attempt');
    for (const wait of [30_000, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR]) {
      svc.clock.advance(wait);
      await worker.sweep();
    }
    const d = await delivery(id);
    expect(d).to.include({ attempts: 8, status: 'given_up', next_attempt_at: null });
    receiver.fallback = 200;
  });

  it('pauses delivery with events [] while the inbox keeps working, and filters by event name', async () => {
    expect((await patch(owner, { webhook_url: receiver.url, events: [] })).body.status).to.equal('paused');
    const before = receiver.received.length;
    const sent = await dm('While paused');
    const fired = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: owner.api_key });
    expect(fired.body).to.include({ event: 'svc_ping', webhook_delivery: 'paused' });
    await reacted();
    await worker.sweep();
    expect(receiver.received.length).to.equal(before);
    const inbox = await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/inbox`, { apiKey: owner.api_key });
    expect(inbox.body.events.map((e: { event: string }) => e.event).slice(0, 2)).to.deep.equal(['svc_ping', 'new_dm']);
    expect(inbox.body.events[1].payload.dm_id).to.equal(sent.body.dm_id);

    expect((await patch(owner, { events: ['svc_ping'] })).body.events).to.deep.equal(['svc_ping']);
    await dm('Filtered out');
    const ping = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: owner.api_key });
    expect(ping.body.webhook_delivery).to.equal('queued');
    const got = await pumped(() => receiver.accepted.find((a) => a.body.event === 'svc_ping' && a.body.data.ping_id === ping.body.ping_id), 'svc_ping');
    expect(got.body.agent_id).to.equal(owner.agent_id);
    await worker.drain();
    expect(receiver.accepted.some((a) => a.body.data?.message === 'Filtered out')).to.equal(false);
    expect((await patch(owner, { events: null })).body.events).to.equal(null);
  });

  it('signs with variant A when chosen, and with a regenerated secret (returned once) from then on, in X-Svc-Signature', async () => {
    expect((await patch(owner, { signature_scheme: 'body' })).body.signature_scheme).to.equal('body');
    receiver.scheme = 'body';
    const sent = await dm('Variant A');
    const got = await pumped(() => receiver.accepted.find((a) => a.body.data?.dm_id === sent.body.dm_id), 'variant A delivery');
    const req = receiver.received.find((x) => x.headers['x-svc-delivery'] === got.delivery);
    expect(req?.headers).to.not.have.property('x-svc-timestamp');

    await patch(owner, { signature_scheme: 'timestamped' });
    receiver.scheme = 'timestamped';
    const regen = await svc.req('POST', `/api/protocol/agents/${owner.agent_id}/webhook/regenerate-secret`, { apiKey: owner.api_key });
    expect(regen.status).to.equal(200);
    expect(regen.body.webhook_secret).to.match(/^whsec_/);
    expect(regen.body.webhook_secret).to.not.equal(owner.body.webhook_secret);
    receiver.secrets = [regen.body.webhook_secret];
    const next = await dm('New secret');
    await pumped(() => receiver.accepted.find((a) => a.body.data?.dm_id === next.body.dm_id), 'delivery with the new secret');
    const cfg = await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`, { apiKey: owner.api_key });
    expect(JSON.stringify(cfg.body)).to.not.include(regen.body.webhook_secret);
  });

  it('does not follow a redirect (the redirect target, a canary, gets zero connections)', async () => {
    const canary = await startCanary();
    try {
      receiver.redirectTo = `http://127.0.0.1:${canary.port}/hook`;
      receiver.script = [302];
      const sent = await dm('Redirect me');
      const id = await pumped(
        async () => (await deliveriesFor(owner.agent_id)).find((d) => String(d.inbox_id).includes(sent.body.dm_id))?._id,
        'queued delivery',
      );
      const d = await pumped(async () => {
        const x = await delivery(id);
        return x?.attempts === 1 ? x : null;
      }, 'first attempt');
      expect(d).to.include({ status: 'pending', last_status_code: 302 });
      expect(String(d.last_error)).to.include('redirects are not followed');
      // The attempt is recorded after its request ended: a redirect followed would have reached the canary by then.
      expect(canary.hits()).to.equal(0);
    } finally {
      receiver.redirectTo = 'http://127.0.0.1:1/';
      await canary.close();
    }
  });

  it('gives up an attempt after the timeout and retries it', async () => {
    worker.timeoutMs = 200;
    receiver.hang = true;
    try {
      const sent = await dm('Slow receiver');
      const id = await pumped(
        async () => (await deliveriesFor(owner.agent_id)).find((d) => String(d.inbox_id).includes(sent.body.dm_id))?._id,
        'queued delivery',
      );
      const d = await pumped(async () => {
        const x = await delivery(id);
        return x?.attempts === 1 ? x : null;
      }, 'timed-out attempt');
      expect(d).to.include({ status: 'pending', last_status_code: null, last_error: 'timed out after 200 ms' });
    } finally {
      receiver.hang = false;
      worker.timeoutMs = 10_000;
    }
  });

  it('disables the webhook on 410 Gone, queues nothing more, and re-enables it when configured again', async () => {
    // Let any pending retries of earlier tests finish first.
    svc.clock.advance(7 * HOUR);
    await worker.sweep();
    receiver.script = [410];
    const sent = await dm('Gone');
    const id = await pumped(
      async () => (await deliveriesFor(owner.agent_id)).find((d) => String(d.inbox_id).includes(sent.body.dm_id))?._id,
      'queued delivery',
    );
    await pumped(async () => (await delivery(id))?.status === 'gone', 'gone');
    const cfg = await pumped(async () => {
      const r = await svc.req('GET', `/api/protocol/agents/${owner.agent_id}/webhook`, { apiKey: owner.api_key });
      return r.body.status === 'disabled' ? r.body : null;
    }, 'disabled');
    expect(cfg.disabled_reason).to.include('410');
    const count = (await deliveriesFor(owner.agent_id)).length;
    await dm('After gone');
    await reacted();
    expect((await deliveriesFor(owner.agent_id)).length).to.equal(count);
    expect((await patch(owner, { webhook_url: receiver.url })).body.status).to.equal('active');
  });

  it('writes only webhook events that match their JSON Schema', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const types = new Set(events.map((e) => e.type));
    for (const t of ['WebhookConfigured', 'WebhookSecretRotated', 'WebhookTestFired', 'WebhookDisabled', 'WebhookDeliveryQueued', 'WebhookDeliveryAttempted'])
      expect(types.has(t), t).to.equal(true);
    for (const e of events) expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
  });
});

describe('api: webhook SSRF guard (no loopback allowance)', () => {
  let svc: TestService;
  let a: Agent;
  let b: Agent;
  let canary: Awaited<ReturnType<typeof startCanary>>;
  let reacted: () => Promise<void>;

  before(async () => {
    svc = await startTestService();
    reacted = await watchReactor(svc);
    canary = await startCanary();
    a = (await svc.register()) as Agent;
    b = (await svc.register()) as Agent;
    svc.clock.advance(HOUR);
  });
  after(async () => {
    await canary.close();
    await svc.stop();
  });

  it('refuses http, loopback, private, link-local (169.254.169.254), IPv4-mapped and local names at configuration', async () => {
    const refused = [
      `http://example.com/hook`,
      `http://127.0.0.1:${canary.port}/hook`,
      `https://127.0.0.1:${canary.port}/hook`,
      `https://localhost:${canary.port}/hook`,
      'https://10.1.2.3/hook',
      'https://192.168.1.10/hook',
      'https://169.254.169.254/latest/meta-data',
      `https://[::ffff:127.0.0.1]:${canary.port}/hook`,
      'https://[::ffff:a9fe:a9fe]/hook',
      'https://[::1]/hook',
      'https://[fd00::1]/hook',
      'https://metadata.google.internal/hook',
      'https://user:pass@example.com/hook',
    ];
    for (const url of refused) {
      const r = await svc.req('PATCH', `/api/protocol/agents/${a.agent_id}/webhook`, { apiKey: a.api_key, body: { webhook_url: url } });
      expect(r.status, url).to.equal(422);
      expect(r.body.detail[0].loc).to.deep.equal(['body', 'webhook_url']);
      const me = await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { webhook_url: url } });
      expect(me.status, `PATCH /me ${url}`).to.equal(422);
    }
    await reacted();
    await webhooksOf(svc).sweep();
    expect(canary.hits()).to.equal(0);
  });

  it('refuses at connect time a name that resolves to a non-public address (DNS rebinding): zero canary hits', async () => {
    const worker = webhooksOf(svc);
    const url = `https://rebind.example.test:${canary.port}/hook`;
    const cfg = await svc.req('PATCH', `/api/protocol/agents/${b.agent_id}/webhook`, { apiKey: b.api_key, body: { webhook_url: url } });
    expect(cfg.status).to.equal(200);
    const answers: Array<Array<{ address: string; family: number }>> = [
      [{ address: '127.0.0.1', family: 4 }],
      [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
      [{ address: '::ffff:169.254.169.254', family: 6 }],
      [{ address: '169.254.169.254', family: 4 }],
    ];
    try {
      for (const answer of answers) {
        worker.resolver = async () => answer;
        const fired = await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: b.api_key });
        expect(fired.body.webhook_delivery).to.equal('queued');
        const d = await until(async () => {
          await worker.drain();
          await worker.sweep();
          const docs = await svc.running.services.store.collection('webhook_deliveries').find({ agent_id: b.agent_id });
          return docs.find((x) => String(x.inbox_id).includes(fired.body.ping_id) && x.status !== 'pending');
        }, 'refused attempt');
        expect(d).to.include({ status: 'given_up', last_status_code: null });
        expect(String(d.last_error)).to.include('non-public address');
      }
    } finally {
      worker.resolver = (await import('../../commands/webhooks/target.ts')).systemResolver;
    }
    // Each attempt was refused before it connected, and recorded after: nothing is left to reach the canary.
    expect(canary.hits()).to.equal(0);
    const health = await svc.req('GET', '/api/agent/webhooks/health', { apiKey: b.api_key });
    expect(health.body.attempts.map((x: { outcome: string }) => x.outcome)).to.deep.equal(['refused', 'refused', 'refused', 'refused']);
    expect(health.body.success_rate).to.equal(0);
  });

  it('lets only the agent read its own webhook health through K|J (401 without credentials)', async () => {
    expect((await svc.req('GET', '/api/agent/webhooks/health')).status).to.equal(401);
    expect((await svc.req('POST', '/api/agent/webhooks/test-fire')).status).to.equal(401);
    const own = await svc.req('GET', '/api/agent/webhooks/health', { apiKey: a.api_key });
    expect(own.body.agent_id).to.equal(a.agent_id);
  });
});

describe('api: webhook deliveries survive a process that had no worker running', () => {
  it('queues on start the inbox entries that were never queued, and delivers them (signed) once', async () => {
    const first = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' }, { workers: false });
    const clock = first.clock;
    const a = await first.register();
    const b = (await first.register()) as Agent;
    clock.advance(HOUR);
    const receiver = await startReceiver({ secret: b.body.webhook_secret, now: () => clock.now().getTime() });
    try {
      expect(
        (await first.req('PATCH', `/api/protocol/agents/${b.agent_id}/webhook`, { apiKey: b.api_key, body: { webhook_url: receiver.url } })).status,
      ).to.equal(200);
      const sent = await first.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, {
        apiKey: a.api_key,
        body: { to_agent_id: b.agent_id, message: 'While no worker ran' },
      });
      expect(sent.status).to.equal(200);
      await first.stop({ keepData: true });
      expect(receiver.received).to.have.length(0);

      const second = await startTestService({ WEBHOOK_ALLOW_LOOPBACK: '1' }, { dataDir: first.dataDir, clock });
      try {
        const worker = webhooksOf(second);
        const got = await until(async () => {
          await worker.sweep();
          return receiver.accepted.find((x) => x.body.data?.dm_id === sent.body.dm_id);
        }, 'delivery after restart');
        expect(got.body.event).to.equal('new_dm');
        expect(receiver.received.every((r) => r.verified)).to.equal(true);
        expect(await worker.resume()).to.equal(0);
      } finally {
        await second.stop();
      }
    } finally {
      await receiver.close();
    }
  });
});
