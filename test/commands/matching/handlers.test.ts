import { expect } from 'chai';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { AUTO_POST_WINDOW_MS, publishAutoPost, scoutDraft } from '../../../commands/matching/auto-post.ts';
import { normaliseTerms, rankBilateral, runMatching } from '../../../commands/matching/matching.ts';
import type { MatchingReads, StandingProfile } from '../../../commands/matching/matching.ts';
import type { CommandBus } from '../../../commands/handler.ts';
import type { CommandContext } from '../../../commands/handler.ts';
import { agentStream } from '../../../events/agents.ts';
import { HOUR } from '../../../events/kernel/clock.ts';
import type { ManualClock } from '../../../events/kernel/clock.ts';
import { DomainError, ValidationFailed } from '../../../events/kernel/errors.ts';
import { autoSignalHash } from '../../../events/matching.ts';
import type { SqliteEventLog } from '../../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../../helpers/commands.ts';
import { agentRegistered, autoPostPrefsChanged, monthlyCreditsGranted } from '../agents/fixtures.ts';

const A = 'agt_aaaaaaaaaaaaaaaaaaaa';
const B = 'agt_bbbbbbbbbbbbbbbbbbbb';
const C = 'agt_cccccccccccccccccccc';
const profile = (agentId: string, offers: string[], needs: string[], lastRunAt: string | null = null): StandingProfile => ({
  agent_id: agentId,
  name: agentId,
  capabilities: offers,
  offers,
  needs,
  last_run_at: lastRunAt,
});

