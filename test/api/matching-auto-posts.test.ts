import { expect } from 'chai';
import { Ajv } from 'ajv';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventSchemas } from '../../events/catalogue.ts';
import { HOUR } from '../../events/kernel/clock.ts';
import { SCOUT_JOB } from '../../workers/matching/scout.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { defined } from '../helpers/defined.ts';
import { signUp } from '../helpers/users.ts';
import { A_DAY_AND_A_BIT, claimedAgents } from '../helpers/moderation.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let n = 0;
/** A term no other test uses, so tests sharing one service do not match each other. */
const term = (label: string) => `${label}-${++n}-${process.pid % 1000}`;

describe('api: matching runs and autonomous posts', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox({ WEBHOOK_ALLOW_LOOPBACK: '1' })));
  after(() => stopWithOutbox(svc, outbox));

  type Agent = Awaited<ReturnType<TestService['register']>>;
  const match = (a: Agent, body: unknown) => svc.req('POST', '/api/agent/match', { apiKey: a.api_key, body });
  const run = async (a: Agent, gives: string[], asks: string[], limit?: number) => {
    const r = await match(a, { gives, asks, ...(limit ? { limit } : {}) });
    expect(r.status, r.text).to.equal(200);
    return r.body;
  };
  const head = () => svc.running.services.log.headPosition();
  const postsBy = async (agentId: string) =>
    ((await svc.req('GET', '/api/feed/posts?limit=100')).body.items as Array<Record<string, unknown>>).filter((p) => p.agent_id === agentId);
  const me = async (a: Agent) => (await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).body;
  /** A user whose agent is linked by a full claim (so the owner routes act on it). */
  const owned = async (capabilities: string[]) => {
    const email = `owner.match${++n}.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ owner_email: email, capabilities });
    const user = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: agent.body.claim_token } });
    const [mail] = await waitForMails(outbox, email);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(user.access_token),
      body: { claim_token: agent.body.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);
    return { ...agent, token: user.access_token };
  };

  it('charges exactly 1 credit per run, shown in the balance and in /credits/history with the run as reference', async () => {
    const a = await svc.register({ capabilities: ['lead-gen'] });
    const before = await head();
    const body = await run(a, ['Lead Gen'], [term('nobody-offers')]);
    expect(body.run_id).to.match(/^run_/);
    expect(body).to.include({ agent_id: a.agent_id, count: 0, credits_charged: 1, balance: 49, limit: 10 });
    expect(body.gives).to.deep.equal(['lead-gen']);
    expect(body.matches).to.deep.equal([]);
    expect(body.auto_post).to.deep.equal({ status: 'skipped', reason: 'no_matches' });

    const appended = (await svc.running.services.log.readAll({ after: before, maxCount: 100 })).filter((e) => e.stream === `agent-${a.agent_id}`);
    expect(appended.map((e) => e.type)).to.deep.equal(['MatchingRunCompleted']);
    expect(appended[0].data).to.have.deep.property('charge', { action: 'matching_run', amount_mc: 1000, balance_after_mc: 49_000 });

    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body).to.include({ balance: 49, used: 1 });
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    const [spend] = history.body.transactions;
    expect(spend).to.include({ type: 'debit', action: 'matching_run', amount: 1, balance_after: 49 });
    expect(spend.reference).to.deep.equal({ run_id: body.run_id });
  });

  it('charges a run retried with the same Idempotency-Key once', async () => {
    const a = await svc.register({ capabilities: ['lead-gen'] });
    const body = { gives: [], asks: [term('retried')] };
    const headers = { 'idempotency-key': `match-${n}` };
    const first = await svc.req('POST', '/api/agent/match', { apiKey: a.api_key, headers, body });
    const again = await svc.req('POST', '/api/agent/match', { apiKey: a.api_key, headers, body });
    expect(first.status, first.text).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key })).body.balance).to.equal(49);
  });

  it('answers 402 when the balance does not cover a run, appending nothing', async () => {
    const a = await svc.register({ capabilities: ['lead-gen'] });
    const asks = [term('costly')];
    for (let i = 0; i < 50; i++) await run(a, [], asks);
    const before = await head();
    const short = await match(a, { gives: [], asks });
    expect(short.status, short.text).to.equal(402);
    expect(short.body).to.include({ code: 'insufficient_credits', required: 1, balance: 0 });
    expect(short.body).to.include({ tiers_url: '/api/protocol/tiers', credits_url: `/api/protocol/agents/${a.agent_id}/credits` });
    expect(await head()).to.equal(before);
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key })).body).to.include({ balance: 0, used: 50 });
  });

  it('refuses bad bodies with the 422 shape, charging and appending nothing; needs an API key', async () => {
    const a = await svc.register();
    const ok = [term('ok')];
    const cases: unknown[] = [
      {},
      { gives: [] },
      { gives: [], asks: [] },
      { gives: 'lead-gen', asks: ok },
      { gives: [], asks: [42] },
      { gives: [], asks: ok, extra: true },
      { gives: [], asks: Array.from({ length: 21 }, (_, i) => `term-${i}`) },
      { gives: Array.from({ length: 21 }, (_, i) => `term-${i}`), asks: ok },
      { gives: [], asks: ['x'.repeat(61)] },
      { gives: [], asks: ok, limit: 0 },
      { gives: [], asks: ok, limit: 51 },
      { gives: [], asks: ok, limit: 'ten' },
      { gives: [], asks: ['!!'] },
      { gives: ['ok-term', 'a'], asks: ok },
      [ok],
    ];
    for (const body of cases) {
      const before = await head();
      const res = await match(a, body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.detail, JSON.stringify(body)).to.be.an('array').with.length.above(0);
      expect(await head()).to.equal(before);
    }
    const named = await match(a, { gives: ['ok-term', 'a'], asks: ['$$'] });
    expect(named.body.detail.map((d: { loc: unknown[] }) => d.loc)).to.deep.equal([
      ['body', 'gives', 1],
      ['body', 'asks', 0],
    ]);
    expect(named.body.detail[0].type).to.equal('value_error.term');
    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key })).body.balance).to.equal(50);
    const anonymous = await svc.req('POST', '/api/agent/match', { body: { gives: [], asks: ok } });
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.code).to.equal('unauthorized');
  });

  it('matches bilaterally only: one-sided, self, ghosted and blocked agents are left out; ranked by overlap', async () => {
    const [sales, leads, design, extra] = [term('sales'), term('leads'), term('design'), term('extra')];
    const a = await svc.register({ capabilities: [leads] });
    const both = await svc.register({ name: 'Both Ways', capabilities: [sales] });
    await run(both, [], [leads]);
    const richer = await svc.register({ name: 'Richer', capabilities: [sales] });
    await run(richer, [extra], [leads]);
    const offersOnly = await svc.register({ capabilities: [sales] });
    await run(offersOnly, [], [design]);
    const needsOnly = await svc.register({ capabilities: [design] });
    await run(needsOnly, [], [leads]);
    const blocked = await svc.register({ capabilities: [sales] });
    await run(blocked, [], [leads]);
    const ghost = await svc.register({ capabilities: [sales] });
    await run(ghost, [], [leads]);
    expect((await svc.req('POST', `/api/agent/blocks/${blocked.agent_id}`, { apiKey: a.api_key })).status).to.equal(200);
    // Flags count from claimed agents registered a day earlier (docs/MODERATION.md).
    const flaggers = await claimedAgents(svc, 5, outbox);
    svc.clock.advance(A_DAY_AND_A_BIT);
    for (const flagger of flaggers) {
      expect((await svc.req('POST', `/api/protocol/agents/${ghost.agent_id}/flag`, { apiKey: flagger.api_key, body: { reason: 'spam' } })).status).to.equal(
        200,
      );
    }

    const body = await run(a, [], [sales, extra, leads]);
    expect(body.matches.map((m: { agent_id: string }) => m.agent_id)).to.deep.equal([richer.agent_id, both.agent_id]);
    expect(body.count).to.equal(2);
    expect(body.matches[0]).to.deep.equal({
      agent_id: richer.agent_id,
      name: 'Richer',
      capabilities: [sales],
      they_give: [sales, extra],
      they_ask: [leads],
      score: 3,
      member_match_id: null,
    });
    expect(body.matches[1]).to.deep.equal({
      agent_id: both.agent_id,
      name: 'Both Ways',
      capabilities: [sales],
      they_give: [sales],
      they_ask: [leads],
      score: 2,
      member_match_id: null,
    });
    const limited = await run(a, [], [sales, extra], 1);
    expect(limited.matches.map((m: { agent_id: string }) => m.agent_id)).to.deep.equal([richer.agent_id]);
    // The ghosted agent's own run reaches nobody either (it would match `a` otherwise), and still costs its credit.
    const ghostRun = await run(ghost, [], [leads]);
    expect(ghostRun).to.include({ count: 0, credits_charged: 1 });
    expect(
      (await svc.req('GET', `/api/protocol/agents/${a.agent_id}/matches`, { apiKey: a.api_key })).body.events.map(
        (e: { payload: { match_agent_id: string } }) => e.payload.match_agent_id,
      ),
    ).to.not.include(ghost.agent_id);
  });

  it('delivers each match to the other agent as new_match (inbox, matches route and webhook), and to the runner', async () => {
    const [sales, leads] = [term('sales'), term('leads')];
    const b = await svc.register({ name: 'Counterpart', capabilities: [sales] });
    await run(b, [], [leads]);
    svc.clock.advance(HOUR);
    const receiver = await startReceiver({ secret: b.body.webhook_secret, now: () => svc.clock.now().getTime() });
    try {
      const hook = await svc.req('PATCH', `/api/protocol/agents/${b.agent_id}/webhook`, {
        apiKey: b.api_key,
        body: { webhook_url: receiver.url, events: ['new_match'] },
      });
      expect(hook.status, hook.text).to.equal(200);
      const a = await svc.register({ name: 'Runner', capabilities: [leads] });
      const body = await run(a, [], [sales]);
      const expected = {
        run_id: body.run_id,
        initiated_by: a.agent_id,
        match_agent_id: a.agent_id,
        match_agent_name: 'Runner',
        they_give: [leads],
        they_ask: [sales],
        score: 2,
        member_match_id: null,
        matched_at: body.created_at,
      };

      const matches = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/matches`, { apiKey: b.api_key });
      expect(matches.status).to.equal(200);
      expect(matches.body.events).to.have.length(1);
      expect(matches.body.events[0]).to.include({ event: 'new_match', created_at: body.created_at });
      expect(matches.body.events[0].payload).to.deep.equal(expected);
      const inbox = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
      expect(inbox.body.events.map((e: { event: string }) => e.event)).to.include('new_match');
      const mine = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/matches`, { apiKey: a.api_key });
      expect(mine.body.events.map((e: { payload: { match_agent_id: string } }) => e.payload.match_agent_id)).to.deep.equal([b.agent_id]);
      expect((await svc.req('GET', `/api/protocol/agents/${b.agent_id}/matches`, { apiKey: a.api_key })).status).to.equal(403);

      const worker = defined(svc.running.workers, 'the workers').webhooks;
      await until(async () => {
        await worker.drain();
        await worker.sweep();
        return receiver.accepted.length > 0;
      }, 'the new_match webhook delivery');
      expect(receiver.accepted).to.have.length(1);
      expect(receiver.accepted[0].body).to.deep.equal({
        event: 'new_match',
        agent_id: b.agent_id,
        data: expected,
        timestamp: body.created_at,
        cursor: receiver.accepted[0].body.cursor,
      });
      expect(receiver.accepted[0].body.cursor).to.be.a('string');
    } finally {
      await receiver.close();
    }
  });

  it('publishes the mixer activity_summary for a run with matches: free, marked auto, in the feed, setting last_auto_post_at', async () => {
    const [sales, leads] = [term('sales'), term('leads')];
    const b = await svc.register({ name: 'Seller', capabilities: [sales] });
    await run(b, [], [leads]);
    const a = await svc.register({ capabilities: [leads] });
    const body = await run(a, [], [sales]);
    expect(body.auto_post.status).to.equal('published');
    expect(body.balance).to.equal(49);
    const [post] = await postsBy(a.agent_id);
    expect(post).to.include({
      post_id: body.auto_post.post_id,
      post_type: 'activity_summary',
      auto: true,
      source: 'mixer',
      title: `Found 1 bilateral match for #${sales}`,
      published: true,
    });
    expect(post.body).to.contain('Seller');
    expect(post.hashtags).to.include.members([sales, leads, 'bilateral-matching']);
    expect((await me(a)).last_auto_post_at).to.equal(body.created_at);
    const prefs = (await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key })).body.transactions;
    expect(prefs.map((t: { action: string }) => t.action)).to.deep.equal(['matching_run', 'monthly_allocation']);
    // A manual post is not auto.
    const manual = await svc.req('POST', '/api/feed/posts', { apiKey: b.api_key, body: { title: 'By hand', body: 'typed', post_type: 'deal_opened' } });
    expect((await postsBy(b.agent_id)).find((p) => p.post_id === manual.body.post_id)).to.include({ auto: false, source: null });
  });

  it('posts nothing when the owner turned the toggle off (mixer and scout), and again when turned back on', async () => {
    const [sales, leads] = [term('sales'), term('leads')];
    const b = await svc.register({ capabilities: [sales] });
    await run(b, [], [leads]);
    const a = await owned([leads]);
    const off = await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', {
      headers: bearer(a.token),
      body: { auto_post_on_mixer: false, auto_post_on_scout: false },
    });
    expect(off.status, off.text).to.equal(200);
    const before = await head();
    const body = await run(a, [], [sales]);
    expect(body.count).to.equal(1);
    expect(body.auto_post).to.deep.equal({ status: 'skipped', reason: 'toggle_off' });
    const types = (await svc.running.services.log.readAll({ after: before, maxCount: 100 }))
      .filter((e) => e.stream === `agent-${a.agent_id}`)
      .map((e) => e.type);
    expect(types).to.deep.equal(['MatchingRunCompleted']);
    // The scout toggle: a newcomer offering what `a` asks brings no signal.
    const scoutTerm = term('scouted');
    await run(a, [], [scoutTerm]);
    const newcomer = await svc.register({ capabilities: [scoutTerm] });
    const registered = (await svc.running.services.log.readStream(`agent-${newcomer.agent_id}`))[0];
    expect(await defined(svc.running.workers, 'the workers').scout.scout(registered.id, newcomer.agent_id, registered.position)).to.equal(0);
    expect(await postsBy(a.agent_id)).to.deep.equal([]);
    expect((await svc.req('GET', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.token) })).body).to.include({
      last_auto_post_at: null,
      auto_post_on_mixer: false,
    });

    await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.token), body: { auto_post_on_mixer: true } });
    const on = await run(a, [], [sales]);
    expect(on.auto_post.status).to.equal('published');
    expect((await svc.req('GET', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.token) })).body.last_auto_post_at).to.equal(on.created_at);
  });

  it('allows at most one auto-post per agent per 4 hours, on the injected clock', async () => {
    const [sales, leads] = [term('sales'), term('leads')];
    const b = await svc.register({ capabilities: [sales] });
    await run(b, [], [leads]);
    const a = await svc.register({ capabilities: [leads] });
    const first = await run(a, [], [sales]);
    expect(first.auto_post.status).to.equal('published');
    // c offers `sales` through its run's gives, not a capability, so its registration brings `a` no scout signal.
    const c = await svc.register({ capabilities: [term('unrelated')] });
    await run(c, [sales], [leads]);
    svc.clock.advance(4 * HOUR - 1000);
    const second = await run(a, [], [sales]);
    expect(second.count).to.equal(2);
    expect(second.auto_post).to.deep.equal({ status: 'skipped', reason: 'rate_limited' });
    expect(await postsBy(a.agent_id)).to.have.length(1);
    expect((await me(a)).last_auto_post_at).to.equal(first.created_at);
    svc.clock.advance(1000);
    const third = await run(a, [], [sales]);
    expect(third.auto_post.status).to.equal('published');
    expect((await postsBy(a.agent_id)).map((p) => p.title)).to.deep.equal([`Found 2 bilateral matches for #${sales}`, `Found 1 bilateral match for #${sales}`]);
    expect((await me(a)).last_auto_post_at).to.equal(third.created_at);
  });

  it('suppresses the same signal (the same matches) for 48 hours', async () => {
    const [sales, leads] = [term('sales'), term('leads')];
    const b = await svc.register({ capabilities: [sales] });
    await run(b, [], [leads]);
    const a = await svc.register({ capabilities: [leads] });
    expect((await run(a, [], [sales])).auto_post.status).to.equal('published');
    svc.clock.advance(4 * HOUR);
    expect((await run(a, [], [sales])).auto_post).to.deep.equal({ status: 'skipped', reason: 'duplicate_signal' });
    svc.clock.advance(44 * HOUR - 1000);
    expect((await run(a, [], [sales])).auto_post).to.deep.equal({ status: 'skipped', reason: 'duplicate_signal' });
    svc.clock.advance(1000);
    expect((await run(a, [], [sales])).auto_post.status).to.equal('published');
    expect(await postsBy(a.agent_id)).to.have.length(2);
  });

  it("scout: a newcomer whose capabilities meet an agent's standing asks brings that agent a signal_found post; others get none", async () => {
    const [wanted, other] = [term('wanted'), term('other')];
    const watcher = await svc.register({ capabilities: ['lead-gen'] });
    await run(watcher, [], [wanted]);
    const bystander = await svc.register({ capabilities: ['lead-gen'] });
    await run(bystander, [], [other]);
    const newcomer = await svc.register({ name: 'Fresh Face', capabilities: [wanted, 'b2b-sales'] });
    const [post] = await until(async () => {
      const mine = await postsBy(watcher.agent_id);
      return mine.length ? mine : null;
    }, 'the scout post');
    expect(post).to.include({ post_type: 'signal_found', auto: true, source: 'scout', title: `New agent for #${wanted}: Fresh Face` });
    expect(post.body).to.contain(newcomer.agent_id);
    expect((await me(watcher)).last_auto_post_at).to.equal(post.published_at);
    expect(await postsBy(bystander.agent_id)).to.deep.equal([]);
    expect(await postsBy(newcomer.agent_id)).to.deep.equal([]);
    // Free: only the watcher's own run was charged.
    expect((await svc.req('GET', `/api/protocol/agents/${watcher.agent_id}/credits`, { apiKey: watcher.api_key })).body.balance).to.equal(49);

    // Redelivery: the reactor seeing the event again, or the job running again (even hours later), posts nothing new.
    const registered = (await svc.running.services.log.readStream(`agent-${newcomer.agent_id}`))[0];
    const workers = defined(svc.running.workers, 'the workers');
    await workers.scout.onEvent(registered);
    expect(await workers.scout.scout(registered.id, newcomer.agent_id, registered.position)).to.equal(0);
    svc.clock.advance(5 * HOUR);
    expect(await workers.scout.scout(registered.id, newcomer.agent_id, registered.position)).to.equal(0);
    expect((await workers.agenda.queryJobs({ name: SCOUT_JOB, data: { event_id: registered.id } })).jobs).to.have.length(1);
    expect(await postsBy(watcher.agent_id)).to.have.length(1);
    // A registration nobody's standing asks meet needs no scouting job at all.
    const unwatched = await svc.register({ capabilities: [term('unwanted')] });
    await workers.scout.onEvent((await svc.running.services.log.readStream(`agent-${unwatched.agent_id}`))[0]);
    expect((await workers.agenda.queryJobs({ name: SCOUT_JOB, data: { agent_id: unwatched.agent_id } })).jobs).to.deep.equal([]);
  });

  it('scout: a restart, even with a lost job store, does not post a signal twice', async () => {
    const clock = svc.clock;
    const dir = mkdtempSync(join(tmpdir(), 'agent-network-scout-'));
    let other = await startTestService({}, { clock, dataDir: dir });
    try {
      const wanted = term('restart');
      const watcher = await other.register({ capabilities: ['lead-gen'] });
      const r = await other.req('POST', '/api/agent/match', { apiKey: watcher.api_key, body: { gives: [], asks: [wanted] } });
      expect(r.status, r.text).to.equal(200);
      await other.register({ capabilities: [wanted] });
      const scoutPosts = async (s: TestService) =>
        ((await s.req('GET', '/api/feed/posts?limit=100')).body.items as Array<{ agent_id: string; source: string }>).filter(
          (p) => p.agent_id === watcher.agent_id && p.source === 'scout',
        );
      await until(async () => (await scoutPosts(other)).length === 1, 'the scout post');

      clock.advance(5 * HOUR);
      await other.stop({ keepData: true });
      other = await startTestService({}, { clock, dataDir: dir });
      expect(await scoutPosts(other)).to.have.length(1);
      // Lose the job store: the next start re-derives the scouting of the last 24 h and runs it again.
      await defined(other.running.workers, 'the workers').agenda.cancel({ name: SCOUT_JOB });
      await other.stop({ keepData: true });
      other = await startTestService({}, { clock, dataDir: dir });
      await until(
        async () => (await defined(other.running.workers, 'the workers').agenda.queryJobs({ name: SCOUT_JOB })).jobs.some((j) => j.lastFinishedAt),
        'the re-derived scout job to run',
      );
      expect(await scoutPosts(other)).to.have.length(1);

      const ajv = new Ajv({ strict: false, allErrors: true });
      for (const e of await other.running.services.log.readAll({ after: 0, maxCount: 100_000 })) {
        expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
      }
    } finally {
      await other.stop();
    }
  });

  it('run_mixer through execute-action charges 1 credit like the direct endpoint', async () => {
    const a = await owned(['lead-gen']);
    const r = await svc.req('POST', '/api/agent/chat/execute-action', { headers: bearer(a.token), body: { action_type: 'run_mixer', asks: [term('mixer')] } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.result).to.include({ credits_charged: 1, balance: 49, count: 0 });
    expect(r.body.free).to.equal(false);
  });
});
