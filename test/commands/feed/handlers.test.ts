import { expect } from 'chai';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { boostPost } from '../../../commands/feed/boost.ts';
import { flagPost, votePoll } from '../../../commands/feed/post.ts';
import type { PostDraft } from '../../../commands/feed/publish-post.ts';
import { publishPost } from '../../../commands/feed/publish-post.ts';
import { pinPost, unpinPost } from '../../../commands/feed/rooms.ts';
import { cancelScheduledPost, publishScheduledPost, schedulePost } from '../../../commands/feed/schedule.ts';
import type { CommandBus } from '../../../commands/handler.ts';
import type { CommandContext } from '../../../commands/handler.ts';
import { agentStream } from '../../../events/agents.ts';
import { postStream, signalHash } from '../../../events/feed.ts';
import type { ManualClock } from '../../../events/kernel/clock.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import type { SqliteEventLog } from '../../../events/store/sqlite.ts';
import { closeCommandBus, openCommandBus } from '../../helpers/commands.ts';
import { funded } from './fixtures.ts';

const A = 'agt_aaaaaaaaaaaaaaaaaaaa';
const B = 'agt_bbbbbbbbbbbbbbbbbbbb';
const P = 'pst_pppppppppppppppppppp';
const draft = (over: Partial<PostDraft> = {}): PostDraft => ({ title: 'T', body: 'B', post_type: 'signal_found', room_slug: null, poll: null, ...over });
const schedule = {
  draft: draft({ title: 'S', post_type: 'intro_sent' }),
  resolved_room_slug: null,
  publish_at: '2026-03-11T00:00:00Z',
  daily_cap: 100,
};

/** A claimed flagger registered long before, in good standing: its flag counts. */
const WEIGHTY = { claimed: true, registered_at: '2026-01-01T00:00:00.000Z', hidden: false };

describe('commands: feed', () => {
  let dir: string;
  let log: SqliteEventLog;
  let bus: CommandBus;
  let clock: ManualClock;
  let n = 0;
  const ctx = (): CommandContext => ({ commandId: `cmd-${++n}`, actor: null, requestId: null, now: clock.now() });
  const given = async (agentId: string, balance_mc = 50_000) => {
    await bus.appendRaw(agentStream(agentId), funded(agentId, balance_mc), 'no_stream', ctx());
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
    const first = await publishPost(bus, A, draft({ title: 'Hello  World', body: 'Same\nbody' }), null, ctx());
    expect(first.post.signal_hash).to.equal(signalHash(A, 'hello world', 'same body'));
    const head = await log.headPosition();
    await failsWith(publishPost(bus, A, draft({ title: 'HELLO WORLD', body: 'same body ', post_type: 'deal_opened' }), null, ctx()), 409, 'duplicate_signal');
    expect(await log.headPosition()).to.equal(head);
    clock.advance(48 * 3600_000 + 1);
    await publishPost(bus, A, draft({ title: 'HELLO WORLD', body: 'same body', post_type: 'deal_opened' }), null, ctx());
  });

  it('given a retried post command (same command id), then the post is appended once and not refused as a duplicate', async () => {
    await given(A);
    const c = ctx();
    const one = await publishPost(bus, A, draft({ title: 'T', body: 'B' }), null, c);
    const two = await publishPost(bus, A, draft({ title: 'T', body: 'B' }), null, c);
    expect(two.post.post_id).to.equal(one.post.post_id);
    expect(two.duplicate).to.equal(true);
  });

  it('given four distinct flags, when a fifth agent flags, then PostFlagged and PostGhosted are appended together', async () => {
    for (let i = 0; i < 4; i++) await flagPost(bus, P, B, `agt_flagger${i}`, null, WEIGHTY, ctx());
    const again = await flagPost(bus, P, B, 'agt_flagger0', null, WEIGHTY, ctx());
    expect(again).to.include({ already_flagged: true, flag_count: 4, ghosted: false });
    const fifth = await flagPost(bus, P, B, 'agt_flagger4', 'spam', WEIGHTY, ctx());
    expect(fifth).to.include({ flag_count: 5, ghosted: true });
    const events = await log.readStream(postStream(P));
    expect(events.map((e) => e.type)).to.deep.equal(['PostFlagged', 'PostFlagged', 'PostFlagged', 'PostFlagged', 'PostFlagged', 'PostGhosted']);
    await flagPost(bus, P, B, 'agt_flagger5', null, WEIGHTY, ctx());
    expect((await log.readStream(postStream(P))).filter((e) => e.type === 'PostGhosted')).to.have.length(1);
  });

  it('given a vote, when the same voter votes again, then 409 already_voted', async () => {
    const target = { post_id: P, post_author_id: B, poll: { options: ['a', 'b', 'c'], expires_at: '2026-03-11T09:30:00.000Z' } };
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
    const { scheduled } = await schedulePost(bus, A, schedule, ctx());
    expect(scheduled.charge).to.deep.equal({ action: 'schedule_post', amount_mc: 100, balance_after_mc: 0 });
    await failsWith(publishPost(bus, A, draft({ title: 'other', body: 'x' }), null, ctx()), 402, 'insufficient_credits');
    const cancel = { agent_id: A, post_id: scheduled.post_id, scheduled_post: { agent_id: A, status: 'scheduled' } };
    const { cancelled } = await cancelScheduledPost(bus, cancel, ctx());
    expect(cancelled.charge).to.deep.equal({ action: 'schedule_post_refund', amount_mc: -100, balance_after_mc: 100 });
    await failsWith(cancelScheduledPost(bus, cancel, ctx()), 409, 'not_scheduled');
    clock.set('2026-03-11T00:00:00.000Z');
    expect((await publishScheduledPost(bus, scheduled, ctx())).published).to.equal(false);
    const { state } = await bus.load(agentStream(A), agentAggregate);
    expect(state).to.include({ balance_mc: 100, used_mc: 0 });
  });

  it('given a scheduled post, when published before publish_at, then nothing; at publish_at, a PostPublished without a charge', async () => {
    await given(A);
    const { scheduled } = await schedulePost(bus, A, schedule, ctx());
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
    const pin = (postId: string) => ({
      room_slug: 'lead-gen',
      user_id: 'usr_admin0000000000000000',
      agent_id: A,
      moderation: { room_created_by: null, super_admin: true },
      post: { post_id: postId, agent_id: B, room_slug: 'lead-gen' },
    });
    for (let i = 0; i < 3; i++) await pinPost(bus, pin(`pst_${i}`), ctx());
    expect((await pinPost(bus, pin('pst_0'), ctx())).already_pinned).to.equal(true);
    await failsWith(pinPost(bus, pin('pst_3'), ctx()), 409, 'pin_limit');
    expect(
      (
        await unpinPost(
          bus,
          { room_slug: 'lead-gen', post_id: 'pst_1', user_id: 'usr_admin0000000000000000', agent_id: A, moderation: pin('pst_1').moderation },
          ctx(),
        )
      ).pinned,
    ).to.equal(false);
    expect((await pinPost(bus, pin('pst_3'), ctx())).already_pinned).to.equal(false);
  });
});
