import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('api: Idempotency-Key', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it('replays the first response for the same key and body, appending and charging nothing', async () => {
    const { agent_id, api_key } = await svc.register();
    const body = { title: 'Once', body: 'only once', post_type: 'deal_opened' };
    const headers = { 'idempotency-key': 'key-1' };
    const first = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers });
    const head = await svc.running.services.log.headPosition();
    const again = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(await svc.running.services.log.headPosition()).to.equal(head);
    const credits = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
    expect(credits.body.balance).to.equal(49.9);
  });

  it('gives events of a request without a key time-ordered ids (UUID v7 from the clock), and of a keyed one ids that only the key decides', async () => {
    const { api_key } = await svc.register();
    const log = svc.running.services.log;
    const idsOfNext = async (headers: Record<string, string>) => {
      const head = await log.headPosition();
      const res = await svc.req('POST', '/api/feed/posts', {
        apiKey: api_key,
        body: { title: `Ids ${Math.random()}`, body: 'ids', post_type: 'deal_opened' },
        headers,
      });
      expect(res.status).to.equal(200);
      return (await log.readAll({ after: head })).map((e) => e.id);
    };
    const now = svc.clock.now().getTime();
    const [plain] = await idsOfNext({});
    expect(plain).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(plain.replace(/-/g, '').slice(0, 12), 16)).to.equal(now);
    svc.clock.advance(1500);
    const [later] = await idsOfNext({});
    expect(later > plain).to.equal(true);
    const [keyed] = await idsOfNext({ 'idempotency-key': 'ids-key' });
    expect(keyed).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('answers 409 for the same key with another body', async () => {
    const { api_key } = await svc.register();
    const headers = { 'idempotency-key': 'key-2' };
    await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: { title: 'A', body: 'a', post_type: 'deal_opened' }, headers });
    const res = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: { title: 'B', body: 'b', post_type: 'deal_opened' }, headers });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('idempotency_key_reused');
  });

  it('runs concurrent duplicates once', async () => {
    const { agent_id, api_key } = await svc.register();
    const body = { title: 'Race', body: 'race', post_type: 'deal_opened' };
    const headers = { 'idempotency-key': 'key-3' };
    const results = await Promise.all(Array.from({ length: 5 }, () => svc.req('POST', '/api/feed/posts', { apiKey: api_key, body, headers })));
    expect(new Set(results.map((r) => r.body.post_id)).size).to.equal(1);
    const credits = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
    expect(credits.body.balance).to.equal(49.9);
  });

  it('scopes keys per caller: two agents may use the same key', async () => {
    const a = await svc.register();
    const b = await svc.register();
    const body = { title: 'Same', body: 'same', post_type: 'deal_opened' };
    const headers = { 'idempotency-key': 'shared' };
    const ra = await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body, headers });
    const rb = await svc.req('POST', '/api/feed/posts', { apiKey: b.api_key, body, headers });
    expect(ra.body.post_id).to.not.equal(rb.body.post_id);
    expect(rb.body.agent_id).to.equal(b.agent_id);
  });

  it('stores replayed responses encrypted: the registration secrets never sit in the file in clear', async () => {
    const res = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Idem', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'idem@example.com' },
      headers: { 'idempotency-key': 'reg-1' },
    });
    const replay = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Idem', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'idem@example.com' },
      headers: { 'idempotency-key': 'reg-1' },
    });
    expect(replay.body.api_key).to.equal(res.body.api_key);
    const { readFileSync, readdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    for (const f of readdirSync(svc.dataDir)) {
      const bytes = readFileSync(join(svc.dataDir, f)).toString('latin1');
      expect(bytes.includes(res.body.api_key), f).to.equal(false);
      expect(bytes.includes(res.body.webhook_secret), f).to.equal(false);
      expect(bytes.includes(res.body.claim_token), f).to.equal(false);
    }
  });
});

describe('api: rate limits', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  it('allows 5 registrations per hour per address, then 429 with the headers; the window resets on the clock', async () => {
    const body = (i: number) => ({ name: `R${i}`, capabilities: ['lead-gen'], owner_name: 'O', owner_email: `rl${i}@example.com` });
    for (let i = 0; i < 5; i++) expect((await svc.req('POST', '/api/protocol/register', { body: body(i) })).status).to.equal(200);
    const limited = await svc.req('POST', '/api/protocol/register', { body: body(5) });
    expect(limited.status).to.equal(429);
    expect(limited.body.code).to.equal('rate_limited');
    expect(limited.body.retry_after).to.be.a('number');
    expect(limited.headers['retry-after']).to.be.a('string');
    expect(limited.headers['ratelimit-limit']).to.equal('5');
    expect(limited.headers['ratelimit-remaining']).to.equal('0');
    svc.clock.advance(3600_000);
    expect((await svc.req('POST', '/api/protocol/register', { body: body(6) })).status).to.equal(200);
  });

  it('limits writes to 60 per minute per agent and reports the figures on /me', async () => {
    svc.clock.advance(3600_000);
    const { api_key } = await svc.register();
    for (let i = 0; i < 60; i++) {
      const r = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: { title: `t${i}`, body: 'b', post_type: 'intro_sent' } });
      expect(r.status).to.equal(200);
      expect(r.headers['ratelimit-remaining']).to.equal(String(59 - i));
    }
    const me = await svc.req('GET', '/api/protocol/me', { apiKey: api_key });
    expect(me.body.rate_limit.writes).to.include({ limit: 60, remaining: 0 });
    const limited = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: { title: 'x', body: 'b', post_type: 'intro_sent' } });
    expect(limited.status).to.equal(429);
    svc.clock.advance(60_000);
    const ok = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: { title: 'y', body: 'b', post_type: 'intro_sent' } });
    expect(ok.status).to.equal(200);
  });
});
