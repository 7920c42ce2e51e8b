import { expect } from 'chai';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { allOperations } from '../../api/app.ts';
import { anonymousAsOfPaths } from '../../api/as-of.ts';

// As-of reads cost a bounded amount whatever the log's length (docs/OPERATIONS.md "As-of reads"):
// the subject's nearest stored version plus at most AS_OF_EVERY of its events; callers are
// authenticated and counted against a budget.

describe('as-of reads: bounded work from stored versions (AS_OF_EVERY=3)', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  let b: { agent_id: string; api_key: string };
  const recorded: Array<{ position: number; at: string; profile: TestResponse; stamps: TestResponse; credits: TestResponse }> = [];
  const EVERY = 3;

  const position = async () => (await svc.req('GET', '/api/health')).body.projection_position as number;
  const reads = () => ({
    profile: `/api/protocol/agents/${a.agent_id}`,
    stamps: `/api/protocol/agents/${a.agent_id}/trust-stamps`,
    credits: `/api/protocol/agents/${a.agent_id}/credits`,
  });
  const record = async () => {
    const r = reads();
    recorded.push({
      position: await position(),
      at: svc.clock.now().toISOString(),
      profile: await svc.req('GET', r.profile),
      stamps: await svc.req('GET', r.stamps),
      credits: await svc.req('GET', r.credits, { apiKey: a.api_key }),
    });
    svc.clock.advance(60_000);
  };
  /** Events naming neither a nor its stampers: they make the log longer, not a's history. */
  const noise = async (others: Array<{ agent_id: string; api_key: string }>, n: number) => {
    for (let i = 0; i < n; i++) {
      const o = others[i % others.length];
      const r = await svc.req('PATCH', '/api/protocol/me', { apiKey: o.api_key, body: { description: `noise ${i}` } });
      expect(r.status, r.text).to.equal(200);
    }
  };

  before(async function () {
    this.timeout(300_000);
    svc = await startTestService({ AS_OF_EVERY: String(EVERY) }, { workers: false });
    a = await svc.register({ capabilities: ['lead-gen', 'b2b-sales'] });
    b = await svc.register({ capabilities: ['b2b-sales'] });
    const others = [await svc.register(), await svc.register()];
    await record();
    for (let i = 0; i < 12; i++) {
      const step =
        i % 4 === 0
          ? await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: `step ${i}` } })
          : i % 4 === 1
            ? await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: `Post ${i}`, body: 'charged', post_type: 'signal_found' } })
            : i % 4 === 2
              ? await svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: i < 6 ? 'lead-gen' : 'b2b-sales' } })
              : await svc.req(i === 3 || i === 11 ? 'POST' : 'DELETE', `/api/protocol/agents/${a.agent_id}/follow`, { apiKey: b.api_key });
      expect(step.status, step.text).to.be.oneOf([200, 201]);
      await noise(others, 3);
      await record();
    }
  });
  after(async () => svc?.stop());

  it('answers as the live read answered at every recorded position, folding at most AS_OF_EVERY events per subject', async function () {
    this.timeout(120_000);
    expect(new Set(recorded.map((r) => JSON.stringify(r.profile.body))).size).to.be.at.least(8);
    const index = svc.running.services.asOf;
    for (const step of recorded) {
      svc.clock.set(step.at);
      const r = reads();
      for (const [name, path] of Object.entries(r)) {
        const asOf = await svc.req('GET', `${path}?as_of=${step.position}`, { apiKey: a.api_key });
        const live = step[name as keyof typeof r];
        expect(asOf.status, `${name} at ${step.position}: ${asOf.text}`).to.equal(live.status);
        expect(asOf.body, `${name} at ${step.position}`).to.deep.equal(live.body);
        // The stamps read names a's stampers too (b): at most EVERY events for each of the two.
        expect(index.stats.lastFolded, `${name} at ${step.position}`).to.be.at.most(name === 'stamps' ? 2 * EVERY : EVERY);
      }
    }
    // Versions were used: the fold from position 0 would have folded a's whole history.
    expect(index.stats.maxFolded).to.be.at.least(1);
  });

  it('folds as many events at the head of a log ten times longer: the work follows the subject, not the log', async function () {
    this.timeout(120_000);
    const index = svc.running.services.asOf;
    const path = `/api/protocol/agents/${a.agent_id}`;
    let hits = index.stats.cacheHits;
    const read = async () => {
      const head = await position();
      const r = await svc.req('GET', `${path}?as_of=${head}`, { apiKey: b.api_key });
      expect(r.status, r.text).to.equal(200);
      expect(index.stats.cacheHits).to.equal(hits); // a position not read before
      hits = index.stats.cacheHits;
      return { head, folded: index.stats.lastFolded };
    };
    await noise([b], 1); // a position not read yet
    const first = await read();
    const others = [await svc.register(), await svc.register(), await svc.register()];
    await noise(others, 10 * first.head);
    const second = await read();
    expect(second.head).to.be.at.least(10 * first.head);
    // a's events since its last version, at most EVERY, at either length (from position 0 it would be all of a's history).
    expect(first.folded).to.be.at.most(EVERY);
    expect(second.folded).to.be.at.most(EVERY);
    expect(index.stats.lastFrom).to.be.above(0);
    // The same position again: the cached state, nothing folded.
    const again = await svc.req('GET', `${path}?as_of=${second.head}`, { apiKey: b.api_key });
    expect(again.status).to.equal(200);
    expect(index.stats.lastFolded, JSON.stringify(index.stats)).to.equal(0);
  });
});