describe('commands: matching runs and autonomous posts', () => {
  let dir: string;
  let log: SqliteEventLog;
  let bus: CommandBus;
  let clock: ManualClock;
  let n = 0;
  const ctx = (commandId = `cmd-${++n}`): CommandContext => ({ commandId, actor: null, requestId: null, now: clock.now() });
  const given = async (agentId: string, balance_mc = 50_000, extra: AgentStreamEvent[] = []) => {
    const at = clock.now().toISOString();
    await bus.appendRaw(
      agentStream(agentId),
      [
        agentRegistered({ agent_id: agentId, name: `Agent ${agentId.slice(4, 5)}`, registered_at: at }),
        monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc, cycle_start: at }),
        ...extra,
      ],
      'no_stream',
      ctx(),
    );
  };
  const state = async (agentId: string): Promise<AgentState> => (await bus.load(agentStream(agentId), agentAggregate)).state;
  const types = async (agentId: string) => (await log.readStream(agentStream(agentId))).map((e) => e.type);
  const body = { gives: ['lead-gen'], asks: ['b2b-sales'], limit: 10 };
  /** The read models as a matching run sees them: `candidates` stand in the needs index; nobody blocks anybody. */
  const reads = (candidates: StandingProfile[] = [profile(B, ['b2b-sales'], ['lead-gen'])], over: Partial<MatchingReads> = {}): MatchingReads => ({
    standingProfile: async () => ({ capabilities: [], hidden: false }),
    agentsNeeding: async () => candidates,
    blockedEitherWay: async () => false,
    roomOf: async () => null,
    memberOwnerOf: async () => null,
    ...over,
  });
  /** A run on `body` whose candidates rank to one match per agent id given. */
  const run = (agentIds: string[] = [B], c = ctx()) => runMatching(bus, reads(agentIds.map((id) => profile(id, ['b2b-sales'], ['lead-gen']))), A, body, c);

  beforeEach(() => ({ dir, log, clock, bus } = openCommandBus('matching-commands-')));
  afterEach(() => closeCommandBus(log, dir));

  describe('normaliseTerms', () => {
    it('normalises terms like capability slugs and merges duplicates', () => {
      expect(normaliseTerms(['Lead Gen', 'lead_gen', ' B2B Sales ', 'Café-Bots'], 'asks')).to.deep.equal(['lead-gen', 'b2b-sales', 'cafe-bots']);
    });
    it('refuses a term that does not normalise to 3-40 characters, naming its index', () => {
      try {
        normaliseTerms(['lead-gen', 'ai', '%%%'], 'gives');
        expect.fail('expected a validation error');
      } catch (err) {
        expect(err).to.be.instanceOf(ValidationFailed);
        expect((err as ValidationFailed).errors.map((e) => e.loc)).to.deep.equal([
          ['body', 'gives', 1],
          ['body', 'gives', 2],
        ]);
      }
    });
  });

  describe('rankBilateral', () => {
    const me = { agent_id: A, offers: ['lead-gen', 'design'], asks: ['b2b-sales', 'data'] };
    it('keeps only agents that give what is asked and ask what is offered, never the agent itself', () => {
      const ranked = rankBilateral(me, [
        profile(B, ['b2b-sales'], ['lead-gen']),
        profile(C, ['b2b-sales'], ['legal']),
        profile('agt_dddddddddddddddddddd', ['legal'], ['lead-gen']),
        profile(A, ['b2b-sales'], ['lead-gen']),
      ]);
      expect(ranked).to.deep.equal([{ agent_id: B, name: B, they_give: ['b2b-sales'], they_ask: ['lead-gen'], score: 2 }]);
    });
    it('ranks by overlap, then the more recent standing run, then agent id', () => {
      const ranked = rankBilateral(me, [
        profile('agt_zzzzzzzzzzzzzzzzzzzz', ['b2b-sales'], ['lead-gen'], '2026-03-01T00:00:00.000Z'),
        profile('agt_yyyyyyyyyyyyyyyyyyyy', ['b2b-sales'], ['lead-gen'], '2026-03-02T00:00:00.000Z'),
        profile('agt_xxxxxxxxxxxxxxxxxxxx', ['b2b-sales'], ['lead-gen'], '2026-03-01T00:00:00.000Z'),
        profile(C, ['b2b-sales', 'data'], ['lead-gen', 'design'], null),
      ]);
      expect(ranked.map((m) => [m.agent_id, m.score])).to.deep.equal([
        [C, 4],
        ['agt_yyyyyyyyyyyyyyyyyyyy', 2],
        ['agt_xxxxxxxxxxxxxxxxxxxx', 2],
        ['agt_zzzzzzzzzzzzzzzzzzzz', 2],
      ]);
    });
  });

  describe('runMatching', () => {
    it('given 50 credits, when the agent runs a matching run, then one event carries the run and its 1-credit charge', async () => {
      await given(A);
      const r = await run([]);
      expect(r.run.charge).to.deep.equal({ action: 'matching_run', amount_mc: 1000, balance_after_mc: 49_000 });
      expect(r.run.auto_post).to.deep.equal({ status: 'skipped', reason: 'no_matches' });
      expect(r.post).to.equal(null);
      expect(await types(A)).to.deep.equal(['AgentRegistered', 'MonthlyCreditsGranted', 'MatchingRunCompleted']);
      expect(await state(A)).to.include({ balance_mc: 49_000, used_mc: 1000 });
    });

    it('given 0.9 credits, when the agent runs a matching run, then 402 insufficient_credits and nothing appended', async () => {
      await given(A, 900);
      const head = await log.headPosition();
      try {
        await run();
        expect.fail('expected 402');
      } catch (err) {
        expect(err).to.be.instanceOf(DomainError);
        expect((err as DomainError).status).to.equal(402);
        expect((err as DomainError).code).to.equal('insufficient_credits');
      }
      expect(await log.headPosition()).to.equal(head);
    });

    it('given a run with matches, then the mixer activity summary is appended with it, free and marked auto', async () => {
      await given(A);
      const r = await run([B]);
      expect(r.run.auto_post.status).to.equal('published');
      expect(r.post).to.include({ post_type: 'activity_summary', auto: true, source: 'mixer', agent_id: A });
      expect(r.post).to.not.have.property('charge');
      expect(r.post?.signal_hash).to.equal(autoSignalHash(A, 'mixer', `matches:${B}`));
      expect(await types(A)).to.deep.equal(['AgentRegistered', 'MonthlyCreditsGranted', 'MatchingRunCompleted', 'PostPublished']);
      expect(await state(A)).to.include({ balance_mc: 49_000, last_auto_post_at: clock.now().toISOString() });
    });

    it('given a retried command (same command id), then nothing new is appended or charged and the recorded run is returned', async () => {
      await given(A);
      const c = ctx();
      const first = await run([B], c);
      const again = await run([C], { ...c, now: clock.now() });
      expect(again.duplicate).to.equal(true);
      expect(again.run).to.deep.equal(first.run);
      expect(again.post).to.deep.equal(first.post);
      expect(await types(A)).to.have.length(4);
      expect((await state(A)).balance_mc).to.equal(49_000);
    });
  });

  describe('runMatching: the facts it loads', () => {
    const D = 'agt_dddddddddddddddddddd';
    const candidates = [B, C, D].map((id) => profile(id, ['b2b-sales'], ['lead-gen']));

    it('normalises the terms, reporting the errors of both lists at once with 422, before reading anything', async () => {
      let read = false;
      const r = reads(candidates, { standingProfile: async () => ((read = true), null) });
      try {
        await runMatching(bus, r, A, { gives: ['%%', 'Lead Gen'], asks: ['ai'] }, ctx());
        expect.fail('expected 422');
      } catch (err) {
        expect(err).to.be.instanceOf(ValidationFailed);
        expect((err as ValidationFailed).errors.map((e) => e.loc.join('.'))).to.deep.equal(['body.gives.0', 'body.asks.0']);
      }
      expect(read).to.equal(false);
    });

    it('answers 404 agent_not_found for an agent without a standing profile, and appends nothing', async () => {
      await given(A);
      const head = await log.headPosition();
      try {
        await runMatching(bus, reads(candidates, { standingProfile: async () => null }), A, body, ctx());
        expect.fail('expected 404');
      } catch (err) {
        expect((err as DomainError).code).to.equal('agent_not_found');
      }
      expect(await log.headPosition()).to.equal(head);
    });

    it('offers the agent its capabilities besides its gives, leaves out pairs blocked either way, and stops at the limit', async () => {
      await given(A);
      const blocked: string[] = [];
      const r = await runMatching(
        bus,
        reads([profile(B, ['b2b-sales'], ['design']), ...[C, D, 'agt_eeeeeeeeeeeeeeeeeeee'].map((id) => profile(id, ['b2b-sales'], ['lead-gen']))], {
          standingProfile: async () => ({ capabilities: ['design'], hidden: false }),
          blockedEitherWay: async (_a, other) => (blocked.push(other), other === C),
        }),
        A,
        { ...body, limit: 2 },
        ctx(),
      );
      expect(r.run.matches.map((m) => [m.agent_id, m.they_ask])).to.deep.equal([
        [B, ['design']],
        [D, ['lead-gen']],
      ]);
      expect(blocked).to.deep.equal([B, C, D]);
    });

    it('finds nobody for a ghosted agent: the run is recorded and charged, with no auto-post', async () => {
      await given(A);
      const r = await runMatching(bus, reads(candidates, { standingProfile: async () => ({ capabilities: [], hidden: true }) }), A, body, ctx());
      expect(r.run.matches).to.deep.equal([]);
      expect(r.run.auto_post).to.deep.equal({ status: 'skipped', reason: 'no_matches' });
      expect(r.run.charge.amount_mc).to.equal(1000);
    });

    it('sends the mixer summary to the room of the first ask that matched, and defaults the limit to 10', async () => {
      await given(A);
      const rooms: string[] = [];
      const r = await runMatching(
        bus,
        reads(candidates, { roomOf: async (term) => (rooms.push(term), term === 'b2b-sales' ? 'b2b-sales' : null) }),
        A,
        { gives: ['lead-gen'], asks: ['data', 'b2b-sales'] },
        ctx(),
      );
      expect(rooms).to.deep.equal(['b2b-sales']);
      expect(r.post?.room_slug).to.equal('b2b-sales');
      expect(r.run.limit).to.equal(10);
    });
  });

  describe('auto-post rules', () => {
    const draft = () => scoutDraft({ agent_id: B, name: 'Bee', capabilities: ['b2b-sales'] }, ['b2b-sales'], null);

    it('given the scout toggle off, then a scout signal appends nothing', async () => {
      await given(A, 50_000, [autoPostPrefsChanged({ agent_id: A, auto_post_on_scout: false, changed_at: clock.now().toISOString() })]);
      const head = await log.headPosition();
      expect(await publishAutoPost(bus, A, 'scout', draft(), ctx())).to.include({ status: 'skipped', reason: 'toggle_off' });
      expect(await log.headPosition()).to.equal(head);
      // The mixer toggle is separate.
      expect((await run()).run.auto_post.status).to.equal('published');
    });

    it('given an auto-post, then another within 4 h is suppressed, and allowed at 4 h', async () => {
      await given(A);
      expect((await publishAutoPost(bus, A, 'scout', draft(), ctx())).status).to.equal('published');
      clock.advance(AUTO_POST_WINDOW_MS - 1);
      const other = scoutDraft({ agent_id: C, name: 'Cee', capabilities: ['b2b-sales'] }, ['b2b-sales'], null);
      expect(await publishAutoPost(bus, A, 'scout', other, ctx())).to.include({ status: 'skipped', reason: 'rate_limited' });
      expect((await run()).run.auto_post).to.deep.equal({ status: 'skipped', reason: 'rate_limited' });
      clock.advance(1);
      expect((await publishAutoPost(bus, A, 'scout', other, ctx())).status).to.equal('published');
      expect((await types(A)).filter((t) => t === 'PostPublished')).to.have.length(2);
    });

    it('given a signal posted, then the same signal is suppressed for 48 h even when its text changes', async () => {
      await given(A);
      await publishAutoPost(bus, A, 'scout', draft(), ctx());
      clock.advance(47 * HOUR);
      const renamed = scoutDraft({ agent_id: B, name: 'Bee Renamed', capabilities: ['b2b-sales'] }, ['b2b-sales'], null);
      expect(await publishAutoPost(bus, A, 'scout', renamed, ctx())).to.include({ status: 'skipped', reason: 'duplicate_signal' });
      clock.advance(HOUR);
      expect((await publishAutoPost(bus, A, 'scout', renamed, ctx())).status).to.equal('published');
    });

    it('given a scout job that runs twice (same command id), then one post, even after the windows', async () => {
      await given(A);
      const first = await publishAutoPost(bus, A, 'scout', draft(), ctx('scout:evt-1:A'));
      clock.advance(5 * HOUR);
      expect(await publishAutoPost(bus, A, 'scout', draft(), ctx('scout:evt-1:A'))).to.include({
        status: 'already_published',
        post_id: (first as { post_id: string }).post_id,
      });
      expect((await types(A)).filter((t) => t === 'PostPublished')).to.have.length(1);
    });
  });
});
