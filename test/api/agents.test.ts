import { expect } from 'chai';
import { heapReport } from '../../api/services.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const validBody = (email: string, extra: Record<string, unknown> = {}) => ({
  name: 'Scout',
  capabilities: ['Lead Gen', 'b2b-sales'],
  owner_name: 'Ada Owner',
  owner_email: email,
  ...extra,
});

describe('api: registration and profile', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it('registers an agent and returns the full registration response with secrets shown once', async () => {
    const res = await svc.req('POST', '/api/protocol/register', {
      body: validBody('ada@example.com', { description: 'Finds leads', webhook_url: 'https://hooks.example.com/x' }),
    });
    expect(res.status).to.equal(200);
    const b = res.body;
    expect(b.agent_id).to.match(/^agt_[0-9a-z]{20}$/);
    expect(b.api_key).to.match(/^ans_live_/);
    expect(b.webhook_secret).to.match(/^whsec_/);
    expect(b.claim_token).to.match(/^clm_/);
    expect(b).to.include({ name: 'Scout', tier: 'free', monthly_credits: 50, activation_required: false });
    // The claim page (the lite claim in the browser).
    expect(b.claim_url).to.match(/\/claim\/agt_[0-9a-z]{20}$/);
    expect(b.claim_url.endsWith(`/claim/${b.agent_id}`)).to.equal(true);
    expect(b.message).to.be.a('string');
    expect(b.next_steps).to.be.an('array').with.length.greaterThan(3);
    for (const step of b.next_steps) expect(step).to.include.keys('step', 'action', 'method', 'url', 'description');
    // The tool server step names the endpoint and its server card (both answer: test/api/mcp.test.ts).
    const tools = b.next_steps.find((step: { action: string }) => step.action === 'connect_tools');
    expect(tools).to.include({ method: 'POST' });
    expect(tools.url).to.match(/\/api\/mcp$/);
    expect(tools.mcp_discovery_url).to.match(/\/\.well-known\/mcp\.json$/);

    const me = await svc.req('GET', '/api/protocol/me', { apiKey: b.api_key });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({
      agent_id: b.agent_id,
      owner_email: 'ada@example.com',
      description: 'Finds leads',
      webhook_url: 'https://hooks.example.com/x',
    });
    expect(me.body.capabilities).to.deep.equal(['lead-gen', 'b2b-sales']);
    expect(me.body.credits).to.include({ balance: 50, used: 0, percent_used: 0 });
    expect(me.body.rate_limit.writes).to.include.keys('limit', 'remaining', 'reset');
    expect(JSON.stringify(me.body)).to.not.contain(b.api_key);
  });

  it('refuses a second agent for the same owner e-mail, including dotted, +tag and case variants (409)', async () => {
    const first = await svc.req('POST', '/api/protocol/register', { body: validBody('jane.doe@gmail.com') });
    expect(first.status).to.equal(200);
    for (const variant of ['janedoe@gmail.com', 'Jane.Doe+bots@GMAIL.com', 'j.a.n.e.d.o.e@googlemail.com']) {
      const dup = await svc.req('POST', '/api/protocol/register', { body: validBody(variant) });
      expect(dup.status, variant).to.equal(409);
      expect(dup.body).to.include({ code: 'owner_email_taken', normalized_owner_email: 'janedoe@gmail.com' });
      expect(dup.body.detail).to.match(/^An agent is already registered for this owner e-mail\./);
    }
  });

  it('lets only one of many concurrent registrations for one e-mail win', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => svc.req('POST', '/api/protocol/register', { body: validBody(`race+${i}@example.org`) })),
    );
    expect(results.filter((r) => r.status === 200)).to.have.length(1);
    expect(results.filter((r) => r.status === 409)).to.have.length(9);
  });

  it('refuses disposable e-mail domains with the 422 shape', async () => {
    const res = await svc.req('POST', '/api/protocol/register', { body: validBody('x@mailinator.com') });
    expect(res.status).to.equal(422);
    expect(res.body.detail[0]).to.deep.include({ loc: ['body', 'owner_email'], type: 'value_error.email.disposable' });
  });

  const bad: Array<[string, unknown, Array<string | number>]> = [
    ['missing fields', {}, ['body', 'name']],
    ['wrong types', { name: 5, capabilities: 'x', owner_name: [], owner_email: true }, ['body', 'name']],
    ['an unknown field', { ...validBody('u1@example.com'), admin: true }, ['body', 'admin']],
    ['an oversize description', validBody('u2@example.com', { description: 'x'.repeat(501) }), ['body', 'description']],
    ['a bad e-mail', validBody('not-an-email'), ['body', 'owner_email']],
    ['no capabilities', validBody('u3@example.com', { capabilities: [] }), ['body', 'capabilities']],
    ['a capability that cannot normalise', validBody('u4@example.com', { capabilities: ['!!'] }), ['body', 'capabilities', 0]],
    ['an http webhook', validBody('u5@example.com', { webhook_url: 'http://hooks.example.com' }), ['body', 'webhook_url']],
    ['a private webhook host', validBody('u6@example.com', { webhook_url: 'https://169.254.169.254/latest' }), ['body', 'webhook_url']],
    ['an array body', [1, 2], ['body']],
  ];
  for (const [label, body, loc] of bad) {
    it(`answers 422 for ${label} and appends nothing`, async () => {
      const before = await svc.running.services.log.headPosition();
      const res = await svc.req('POST', '/api/protocol/register', { body });
      expect(res.status).to.equal(422);
      expect(res.body.detail).to.be.an('array');
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).to.deep.include(loc);
      for (const d of res.body.detail) expect(d).to.have.keys('loc', 'msg', 'type');
      expect(await svc.running.services.log.headPosition()).to.equal(before);
    });
  }

  it('answers 400 invalid_json for a malformed body and 413 for a huge one', async () => {
    const malformed = await svc.req('POST', '/api/protocol/register', { rawBody: '{"name": ' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body).to.include({ detail: 'Malformed JSON body', code: 'invalid_json' });
    const huge = await svc.req('POST', '/api/protocol/register', { rawBody: JSON.stringify({ name: 'x'.repeat(200_000) }) });
    expect(huge.status).to.equal(413);
    expect(huge.body.code).to.equal('payload_too_large');
  });

  it('updates name, description and webhook_url through PATCH /me, refusing other fields', async () => {
    const { api_key, agent_id } = await svc.register();
    const ok = await svc.req('PATCH', '/api/protocol/me', {
      apiKey: api_key,
      body: { name: 'Renamed', description: 'New', webhook_url: 'https://example.com/hook' },
    });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ agent_id, name: 'Renamed', description: 'New', webhook_url: 'https://example.com/hook' });
    const profile = await svc.req('GET', `/api/protocol/agents/${agent_id}`);
    expect(profile.body.name).to.equal('Renamed');
    const refused = await svc.req('PATCH', '/api/protocol/me', { apiKey: api_key, body: { tier: 'enterprise' } });
    expect(refused.status).to.equal(422);
    expect(refused.body.detail[0].loc).to.deep.equal(['body', 'tier']);
    const long = await svc.req('PATCH', '/api/protocol/me', { apiKey: api_key, body: { description: 'y'.repeat(501) } });
    expect(long.status).to.equal(422);
  });

  it('answers 401 with WWW-Authenticate for a missing, malformed or wrong key', async () => {
    for (const key of [undefined, 'nope', 'ans_live_wrongwrongwrong']) {
      const res = await svc.req('GET', '/api/protocol/me', { apiKey: key });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('unauthorized');
      expect(res.headers['www-authenticate']).to.be.a('string');
    }
  });

  it('answers 401 for a bearer token while no bearer sign-in can vouch for it', async () => {
    const res = await svc.req('GET', '/api/protocol/me', { headers: { authorization: 'Bearer abc.def.ghi' } });
    expect(res.status).to.equal(401);
  });

  it('lists agents publicly without private fields, filterable by capability', async () => {
    const a = await svc.register({ capabilities: ['quantum-sourcing'] });
    const list = await svc.req('GET', '/api/protocol/agents?limit=5');
    expect(list.status).to.equal(200);
    expect(list.body).to.include.keys('items', 'total', 'page', 'limit');
    expect(list.body.items.length).to.be.at.most(5);
    for (const item of list.body.items) expect(item).to.not.have.any.keys('owner_email', 'webhook_url', 'owner_name');
    const filtered = await svc.req('GET', '/api/protocol/agents?capability=quantum-sourcing');
    expect(filtered.body.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([a.agent_id]);
    expect((await svc.req('GET', '/api/protocol/agents?limit=101')).status).to.equal(422);
    expect((await svc.req('GET', '/api/protocol/agents?page=-1')).status).to.equal(422);
  });

  it('shows a public profile with trust score, and 404 for an unknown agent', async () => {
    const { agent_id } = await svc.register();
    const res = await svc.req('GET', `/api/protocol/agents/${agent_id}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ agent_id, trust_score: 0, is_claimed: false });
    const missing = await svc.req('GET', '/api/protocol/agents/agt_doesnotexist');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('agent_not_found');
  });

  it('publishes tiers with monthly credits and costs', async () => {
    const res = await svc.req('GET', '/api/protocol/tiers');
    expect(res.status).to.equal(200);
    const byId = Object.fromEntries(res.body.tiers.map((t: { id: string }) => [t.id, t]));
    expect(byId.free).to.include({ name: 'Dev Sandbox', monthly_credits: 50 });
    expect(byId.pro.monthly_credits).to.equal(200);
    expect(byId.elite.monthly_credits).to.equal(500);
    expect(byId.builder.monthly_credits).to.equal(2000);
    expect(byId.enterprise).to.include({ monthly_credits: null, unlimited: true });
    expect(res.body.credit_costs).to.include({ post: 0.1, comment: 0.1, dm: 0.25, marketplace_post: 0.5, matching_run: 1 });
  });

  it('suggests capabilities, curated first for an empty query and ranked for a query', async () => {
    const all = await svc.req('GET', '/api/protocol/capabilities/suggest');
    expect(all.status).to.equal(200);
    expect(all.body.suggestions.length).to.equal(10);
    const q = await svc.req('GET', '/api/protocol/capabilities/suggest?q=investor');
    expect(q.body.suggestions[0].slug).to.equal('investor-connect');
    const fuzzy = await svc.req('GET', '/api/protocol/capabilities/suggest?q=cofounder');
    expect(fuzzy.body.suggestions.map((s: { slug: string }) => s.slug)).to.include('co-founder-search');
  });

  it('suggestions are one top list: limit is bounded (1 to 50), page and skip are not read', async () => {
    const top = await svc.req('GET', '/api/protocol/capabilities/suggest?limit=3');
    expect(top.body.suggestions).to.have.length(3);
    // A parameter the route does not declare changes nothing and refuses nothing.
    for (const extra of ['page=2', 'page=abc', 'skip=99999999']) {
      const res = await svc.req('GET', `/api/protocol/capabilities/suggest?limit=3&${extra}`);
      expect(res.status, extra).to.equal(200);
      expect(res.body.suggestions, extra).to.deep.equal(top.body.suggestions);
    }
    for (const limit of ['0', '51', 'x']) expect((await svc.req('GET', `/api/protocol/capabilities/suggest?limit=${limit}`)).status, limit).to.equal(422);
  });

  it('promotes a custom capability to a public room once 3 agents declare it', async () => {
    const slug = 'deep-tech-scouting';
    for (let i = 0; i < 2; i++) await svc.register({ capabilities: [slug] });
    let s = await svc.req('GET', `/api/protocol/capabilities/suggest?q=${slug}`);
    expect(s.body.suggestions.map((x: { slug: string }) => x.slug)).to.not.include(slug);
    await svc.register({ capabilities: [slug] });
    s = await svc.req('GET', `/api/protocol/capabilities/suggest?q=${slug}`);
    expect(s.body.suggestions[0]).to.include({ slug, curated: false, agent_count: 3 });
  });
});

describe('api: service endpoints and routing', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it('answers /health and /api/health with store status', async () => {
    for (const path of ['/health', '/api/health']) {
      const res = await svc.req('GET', path);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ status: 'ok' });
      expect(res.body.checks).to.deep.equal({ event_log: 'ok', read_store: 'ok' });
    }
  });

  it('answers 503 from /health when the event log is down', async () => {
    const log = svc.running.services.log;
    const original = log.ping.bind(log);
    log.ping = async () => {
      throw new Error('down');
    };
    try {
      const res = await svc.req('GET', '/health');
      expect(res.status).to.equal(503);
      expect(res.body.checks.event_log).to.equal('unavailable');
    } finally {
      log.ping = original;
    }
  });

  it('serves the API root and the docs version 3.7.0 with every listed field', async () => {
    const root = await svc.req('GET', '/api/');
    expect(root.status).to.equal(200);
    expect(root.body.version).to.equal('3.7.0');
    const v = await svc.req('GET', '/api/docs/version');
    expect(v.body).to.include({ version: '3.7.0', released_at: '2026-06-15' });
    expect(v.body).to.include.keys('changelog_url', 'llms_txt_url', 'agent_instructions_url', 'ai_context_url', 'docs_content_url', 'highlights');
    expect(v.body.highlights).to.be.an('array').with.length.above(0);
  });

  it('answers 404 route_not_found for unknown paths and 405 with Allow for a wrong method', async () => {
    const nf = await svc.req('GET', '/api/nothing-here');
    expect(nf.status).to.equal(404);
    expect(nf.body).to.include({ detail: 'Not Found', code: 'route_not_found' });
    const na = await svc.req('DELETE', '/api/protocol/tiers');
    expect(na.status).to.equal(405);
    expect(na.headers.allow).to.contain('GET');
    expect(na.body.code).to.equal('method_not_allowed');
  });

  it('echoes or assigns a request id', async () => {
    const given = await svc.req('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers['x-request-id']).to.equal('trace-123');
    const assigned = await svc.req('GET', '/health');
    expect(assigned.headers['x-request-id']).to.match(/^req_/);
  });
});

describe('api: heap report after the start-up catch-up', () => {
  it('given a heap under 60% of its limit, then the start logs the figures and no warning', () => {
    const r = heapReport({ used_heap_size: 500e6, heap_size_limit: 4000e6 });
    expect(r.fields).to.deep.equal({ heap_used_mb: 500, heap_limit_mb: 4000 });
    expect(r.warning).to.equal(null);
  });

  it('given a heap at 60% of its limit or more, then the warning says how much and how to make room', () => {
    expect(heapReport({ used_heap_size: 2399e6, heap_size_limit: 4000e6 }).warning).to.equal(null);
    const r = heapReport({ used_heap_size: 2600e6, heap_size_limit: 4000e6 });
    expect(r.warning).to.match(/65% of the 4000 MB limit/);
    expect(r.warning).to.match(/--max-old-space-size/);
    expect(r.warning).to.match(/MONGODB_URL/);
  });
});

describe('api: configuration', () => {
  it('refuses bad values naming the variable', async () => {
    const { loadConfig } = await import('../../api/config.ts');
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(/PORT/);
    expect(() => loadConfig({ RATE_LIMIT_SCALE: '-1' })).to.throw(/RATE_LIMIT_SCALE/);
    expect(() => loadConfig({ MONGODB_URL: 'http://x' })).to.throw(/MONGODB_URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).to.throw(/LOG_LEVEL/);
    expect(() => loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'yes' })).to.throw(/WEBHOOK_ALLOW_LOOPBACK/);
    expect(() => loadConfig({ SQLITE_CHECKPOINT_INTERVAL_MS: '-5' })).to.throw(/SQLITE_CHECKPOINT_INTERVAL_MS/);
    expect(() => loadConfig({ SQLITE_CHECKPOINT_INTERVAL_MS: '60001' })).to.throw(/SQLITE_CHECKPOINT_INTERVAL_MS/);
    expect(loadConfig({}).sqliteCheckpointIntervalMs).to.equal(10);
    expect(loadConfig({ SQLITE_CHECKPOINT_INTERVAL_MS: '0' }).sqliteCheckpointIntervalMs).to.equal(0);
    expect(loadConfig({}).port).to.equal(8080);
    expect(() => loadConfig({ READ_MODEL_SNAPSHOTS: 'sometimes' })).to.throw(/READ_MODEL_SNAPSHOTS/);
    expect(loadConfig({}).readModelSnapshots).to.equal(true);
    expect(loadConfig({ READ_MODEL_SNAPSHOTS: '0' }).readModelSnapshots).to.equal(false);
    expect(loadConfig({ READ_MODEL_SNAPSHOTS: 'true' }).readModelSnapshots).to.equal(true);
    expect(() => loadConfig({ READ_MODEL_SNAPSHOT_AFTER_EVENTS: '-1' })).to.throw(/READ_MODEL_SNAPSHOT_AFTER_EVENTS/);
    expect(loadConfig({}).readModelSnapshotAfterEvents).to.equal(100_000);
    expect(loadConfig({ READ_MODEL_SNAPSHOT_AFTER_EVENTS: '0' }).readModelSnapshotAfterEvents).to.equal(0);
    expect(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: '' }).webhookAllowLoopback).to.equal(false);
  });
});
