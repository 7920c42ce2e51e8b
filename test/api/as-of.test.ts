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
    ok(await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'Now finding investors too.' } }));
    await record();
    ok(await svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: 'lead-gen' } }));
    await record();
    ok(await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'As of', body: 'a charged post', post_type: 'signal_found' } }));
    await record();
    ok(await svc.req('POST', `/api/agent/bonds/${b.agent_id}`, { apiKey: a.api_key }));
    await record();
    ok(await svc.req('POST', `/api/agent/bonds/${a.agent_id}/accept`, { apiKey: b.api_key }));
    await record();
    ok(await svc.req('POST', `/api/agent/endorse/${a.agent_id}`, { apiKey: b.api_key, body: { capability: 'b2b-sales' } }));
    await record();
    ok(await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { description: 'Back to leads.' } }));
    await record();
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
    expect(new Set(recorded.map((r) => r.answers.bond.status))).to.deep.equal(new Set([404, 200]));
    expect(new Set(recorded.map((r) => JSON.stringify(r.answers.credits.body))).size).to.be.at.least(2);
    for (const step of recorded) {
      svc.clock.set(step.at); // fields computed from the clock are those of the recording
      for (const [name, r] of Object.entries(reads())) {
        const asOf = await svc.req('GET', `${r.path}?as_of=${step.position}`, { apiKey: r.key });
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
      const asOf = await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=${encodeURIComponent(step.at)}`);
      same(asOf, step.answers.profile, `profile at ${step.at}`);
    }
  });

  it('refuses a position past the head and a value that is neither (422)', async () => {
    const head = await svc.running.services.log.headPosition();
    const past = await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=${head + 1}`);
    expect(past.status).to.equal(422);
    expect(past.body.code).to.equal('validation_failed');
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}?as_of=yesterday`)).status).to.equal(422);
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

  it('answers each recorded state of the contract at its position, and 404 before the contract existed', async function () {
    this.timeout(120_000);
    const requester = { ...(await svc.register()), token: '' };
    const provider = { ...(await svc.register()), token: '' };
    const before = (await svc.req('GET', '/api/health')).body.projection_position as number;
    const id = await openContract(svc, 'api_key', requester, provider);
    const path = `/api/agent/contracts/${id}`;
    const steps: Array<{ position: number; answer: TestResponse }> = [];
    const record = async () => {
      const position = (await svc.req('GET', '/api/health')).body.projection_position as number;
      steps.push({ position, answer: await svc.req('GET', path, { apiKey: requester.api_key }) });
    };
    await record();
    for (const verb of ['accept', 'start', 'deliver']) {
      await move(svc, 'api_key', provider, id, verb);
      await record();
    }
    expect(steps.map((st) => st.answer.body.state)).to.deep.equal(['open', 'accepted', 'in_progress', 'delivered']);
    for (const step of steps) {
      const asOf = await svc.req('GET', `${path}?as_of=${step.position}`, { apiKey: requester.api_key });
      expect(asOf.status, asOf.text).to.equal(200);
      expect(asOf.body).to.deep.equal(step.answer.body);
      expect(asOf.headers['x-as-of-position']).to.equal(String(step.position));
    }
    const earlier = await svc.req('GET', `${path}?as_of=${before}`, { apiKey: requester.api_key });
    expect(earlier.status).to.equal(404);
    // A third party gets no past state either.
    const stranger = await svc.register();
    expect((await svc.req('GET', `${path}?as_of=${steps[0].position}`, { apiKey: stranger.api_key })).status).to.equal(403);
  });
});
