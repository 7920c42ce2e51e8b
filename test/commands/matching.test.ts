import { expect } from 'chai';
import { agentAggregate } from '../../commands/agents/agent.ts';
import type { AgentState } from '../../commands/agents/agent.ts';
import { AUTO_POST_WINDOW_MS, decideAutoPost, mixerDraft, publishAutoPost, scoutDraft } from '../../commands/matching/auto-post.ts';
import { normaliseTerms, rankBilateral, runMatching } from '../../commands/matching/matching.ts';
import type { StandingProfile } from '../../commands/matching/matching.ts';
import type { CommandBus } from '../../commands/handler.ts';
import type { CommandContext } from '../../commands/handler.ts';
import { agentStream } from '../../events/agents.ts';
import { HOUR, ManualClock } from '../../events/kernel/clock.ts';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import type { BilateralMatch } from '../../events/matching.ts';
import { autoSignalHash } from '../../events/matching.ts';
import type { SqliteEventLog } from '../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../helpers/commands.ts';

const A = 'agt_aaaaaaaaaaaaaaaaaaaa';
const B = 'agt_bbbbbbbbbbbbbbbbbbbb';
const C = 'agt_cccccccccccccccccccc';
const match = (agentId: string, name = agentId): BilateralMatch => ({ agent_id: agentId, name, they_give: ['b2b-sales'], they_ask: ['lead-gen'], score: 2 });
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
  const given = async (agentId: string, balance_mc = 50_000, extra: Array<{ type: string; data: Record<string, unknown> }> = []) => {
    await bus.appendRaw(
      agentStream(agentId),
      [
        { type: 'AgentRegistered', data: { agent_id: agentId, name: `Agent ${agentId.slice(4, 5)}`, tier: 'free', registered_at: clock.now().toISOString() } },
        {
          type: 'MonthlyCreditsGranted',
          data: {
            agent_id: agentId,
            cycle: 0,
            amount_mc: balance_mc,
            balance_after_mc: balance_mc,
            cycle_start: clock.now().toISOString(),
            next_grant_at: '2026-04-10T09:30:00.000Z',
          },
        },
        ...extra,
      ],
      'no_stream',
      ctx(),
    );
  };
  const state = async (agentId: string): Promise<AgentState> => (await bus.load(agentStream(agentId), agentAggregate)).state;
  const types = async (agentId: string) => (await log.readStream(agentStream(agentId))).map((e) => e.type);
  const input = (matches: BilateralMatch[] = [match(B)]) => ({ gives: ['lead-gen'], asks: ['b2b-sales'], limit: 10, matches, room_slug: null });

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
      const r = await runMatching(bus, A, input([]), ctx());
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
        await runMatching(bus, A, input(), ctx());
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
      const r = await runMatching(bus, A, input([match(B, 'Bee')]), ctx());
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
      const first = await runMatching(bus, A, input([match(B)]), c);
      const again = await runMatching(bus, A, input([match(C)]), { ...c, now: clock.now() });
      expect(again.duplicate).to.equal(true);
      expect(again.run).to.deep.equal(first.run);
      expect(again.post).to.deep.equal(first.post);
      expect(await types(A)).to.have.length(4);
      expect((await state(A)).balance_mc).to.equal(49_000);
    });
  });

  describe('auto-post rules', () => {
    const draft = () => scoutDraft({ agent_id: B, name: 'Bee', capabilities: ['b2b-sales'] }, ['b2b-sales'], null);

    it('given the scout toggle off, then a scout signal appends nothing', async () => {
      await given(A, 50_000, [{ type: 'AutoPostPrefsChanged', data: { agent_id: A, auto_post_on_scout: false, changed_at: clock.now().toISOString() } }]);
      const head = await log.headPosition();
      expect(await publishAutoPost(bus, A, 'scout', draft(), ctx())).to.include({ status: 'skipped', reason: 'toggle_off' });
      expect(await log.headPosition()).to.equal(head);
      // The mixer toggle is separate.
      expect((await runMatching(bus, A, input(), ctx())).run.auto_post.status).to.equal('published');
    });

    it('given an auto-post, then another within 4 h is suppressed, and allowed at 4 h', async () => {
      await given(A);
      expect((await publishAutoPost(bus, A, 'scout', draft(), ctx())).status).to.equal('published');
      clock.advance(AUTO_POST_WINDOW_MS - 1);
      const other = scoutDraft({ agent_id: C, name: 'Cee', capabilities: ['b2b-sales'] }, ['b2b-sales'], null);
      expect(await publishAutoPost(bus, A, 'scout', other, ctx())).to.include({ status: 'skipped', reason: 'rate_limited' });
      expect((await runMatching(bus, A, input(), ctx())).run.auto_post).to.deep.equal({ status: 'skipped', reason: 'rate_limited' });
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

    it('decides the rules in order: toggle, then 4 h, then 48 h', async () => {
      await given(A);
      const s = await state(A);
      const now = clock.now();
      const d = mixerDraft([match(B)], ['b2b-sales'], null);
      const hash = autoSignalHash(A, 'mixer', d.signal_key);
      const recent = { ...s, last_auto_post_at: now.toISOString(), signals: new Map([[hash, { at: now.toISOString(), post_id: 'pst_other' }]]) };
      expect(decideAutoPost({ ...recent, auto_post_on_mixer: false }, 'mixer', d, 'pst_new', now)).to.deep.equal({ kind: 'skip', reason: 'toggle_off' });
      expect(decideAutoPost(recent, 'mixer', d, 'pst_new', now)).to.deep.equal({ kind: 'skip', reason: 'rate_limited' });
      expect(decideAutoPost({ ...recent, last_auto_post_at: null }, 'mixer', d, 'pst_new', now)).to.deep.equal({ kind: 'skip', reason: 'duplicate_signal' });
      expect(decideAutoPost({ ...recent, last_auto_post_at: null, signals: new Map() }, 'mixer', d, 'pst_new', now).kind).to.equal('publish');
    });
  });
});
