import { expect } from 'chai';
import { agentAggregate } from '../../commands/agents/agent.ts';
import { boostPost } from '../../commands/feed/boost.ts';
import { flagPost, votePoll } from '../../commands/feed/post.ts';
import { publishPost } from '../../commands/feed/publish-post.ts';
import { pinPost } from '../../commands/feed/rooms.ts';
import { cancelScheduledPost, publishScheduledPost, schedulePost } from '../../commands/feed/schedule.ts';
import type { CommandBus } from '../../commands/handler.ts';
import type { CommandContext } from '../../commands/handler.ts';
import { agentStream } from '../../events/agents.ts';
import { postStream, signalHash } from '../../events/feed.ts';
import { ManualClock } from '../../events/kernel/clock.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { SqliteEventLog } from '../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../helpers/commands.ts';

const A = 'agt_aaaaaaaaaaaaaaaaaaaa';
const B = 'agt_bbbbbbbbbbbbbbbbbbbb';
const P = 'pst_pppppppppppppppppppp';

describe('commands: feed', () => {
  let dir: string;
  let log: SqliteEventLog;
  let bus: CommandBus;
  let clock: ManualClock;
  let n = 0;
  const ctx = (): CommandContext => ({ commandId: `cmd-${++n}`, actor: null, requestId: null, now: clock.now() });
  const given = async (agentId: string, balance_mc = 50_000) => {
    await bus.appendRaw(
      agentStream(agentId),
      [
        { type: 'AgentRegistered', data: { agent_id: agentId, name: agentId, tier: 'free', registered_at: clock.now().toISOString() } },
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
      ],
      'no_stream',
      ctx(),
    );
  };
  const failsWith = async (p: Promise<unknown>, status: number, code: string) => {
    try {
      await p;
      expect.fail(`expected ${status} ${code}`);
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      expect((err as DomainError).status).to.equal(status);
      expect((err as DomainError).code).to.equal(code);
    }
  };

  beforeEach(() => ({ dir, log, clock, bus } = openCommandBus('feed-commands-')));
  afterEach(() => closeCommandBus(log, dir));

  it('given a post, when the same agent posts the same normalised text within 48 h, then 409 duplicate_signal and nothing appended', async () => {
    await given(A);
    const first = await publishPost(bus, A, { title: 'Hello  World', body: 'Same\nbody', post_type: 'signal_found', room_slug: null }, ctx());
    expect(first.post.signal_hash).to.equal(signalHash(A, 'hello world', 'same body'));
    const head = await log.headPosition();
    await failsWith(
      publishPost(bus, A, { title: 'HELLO WORLD', body: 'same body ', post_type: 'deal_opened', room_slug: null }, ctx()),
      409,
      'duplicate_signal',
    );
    expect(await log.headPosition()).to.equal(head);
    clock.advance(48 * 3600_000 + 1);
    await publishPost(bus, A, { title: 'HELLO WORLD', body: 'same body', post_type: 'deal_opened', room_slug: null }, ctx());
  });

  it('given posts over 100 hours, when folded, then the signal window holds only the last 48 hours, in post order', () => {
    let state = agentAggregate.initialState();
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    for (let h = 0; h < 100; h++) {
      const at = new Date(t0 + h * 3600_000).toISOString();
      const data = { post_id: `pst_${h}`, agent_id: A, published_at: at, signal_hash: `hash-${h % 60}` };
      state = agentAggregate.evolve(state, { type: 'PostPublished', data } as never);
    }
    // Hour 99 is the last post: hours 52..99 are within 48 h (hour 51 is exactly 48 h before: out).
    const hashes = [...state.signals.keys()];
    expect(hashes).to.have.length(48);
    expect(state.signals.get('hash-39')).to.deep.equal({ at: new Date(t0 + 99 * 3600_000).toISOString(), post_id: 'pst_99' });
    expect(state.signals.get('hash-52')).to.deep.equal({ at: new Date(t0 + 52 * 3600_000).toISOString(), post_id: 'pst_52' });
    expect(state.signals.has('hash-51')).to.equal(false);
    expect(hashes[0]).to.equal('hash-52');
    expect(hashes[hashes.length - 1]).to.equal('hash-39');
  });

  it('given a state, when a post is folded, then the earlier state is left as it was', () => {
    const before = agentAggregate.evolve(agentAggregate.initialState(), {
      type: 'PostPublished',
      data: { post_id: 'pst_1', agent_id: A, published_at: '2026-01-01T00:00:00.000Z', signal_hash: 'h1' },
    } as never);
    const after = agentAggregate.evolve(before, {
      type: 'PostPublished',
      data: { post_id: 'pst_2', agent_id: A, published_at: '2026-01-01T01:00:00.000Z', signal_hash: 'h2' },
    } as never);
    expect([...before.signals.keys()]).to.deep.equal(['h1']);
    expect([...after.signals.keys()]).to.deep.equal(['h1', 'h2']);
  });

  it('given one state folded two different ways, then each result and the state itself keep their own window', () => {
    const post = (state: ReturnType<typeof agentAggregate.initialState>, id: string, at: string, hash: string) =>
      agentAggregate.evolve(state, { type: 'PostPublished', data: { post_id: id, agent_id: A, published_at: at, signal_hash: hash } } as never);
    const base = post(post(agentAggregate.initialState(), 'pst_1', '2026-01-01T00:00:00.000Z', 'h1'), 'pst_2', '2026-01-01T01:00:00.000Z', 'h2');
    // One branch posts h1 again (it moves last); the other posts 49 h later (h1 and h2 expire).
    const again = post(base, 'pst_3', '2026-01-01T02:00:00.000Z', 'h1');
    const later = post(base, 'pst_4', '2026-01-03T01:00:00.001Z', 'h3');
    expect([...again.signals.keys()]).to.deep.equal(['h2', 'h1']);
    expect(again.signals.get('h1')).to.deep.equal({ at: '2026-01-01T02:00:00.000Z', post_id: 'pst_3' });
    expect([...later.signals.keys()]).to.deep.equal(['h3']);
    expect(later.signals.has('h1')).to.equal(false);
    expect([...base.signals.keys()]).to.deep.equal(['h1', 'h2']);
    expect(base.signals.get('h1')).to.deep.equal({ at: '2026-01-01T00:00:00.000Z', post_id: 'pst_1' });
  });

  it('given a retried post command (same command id), then the post is appended once and not refused as a duplicate', async () => {
    await given(A);
    const c = ctx();
    const one = await publishPost(bus, A, { title: 'T', body: 'B', post_type: 'signal_found', room_slug: null }, c);
    const two = await publishPost(bus, A, { title: 'T', body: 'B', post_type: 'signal_found', room_slug: null }, c);
    expect(two.post.post_id).to.equal(one.post.post_id);
    expect(two.duplicate).to.equal(true);
  });

  it('given four distinct flags, when a fifth agent flags, then PostFlagged and PostGhosted are appended together', async () => {
    for (let i = 0; i < 4; i++) await flagPost(bus, P, B, `agt_flagger${i}`, null, ctx());
    const again = await flagPost(bus, P, B, 'agt_flagger0', null, ctx());
    expect(again).to.include({ already_flagged: true, flag_count: 4, ghosted: false });
    const fifth = await flagPost(bus, P, B, 'agt_flagger4', 'spam', ctx());
    expect(fifth).to.include({ flag_count: 5, ghosted: true });
    const events = await log.readStream(postStream(P));
    expect(events.map((e) => e.type)).to.deep.equal(['PostFlagged', 'PostFlagged', 'PostFlagged', 'PostFlagged', 'PostFlagged', 'PostGhosted']);
    await flagPost(bus, P, B, 'agt_flagger5', null, ctx());
    expect((await log.readStream(postStream(P))).filter((e) => e.type === 'PostGhosted')).to.have.length(1);
  });

  it('given a vote, when the same voter votes again, then 409 already_voted', async () => {
    const target = { post_id: P, post_author_id: B, options: 3 };
    expect((await votePoll(bus, target, A, 2, ctx())).tally).to.deep.equal([0, 0, 1]);
    await failsWith(votePoll(bus, target, A, 0, ctx()), 409, 'already_voted');
  });

  it('given the daily cap of boosts in 24 h, when the agent boosts again, then 429 daily_cap; the window rolls', async () => {
    await given(A);
    for (let i = 0; i < 3; i++) await boostPost(bus, A, { post_id: `pst_${i}`, agent_id: B }, 3, ctx());
    await failsWith(boostPost(bus, A, { post_id: 'pst_x', agent_id: B }, 3, ctx()), 429, 'daily_cap');
    await failsWith(boostPost(bus, A, { post_id: 'pst_0', agent_id: B }, 3, ctx()), 409, 'already_boosted');
    await failsWith(boostPost(bus, A, { post_id: 'pst_y', agent_id: A }, 3, ctx()), 400, 'cannot_boost_own_post');
    clock.advance(24 * 3600_000);
    await boostPost(bus, A, { post_id: 'pst_x', agent_id: B }, 3, ctx());
  });

  it('given a scheduled post, when cancelled, then the refund restores the balance; publishing it afterwards appends nothing', async () => {
    await given(A, 100);
    const { scheduled } = await schedulePost(
      bus,
      A,
      { title: 'S', body: 'B', post_type: 'intro_sent', room_slug: null },
      new Date('2026-03-11T00:00:00Z'),
      100,
      ctx(),
    );
    expect(scheduled.charge).to.deep.equal({ action: 'schedule_post', amount_mc: 100, balance_after_mc: 0 });
    await failsWith(publishPost(bus, A, { title: 'other', body: 'x', post_type: 'intro_sent', room_slug: null }, ctx()), 402, 'insufficient_credits');
    const { cancelled } = await cancelScheduledPost(bus, A, scheduled.post_id, ctx());
    expect(cancelled.charge).to.deep.equal({ action: 'schedule_post_refund', amount_mc: -100, balance_after_mc: 100 });
    await failsWith(cancelScheduledPost(bus, A, scheduled.post_id, ctx()), 409, 'not_scheduled');
    clock.set('2026-03-11T00:00:00.000Z');
    expect((await publishScheduledPost(bus, scheduled, ctx())).published).to.equal(false);
    const { state } = await bus.load(agentStream(A), agentAggregate);
    expect(state).to.include({ balance_mc: 100, used_mc: 0 });
  });

  it('given a scheduled post, when published before publish_at, then nothing; at publish_at, a PostPublished without a charge', async () => {
    await given(A);
    const { scheduled } = await schedulePost(
      bus,
      A,
      { title: 'S', body: 'B', post_type: 'intro_sent', room_slug: null },
      new Date('2026-03-11T00:00:00Z'),
      100,
      ctx(),
    );
    expect((await publishScheduledPost(bus, scheduled, ctx())).published).to.equal(false);
    clock.set('2026-03-11T00:00:00.000Z');
    expect((await publishScheduledPost(bus, scheduled, ctx())).published).to.equal(true);
    const last = (await log.readStream(agentStream(A), { direction: 'backwards', maxCount: 1 }))[0];
    expect(last.type).to.equal('PostPublished');
    expect(last.data).to.not.have.property('charge');
    expect(last.data).to.include({ post_id: scheduled.post_id, scheduled_at: '2026-03-10T09:30:00.000Z', published_at: '2026-03-11T00:00:00.000Z' });
    expect((await publishScheduledPost(bus, scheduled, ctx())).published).to.equal(false);
  });

  it('given three pins, when a fourth is pinned, then 409 pin_limit; pinning a pinned post appends nothing', async () => {
    for (let i = 0; i < 3; i++) await pinPost(bus, 'lead-gen', { post_id: `pst_${i}`, agent_id: B }, A, ctx());
    expect((await pinPost(bus, 'lead-gen', { post_id: 'pst_0', agent_id: B }, A, ctx())).already_pinned).to.equal(true);
    await failsWith(pinPost(bus, 'lead-gen', { post_id: 'pst_3', agent_id: B }, A, ctx()), 409, 'pin_limit');
  });
});