describe('as-of reads: who may ask, and how often', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  before(async function () {
    this.timeout(120_000);
    // Real limits (the test services otherwise scale them by 1000).
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' }, { workers: false });
    a = await svc.register();
  });
  after(async () => svc?.stop());

  it('refuses an anonymous as_of read (401 as_of_requires_auth) before looking at the value; the live public read stays open', async () => {
    for (const path of [`/api/protocol/agents/${a.agent_id}`, `/api/protocol/agents/${a.agent_id}/trust-stamps`]) {
      for (const value of ['1', 'yesterday', '2026-03-10T09:30:00Z']) {
        const r = await svc.req('GET', `${path}?as_of=${encodeURIComponent(value)}`);
        expect(r.status, r.text).to.equal(401);
        expect(r.body.code).to.equal('as_of_requires_auth');
      }
      expect((await svc.req('GET', path)).status).to.equal(200);
    }
  });

  it('refuses an anonymous as_of read on a public read before its query is validated: authorisation first', async () => {
    const c = await svc.register();
    for (const path of [`/api/protocol/agents/${a.agent_id}`, `/api/protocol/agents/${a.agent_id}/trust-stamps`]) {
      // as_of given twice is not a string: the query fails validation, but only once the caller may ask.
      const anonymous = await svc.req('GET', `${path}?as_of=1&as_of=2`);
      expect(anonymous.status, anonymous.text).to.equal(401);
      expect(anonymous.body.code).to.equal('as_of_requires_auth');
      expect(anonymous.headers['www-authenticate']).to.be.a('string');
      expect(anonymous.body.request_id).to.equal(anonymous.headers['x-request-id']);
      const signed = await svc.req('GET', `${path}?as_of=1&as_of=2`, { apiKey: c.api_key });
      expect(signed.status, signed.text).to.equal(422);
    }
    // A bad credential is refused as before (the key is checked first), and HEAD is refused like GET.
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=1`, { apiKey: 'an_bad' })).body.code).to.not.equal('as_of_requires_auth');
    expect((await svc.req('HEAD', `/api/protocol/agents/${a.agent_id}?as_of=1`)).status).to.equal(401);
  });

  it('refuses early only on the paths of the public reads that take as_of: no other GET route matches them', () => {
    const paths = anonymousAsOfPaths(allOperations());
    expect(paths).to.have.length(2); // the profile and the trust stamps
    const others = allOperations().filter(
      (op) =>
        op.method === 'GET' &&
        !(op.auth === 'none' && (op.query as { properties?: object })?.properties && 'as_of' in (op.query as { properties: object }).properties),
    );
    for (const op of others) {
      const sample = op.path.replace(/:\w+/g, 'agt_x');
      expect(
        paths.filter((p) => p.test(sample)),
        `${op.method} ${op.path}`,
      ).to.deep.equal([]);
    }
  });

  it('counts as-of reads against a budget of 30 a minute per caller: then 429 with Retry-After, free again after the window', async () => {
    const b = await svc.register();
    const head = (await svc.req('GET', '/api/health')).body.projection_position as number;
    const path = `/api/protocol/agents/${a.agent_id}?as_of=${head}`;
    for (let i = 0; i < 30; i++) expect((await svc.req('GET', path, { apiKey: a.api_key })).status).to.equal(200);
    const refused = await svc.req('GET', path, { apiKey: a.api_key });
    expect(refused.status).to.equal(429);
    expect(refused.body.code).to.equal('rate_limited');
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);
    // A bad value is counted too (the budget comes first), and another caller has its own budget.
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=yesterday`, { apiKey: a.api_key })).status).to.equal(429);
    expect((await svc.req('GET', path, { apiKey: b.api_key })).status).to.equal(200);
    // Live reads are not counted against it.
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}`, { apiKey: a.api_key })).status).to.equal(200);
    svc.clock.advance(60_000);
    expect((await svc.req('GET', path, { apiKey: a.api_key })).status).to.equal(200);
  });
});

describe('as-of reads: the index is kept across restarts', () => {
  it('reads only the events it lacks after a restart, and answers the same', async function () {
    this.timeout(300_000);
    let svc = await startTestService({}, { workers: false });
    const dataDir = svc.dataDir;
    const a = await svc.register();
    for (let i = 0; i < 20; i++) await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: `before ${i}` } });
    const head = (await svc.req('GET', '/api/health')).body.projection_position as number;
    const path = `/api/protocol/agents/${a.agent_id}?as_of=${head}`;
    const first = await svc.req('GET', path, { apiKey: a.api_key });
    expect(first.status, first.text).to.equal(200);
    expect(svc.running.services.asOf.stats.indexed).to.be.at.least(head - 5);
    await svc.stop({ keepData: true });

    svc = await startTestService({}, { workers: false, dataDir });
    try {
      await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'after' } });
      const again = await svc.req('GET', path, { apiKey: a.api_key });
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
      // The tail since the stop (the PATCH and whatever the start appended), not the whole log again.
      expect(svc.running.services.asOf.stats.indexed)
        .to.be.above(0)
        .and.below(head / 2);
    } finally {
      await svc.stop();
    }
  });
});
