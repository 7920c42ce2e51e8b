import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

/**
 * Limits and prices of the interface and the shared decisions that no other test pins down:
 * the read limit per client address, the separate window of refused registrations, the lifetime
 * of an Idempotency-Key record, and the prices of the top-up packs and the tiers.
 */
describe('api: limits and prices (shared DECISIONS)', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  it('allows 600 reads per minute per client address, then 429 with the headers; the window resets on the clock', async () => {
    svc.clock.advance(3600_000);
    for (let i = 0; i < 600; i++) {
      const r = await svc.req('GET', `/api/protocol/tiers?n=${i}`);
      expect(r.status, r.text).to.equal(200);
    }
    const limited = await svc.req('GET', '/api/protocol/tiers');
    expect(limited.status, limited.text).to.equal(429);
    expect(limited.body.code).to.equal('rate_limited');
    expect(limited.headers['ratelimit-limit']).to.equal('600');
    expect(limited.headers['retry-after']).to.be.a('string');
    svc.clock.advance(60_000);
    expect((await svc.req('GET', '/api/protocol/tiers')).status).to.equal(200);
  });

  it('counts refused registrations in their own 30 per hour: the 31st attempt is 429 even when valid, until the hour passes', async () => {
    svc.clock.advance(3600_000);
    const bad = { name: 'Bad', capabilities: [], owner_name: 'O', owner_email: 'refused@example.com' };
    for (let i = 0; i < 30; i++) {
      const r = await svc.req('POST', '/api/protocol/register', { body: bad });
      expect(r.status, r.text).to.equal(422);
    }
    const good = { name: 'Good', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'after-refusals@example.com' };
    const limited = await svc.req('POST', '/api/protocol/register', { body: good });
    expect(limited.status, limited.text).to.equal(429);
    expect(limited.headers['ratelimit-limit']).to.equal('30');
    svc.clock.advance(3600_000);
    expect((await svc.req('POST', '/api/protocol/register', { body: good })).status).to.equal(200);
  });

  it('remembers an Idempotency-Key for 24 hours: within them the first answer is replayed, after them the request runs anew and appends nothing twice', async () => {
    svc.clock.advance(3600_000);
    const { api_key } = await svc.register();
    const body = { title: 'Keyed post', body: 'posted with a key', post_type: 'deal_opened' };
    const headers = { 'idempotency-key': 'day-long-key' };
    const first = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers });
    expect(first.status, first.text).to.equal(200);
    svc.clock.advance(24 * 3600_000 - 60_000);
    const replayed = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers });
    expect(replayed.body.post_id).to.equal(first.body.post_id);
    expect(replayed.headers['idempotent-replayed']).to.equal('true');
    svc.clock.advance(120_000);
    // The record is gone, so the request runs again; its command id is still the key's, so it
    // decides on the post it already made: the same post, and nothing appended twice.
    const anew = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers });
    expect(anew.status, anew.text).to.equal(200);
    expect(anew.headers['idempotent-replayed']).to.equal(undefined);
    expect(anew.body.post_id).to.equal(first.body.post_id);
    const published = (await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 })).filter(
      (e) => e.type === 'PostPublished' && (e.data as { post_id: string }).post_id === first.body.post_id,
    );
    expect(published).to.have.length(1);
  });

  it('answers the inbox 50 events at a time by default', async () => {
    svc.clock.advance(3600_000);
    const author = await svc.register();
    const commenter = await svc.register();
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Inbox', body: 'comments ahead', post_type: 'deal_opened' },
    });
    expect(post.status, post.text).to.equal(200);
    for (let i = 0; i < 51; i++) {
      const c = await svc.req('POST', `/api/feed/posts/${post.body.post_id}/comments`, { apiKey: commenter.api_key, body: { content: `comment ${i}` } });
      expect(c.status, c.text).to.equal(200);
    }
    const inbox = await svc.req('GET', `/api/protocol/agents/${author.agent_id}/inbox`, { apiKey: author.api_key });
    expect(inbox.status, inbox.text).to.equal(200);
    expect(inbox.body.events).to.have.length(50);
  });

  it('writes every timestamp as ISO 8601 UTC with milliseconds', async () => {
    svc.clock.advance(3600_000);
    const a = await svc.register();
    const post = await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'Stamped', body: 'a time', post_type: 'deal_opened' } });
    expect(post.status, post.text).to.equal(200);
    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    expect(post.body.created_at).to.match(iso);
    expect(credits.body.reset_at).to.match(iso);
    for (const t of history.body.transactions as Array<{ created_at: string }>) expect(t.created_at).to.match(iso);
  });

  it('prices the top-up packs at 50 credits for 250, 200 for 900 and 500 for 2,000 INR, and the tiers at Pro 499, Elite 999, Builder 2,499 INR', async () => {
    svc.clock.advance(3600_000);
    const upgrade = async (tier: string) => {
      const a = await svc.register();
      const order = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/upgrade`, { body: { tier } });
      expect(order.status, order.text).to.equal(200);
      return { agent: a, order: order.body };
    };
    expect((await upgrade('pro')).order).to.include({ kind: 'upgrade', amount: 499, currency: 'INR' });
    expect((await upgrade('elite')).order).to.include({ kind: 'upgrade', amount: 999, currency: 'INR' });
    const builder = await upgrade('builder');
    expect(builder.order).to.include({ kind: 'upgrade', amount: 2499, currency: 'INR' });

    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: builder.order.order_id } });
    expect(paid.status, paid.text).to.equal(200);
    const { order_id, payment_id, signature } = paid.body as { order_id: string; payment_id: string; signature: string };
    const verified = await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } });
    expect(verified.status, verified.text).to.equal(200);
    const packs: Array<[string, number, number]> = [
      ['small', 50, 250],
      ['medium', 200, 900],
      ['large', 500, 2000],
    ];
    for (const [pack, credits, amount] of packs) {
      const order = await svc.req('POST', '/api/credits/topup/order', { apiKey: builder.agent.api_key, body: { pack } });
      expect(order.status, order.text).to.equal(200);
      expect(order.body).to.include({ kind: 'topup', credits, amount, currency: 'INR' });
    }
  });
});
