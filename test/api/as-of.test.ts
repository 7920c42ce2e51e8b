import { expect } from 'chai';
import { move, openContract } from './marketplace-helpers.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

describe('as-of reads (?as_of=<position or ISO time>)', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  let b: { agent_id: string; api_key: string };
  /** After each step: the position, the clock, and the live answer of every as-of read. */
  const recorded: Array<{ position: number; at: string; answers: Record<string, TestResponse> }> = [];

  const reads = () => ({
    profile: { path: `/api/protocol/agents/${a.agent_id}`, key: undefined },
    stamps: { path: `/api/protocol/agents/${a.agent_id}/trust-stamps`, key: undefined },
    bond: { path: `/api/agent/bonds/${b.agent_id}`, key: a.api_key },
    credits: { path: `/api/protocol/agents/${a.agent_id}/credits`, key: a.api_key },
  });

  const record = async () => {
    const position = (await svc.req('GET', '/api/health')).body.projection_position as number;
    expect(await svc.running.services.log.headPosition()).to.equal(position);
    const answers: Record<string, TestResponse> = {};
    for (const [name, r] of Object.entries(reads())) answers[name] = await svc.req('GET', r.path, { apiKey: r.key });
    recorded.push({ position, at: svc.clock.now().toISOString(), answers });
    svc.clock.advance(60_000);
  };

  const ok = (r: TestResponse) => expect(r.status, r.text).to.equal(200);

  before(async function () {
    this.timeout(300_000);
    // No workers: nothing appends between a step and its recording.
    svc = await startTestService({}, { workers: false });
    a = await svc.register({ capabilities: ['lead-gen', 'b2b-sales'] });
    b = await svc.register({ capabilities: ['b2b-sales'] });
    await record();
    // Each step changes at least one of the four reads; the position after it is recorded.
    const steps: Array<() => Promise<TestResponse>> = [
      () => svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'Now finding investors too.' } }),
      () => svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: 'lead-gen' } }),
      () => svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'As of', body: 'a charged post', post_type: 'signal_found' } }),
      () => svc.req('POST', `/api/agent/bonds/${b.agent_id}`, { apiKey: a.api_key }),
      () => svc.req('POST', `/api/agent/bonds/${a.agent_id}/decline`, { apiKey: b.api_key }),
      () => svc.req('POST', `/api/protocol/agents/${a.agent_id}/follow`, { apiKey: b.api_key }),
      () => svc.req('POST', `/api/agent/bonds/${a.agent_id}`, { apiKey: b.api_key }),
      () => svc.req('POST', `/api/agent/bonds/${b.agent_id}/accept`, { apiKey: a.api_key }),
      () => svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: 'b2b-sales' } }),
      async () => {
        // A third endorser, registered in the middle of the history.
        const c = await svc.register({ capabilities: ['lead-gen'] });
        return svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: c.api_key, body: { capability: 'b2b-sales' } });
      },
      async () => {
        svc.clock.advance(2 * 60 * 60_000); // past the DM lock of an unclaimed agent
        return svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message: 'as of' } });
      },
      () => svc.req('DELETE', `/api/agent/bonds/${b.agent_id}`, { apiKey: a.api_key }),
      () => svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'Back to leads.' } }),
      () => svc.req('DELETE', `/api/protocol/agents/${a.agent_id}/follow`, { apiKey: b.api_key }),
      () => svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'As of again', body: 'another charged post', post_type: 'signal_found' } }),
    ];
    for (const step of steps) {
      ok(await step());
      await record();
    }
  });
  after(async () => svc?.stop());

  const same = (asOf: TestResponse, live: TestResponse, label: string) => {
    expect(asOf.status, `${label}: ${asOf.text}`).to.equal(live.status);
    if (live.status === 200) expect(asOf.body, label).to.deep.equal(live.body);
    else expect(asOf.body.code, label).to.equal(live.body.code);
  };

  it('answers every read as the live read answered at the same position, at every recorded position', async function () {
    this.timeout(120_000);
    // The answers differ between positions (otherwise this proves nothing).
    expect(new Set(recorded.map((r) => JSON.stringify(r.answers.profile.body))).size).to.be.at.least(3);
    expect(recorded).to.have.length(16);
    expect(new Set(recorded.map((r) => r.answers.bond.status))).to.deep.equal(new Set([404, 200]));
    expect(new Set(recorded.filter((r) => r.answers.bond.status === 200).map((r) => r.answers.bond.body.status))).to.include.members([
      'outgoing',
      'incoming',
      'declined',
      'active',
      'removed',
    ]);
    expect(new Set(recorded.map((r) => JSON.stringify(r.answers.stamps.body))).size).to.be.at.least(4);
    expect(new Set(recorded.map((r) => JSON.stringify(r.answers.credits.body))).size).to.be.at.least(4);
    for (const step of recorded) {
      svc.clock.set(step.at); // fields computed from the clock are those of the recording
      for (const [name, r] of Object.entries(reads())) {
        // as_of needs a caller: the public reads are asked with a's key (their answers do not depend on it).
        const asOf = await svc.req('GET', `${r.path}?as_of=${step.position}`, { apiKey: r.key ?? a.api_key });
        same(asOf, step.answers[name], `${name} at ${step.position}`);
        expect(asOf.headers['x-as-of-position']).to.equal(String(step.position));
      }
    }
  });

  it('takes an ISO time: the state after the last event that occurred at or before it', async function () {
    this.timeout(120_000);
    for (const step of recorded.slice(1)) {
      svc.clock.set(step.at);
      // Each step's events occurred at its clock, one minute after the previous recording.
      const asOf = await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=${encodeURIComponent(step.at)}`, { apiKey: b.api_key });
      same(asOf, step.answers.profile, `profile at ${step.at}`);
    }
  });

  it('refuses a position past the head and a value that is neither (422)', async () => {
    const head = await svc.running.services.log.headPosition();
    const past = await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=${head + 1}`, { apiKey: a.api_key });
    expect(past.status).to.equal(422);
    expect(past.body.code).to.equal('validation_failed');
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=yesterday`, { apiKey: a.api_key })).status).to.equal(422);
  });
});

describe('as-of reads of a contract (?as_of on GET /api/agent/contracts/{id})', () => {
  let svc: TestService;
  before(async function () {
    this.timeout(300_000);
    // No workers: nothing appends between a step and its recording.
    svc = await startTestService({}, { workers: false });
  });
  after(async () => svc?.stop());

  it('answers each recorded state of two contracts (one completed, one disputed) at its position, to both parties, and 404 before the contract existed', async function () {
    this.timeout(120_000);
    const requester = { ...(await svc.register()), token: '' };
    const provider = { ...(await svc.register()), token: '' };
    const before = (await svc.req('GET', '/api/health')).body.projection_position as number;
    const run = async (moves: Array<[typeof requester, string, Record<string, unknown>]>) => {
      const id = await openContract(svc, 'api_key', requester, provider);
      const path = `/api/agent/contracts/${id}`;
      const steps: Array<{ position: number; answers: TestResponse[] }> = [];
      const record = async () => {
        const position = (await svc.req('GET', '/api/health')).body.projection_position as number;
        const answers = [await svc.req('GET', path, { apiKey: requester.api_key }), await svc.req('GET', path, { apiKey: provider.api_key })];
        steps.push({ position, answers });
        svc.clock.advance(60_000);
      };
      await record();
      for (const [by, verb, body] of moves) {
        await move(svc, 'api_key', by, id, verb, body);
        await record();
      }
      return { path, steps };
    };
    const completed = await run([
      [provider, 'accept', {}],
      [provider, 'start', {}],
      [provider, 'deliver', { note: 'delivered' }],
      [requester, 'complete', { rating: 4, note: 'good' }],
    ]);
    const disputed = await run([
      [provider, 'accept', {}],
      [provider, 'start', {}],
      [requester, 'dispute', { note: 'nothing arrived' }],
    ]);
    expect(completed.steps.map((st) => st.answers[0].body.state)).to.deep.equal(['open', 'accepted', 'in_progress', 'delivered', 'completed']);
    expect(disputed.steps.map((st) => st.answers[0].body.state)).to.deep.equal(['open', 'accepted', 'in_progress', 'disputed']);
    for (const { path, steps } of [completed, disputed]) {
      for (const step of steps) {
        for (const [i, who] of [requester, provider].entries()) {
          const asOf = await svc.req('GET', `${path}?as_of=${step.position}`, { apiKey: who.api_key });
          expect(asOf.status, asOf.text).to.equal(200);
          expect(asOf.body).to.deep.equal(step.answers[i].body);
          expect(asOf.headers['x-as-of-position']).to.equal(String(step.position));
        }
      }
      const earlier = await svc.req('GET', `${path}?as_of=${before}`, { apiKey: requester.api_key });
      expect(earlier.status).to.equal(404);
    }
    // By the second contract's first position the first one was completed: as_of is a position of the whole log.
    const second = await svc.req('GET', `${completed.path}?as_of=${disputed.steps[0].position}`, { apiKey: requester.api_key });
    expect(second.body.state).to.equal('completed');
    // A third party gets no past state either.
    const stranger = await svc.register();
    expect((await svc.req('GET', `${completed.path}?as_of=${completed.steps[0].position}`, { apiKey: stranger.api_key })).status).to.equal(403);
  });
});
