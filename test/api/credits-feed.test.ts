import { expect } from 'chai';
import { eventSchemas } from '../../events/catalogue.ts';
import { Ajv } from 'ajv';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const post = (title = 'Hello', extra: Record<string, unknown> = {}) => ({ title, body: 'Body with #Launch and #AI', post_type: 'activity_summary', ...extra });

describe('api: posts and credits', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it('charges exactly 0.1 for a post and shows it in balance, history (with the post as reference) and the daily view', async () => {
    const { agent_id, api_key } = await svc.register();
    const res = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('First', { room_slug: 'lead-gen' }) });
    expect(res.status).to.equal(200);
    expect(res.body.post_id).to.match(/^pst_/);
    expect(res.body).to.include({ credits_charged: 0.1, balance: 49.9, room_slug: 'lead-gen', published: true });
    expect(res.body.hashtags).to.deep.equal(['launch', 'ai']);

    const credits = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
    expect(credits.body).to.include({ balance: 49.9, used: 0.1, percent_used: 0.2, reset_at: '2026-04-10T09:30:00.000Z' });
    const short = await svc.req('GET', '/api/protocol/credits', { apiKey: api_key });
    expect(short.body).to.include({ balance: 49.9, used: 0.1 });

    const history = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits/history`, { apiKey: api_key });
    expect(history.status).to.equal(200);
    const [spend, grant] = history.body.transactions;
    expect(spend).to.include({ type: 'debit', action: 'post', amount: 0.1, balance_after: 49.9 });
    expect(spend.reference).to.deep.equal({ post_id: res.body.post_id });
    expect(grant).to.include({ type: 'credit', action: 'monthly_allocation', amount: 50, balance_after: 50 });

    const daily = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits/usage/daily`, { apiKey: api_key });
    expect(daily.body.days).to.have.length(7);
    expect(daily.body.days[6]).to.deep.equal({ date: '2026-03-10', amount: 0.1, label: 'Tue', is_today: true });
    expect(daily.body.total_7d).to.equal(0.1);
  });

  it('lists the feed newest first, by room, with totals', async () => {
    const { api_key } = await svc.register();
    const a = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('Room A', { room_slug: 'investor-connect' }) });
    const b = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('General') });
    const feed = await svc.req('GET', '/api/feed/posts?limit=2');
    expect(feed.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([b.body.post_id, a.body.post_id]);
    expect(feed.body.total).to.be.at.least(2);
    const room = await svc.req('GET', '/api/feed/posts?room_slug=investor-connect');
    expect(room.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([a.body.post_id]);
    expect(room.body.total).to.equal(1);
  });

  it('refuses a post to a room that does not exist (404) or is still private, charging nothing', async () => {
    const { agent_id, api_key } = await svc.register({ capabilities: ['secret-sauce'] });
    const res = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('x', { room_slug: 'secret-sauce' }) });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('room_not_found');
    const credits = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
    expect(credits.body.balance).to.equal(50);
  });

  it('validates post bodies with the 422 shape and appends nothing', async () => {
    const { api_key } = await svc.register();
    const cases = [
      {},
      { ...post(), post_type: 'rant' },
      { ...post(), extra: 1 },
      { ...post(), title: 'x'.repeat(201) },
      { ...post(), title: '   ' },
      { ...post(), body: 42 },
    ];
    for (const body of cases) {
      const before = await svc.running.services.log.headPosition();
      const res = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.detail).to.be.an('array');
      expect(await svc.running.services.log.headPosition()).to.equal(before);
    }
  });

  it('requires credentials to post (401)', async () => {
    const res = await svc.req('POST', '/api/feed/posts', { body: post() });
    expect(res.status).to.equal(401);
  });

  it("forbids reading another agent's credits (403)", async () => {
    const a = await svc.register();
    const b = await svc.register();
    for (const path of [
      `/api/protocol/agents/${b.agent_id}/credits`,
      `/api/protocol/agents/${b.agent_id}/credits/history`,
      `/api/protocol/agents/${b.agent_id}/credits/usage/daily`,
    ]) {
      const res = await svc.req('GET', path, { apiKey: a.api_key });
      expect(res.status, path).to.equal(403);
    }
  });

  it('caps credit history at 50', async () => {
    const { agent_id, api_key } = await svc.register();
    expect((await svc.req('GET', `/api/protocol/agents/${agent_id}/credits/history?limit=51`, { apiKey: api_key })).status).to.equal(422);
    for (let i = 0; i < 3; i++) await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post(`p${i}`) });
    const two = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits/history?limit=2`, { apiKey: api_key });
    expect(two.body.transactions).to.have.length(2);
  });

  it('answers 402 when credits run out: nothing appended, nothing charged', async () => {
    const { agent_id, api_key } = await svc.register();
    // Drain to 0 through the real write path.
    for (let i = 0; i < 500; i++) {
      const r = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post(`drain ${i}`) });
      expect(r.status).to.equal(200);
    }
    const before = await svc.running.services.log.headPosition();
    const res = await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('one too many') });
    expect(res.status).to.equal(402);
    expect(res.body.code).to.equal('insufficient_credits');
    expect(res.body.tiers_url).to.equal('/api/protocol/tiers');
    expect((await svc.req('GET', res.body.credits_url, { apiKey: api_key })).status).to.equal(200);
    expect(await svc.running.services.log.headPosition()).to.equal(before);
    const credits = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
    expect(credits.body).to.include({ balance: 0, used: 50, percent_used: 100 });
  });

  it('grants the monthly allocation on the billing day (injected clock), rolling over the rest', async () => {
    const { agent_id, api_key } = await svc.register();
    await svc.req('POST', '/api/feed/posts', { apiKey: api_key, body: post('before') });
    const workers = svc.running.workers;
    if (!workers) throw new Error('workers not running');
    const saved = svc.clock.now();
    try {
      svc.clock.set('2026-04-10T09:29:59.000Z');
      await workers.sweepGrants();
      let c = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
      expect(c.body.balance).to.equal(49.9);
      svc.clock.set('2026-04-10T09:30:00.000Z');
      await workers.sweepGrants();
      c = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
      expect(c.body).to.include({ balance: 99.9, used: 0, reset_at: '2026-05-10T09:30:00.000Z' });
      await workers.sweepGrants();
      c = await svc.req('GET', `/api/protocol/agents/${agent_id}/credits`, { apiKey: api_key });
      expect(c.body.balance).to.equal(99.9);
    } finally {
      svc.clock.set(saved);
    }
  });

  it('schedules the next grant as an Agenda job at the billing date', async () => {
    const { agent_id } = await svc.register();
    const workers = svc.running.workers;
    if (!workers) throw new Error('workers not running');
    // The reactor runs after the write is acknowledged: poll the job store briefly.
    let jobs: Array<{ nextRunAt: Date | null }> = [];
    for (let i = 0; i < 6000 && jobs.length === 0; i++) {
      jobs = (await workers.agenda.queryJobs({ name: 'credits.monthly-grant', data: { agent_id } })).jobs;
      if (jobs.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(jobs).to.have.length(1);
    expect(jobs[0].nextRunAt?.toISOString()).to.equal('2026-04-10T09:30:00.000Z');
  });

  it('writes only events that match their JSON Schema', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 });
    expect(events.length).to.be.greaterThan(10);
    for (const e of events) {
      const schema = eventSchemas[e.type];
      expect(schema, `schema for ${e.type}`).to.be.an('object');
      const ok = ajv.validate(schema, e.data);
      expect(ok, `${e.type}: ${ajv.errorsText()}`).to.equal(true);
    }
  });
});
