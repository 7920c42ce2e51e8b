import { expect } from 'chai';
import type { FlaggerFacts } from '../../../commands/feed/flag-rule.ts';
import type { FlagPost, PostState, PostStreamEvent, ToggleCommentUpvote, ToggleReaction, VotePoll, WithdrawPostFlag } from '../../../commands/feed/post.ts';
import {
  decideFlagPost,
  decideToggleCommentUpvote,
  decideToggleReaction,
  decideVotePoll,
  decideWithdrawPostFlag,
  postAggregate,
} from '../../../commands/feed/post.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  AUTHOR,
  COMMENT,
  NOW,
  POST,
  READER,
  at,
  commentUpvoteToggled,
  pollVoted,
  moderationDecided,
  postFlagWithdrawn,
  postFlagged,
  postFlags,
  postGhosted,
  postReactionToggled,
} from './fixtures.ts';

const fold = (events: PostStreamEvent[]): PostState => events.reduce(postAggregate.evolve, postAggregate.initialState());

describe('commands: feed post stream (post-<id>)', () => {
  describe('ToggleCommentUpvote', () => {
    const spec = DeciderSpecification.for<ToggleCommentUpvote, PostState, PostStreamEvent>({ decide: decideToggleCommentUpvote, ...postAggregate });
    const upvote = (agent_id = READER): ToggleCommentUpvote => ({
      type: 'ToggleCommentUpvote',
      data: { post_id: POST, comment_id: COMMENT, agent_id },
      metadata: { now: NOW },
    });

    it('upvotes a comment the agent has not upvoted', () => {
      spec
        .given([])
        .when(upvote())
        .then([commentUpvoteToggled({ upvoted: true, toggled_at: NOW.toISOString() })]);
    });

    it("takes back the agent's own upvote on the second toggle", () => {
      spec
        .given([commentUpvoteToggled()])
        .when(upvote())
        .then([commentUpvoteToggled({ upvoted: false, toggled_at: NOW.toISOString() })]);
    });

    it("upvotes beside another agent's upvote, and the count follows", () => {
      spec
        .given([commentUpvoteToggled({ agent_id: AUTHOR })])
        .when(upvote())
        .then([commentUpvoteToggled({ upvoted: true, toggled_at: NOW.toISOString() })]);
      expect(fold([commentUpvoteToggled({ agent_id: AUTHOR }), commentUpvoteToggled()]).upvoteCounts[COMMENT]).to.equal(2);
      expect(fold([commentUpvoteToggled(), commentUpvoteToggled({ upvoted: false })]).upvoteCounts[COMMENT]).to.equal(0);
    });
  });

  describe('ToggleReaction', () => {
    const spec = DeciderSpecification.for<ToggleReaction, PostState, PostStreamEvent>({ decide: decideToggleReaction, ...postAggregate });
    const react = (reaction: ToggleReaction['data']['reaction'] = 'like'): ToggleReaction => ({
      type: 'ToggleReaction',
      data: { post_id: POST, agent_id: READER, reaction },
      metadata: { now: NOW },
    });

    it('activates a reaction, then deactivates it on the second toggle', () => {
      spec
        .given([])
        .when(react())
        .then([postReactionToggled({ active: true, toggled_at: NOW.toISOString() })]);
      spec
        .given([postReactionToggled()])
        .when(react())
        .then([postReactionToggled({ active: false, toggled_at: NOW.toISOString() })]);
    });

    it('keeps each reaction of the same agent separate', () => {
      spec
        .given([postReactionToggled({ reaction: 'like' })])
        .when(react('celebrate'))
        .then([postReactionToggled({ reaction: 'celebrate', active: true, toggled_at: NOW.toISOString() })]);
      expect(fold([postReactionToggled(), postReactionToggled({ reaction: 'celebrate' })]).reactionCounts).to.deep.equal({
        like: 1,
        insightful: 0,
        celebrate: 1,
      });
    });
  });

  describe('VotePoll', () => {
    const spec = DeciderSpecification.for<VotePoll, PostState, PostStreamEvent>({ decide: decideVotePoll, ...postAggregate });
    const poll = { options: ['yes', 'no', 'maybe'], expires_at: at(12).toISOString() };
    const vote = (over: Partial<VotePoll['data']> = {}, now = NOW): VotePoll => ({
      type: 'VotePoll',
      data: { post_id: POST, post_author_id: AUTHOR, agent_id: READER, option_index: 2, poll, ...over },
      metadata: { now },
    });

    it('records a first vote for an existing option of an open poll', () => {
      spec
        .given([pollVoted({ agent_id: AUTHOR, option_index: 0 })])
        .when(vote())
        .then([pollVoted({ option_index: 2, voted_at: NOW.toISOString() })]);
      expect(fold([pollVoted({ agent_id: AUTHOR, option_index: 0 }), pollVoted({ option_index: 2 })]).tally).to.deep.equal([1, 0, 1]);
    });

    it('refuses a post without a poll with 404 poll_not_found', () => {
      spec
        .given([])
        .when(vote({ poll: null }))
        .thenThrows('poll_not_found', 404);
    });

    it('refuses an option past the last one with 422', () => {
      spec
        .given([])
        .when(vote({ option_index: 3 }))
        .thenThrows('validation_failed', 422);
    });

    it('refuses a vote once the poll has expired with 409 poll_expired (at the expiry itself too)', () => {
      spec
        .given([])
        .when(vote({}, at(12)))
        .thenThrows('poll_expired', 409);
      spec
        .given([])
        .when(vote({}, at(13)))
        .thenThrows('poll_expired', 409);
    });

    it('refuses a second vote from the same agent with 409 already_voted, whatever the option', () => {
      spec
        .given([pollVoted({ option_index: 1 })])
        .when(vote({ option_index: 0 }))
        .thenThrows('already_voted', 409);
    });
  });

  describe('FlagPost', () => {
    const spec = DeciderSpecification.for<FlagPost, PostState, PostStreamEvent>({ decide: decideFlagPost, ...postAggregate });
    /** A claimed flagger registered two days earlier, in good standing: its flag counts. */
    const weighty: FlaggerFacts = { claimed: true, registered_at: '2026-03-08T09:30:00.000Z', hidden: false };
    const flag = (agent_id = READER, reason: string | null = 'spam', facts: FlaggerFacts = weighty): FlagPost => ({
      type: 'FlagPost',
      data: { post_id: POST, post_author_id: AUTHOR, agent_id, reason, facts },
      metadata: { now: NOW },
    });
    const at = NOW.toISOString();

    it('counts a first flag from a claimed, day-old flagger', () => {
      spec
        .given(postFlags(2))
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 3, flagged_at: at, weight: 'counts', counting_count: 3 })]);
    });

    it('ghosts the post with the fifth counting flag, in the same decision', () => {
      spec
        .given(postFlags(4))
        .when(flag())
        .then([
          postFlagged({ reason: 'spam', flag_count: 5, flagged_at: at, weight: 'counts', counting_count: 5 }),
          postGhosted({ flag_count: 5, ghosted_at: at }),
        ]);
    });

    it('records an unclaimed, a day-young or a hidden flagger without counting it, and hides nothing', () => {
      for (const [facts, weight] of [
        [{ ...weighty, claimed: false }, 'unclaimed'],
        [{ ...weighty, registered_at: '2026-03-09T09:30:00.001Z' }, 'too_new'],
        [{ ...weighty, hidden: true }, 'flagger_hidden'],
      ] as const) {
        spec
          .given(postFlags(4))
          .when(flag(READER, 'spam', facts))
          .then([postFlagged({ reason: 'spam', flag_count: 5, flagged_at: at, weight, counting_count: 4 })]);
      }
    });

    it('counts a flagger registered exactly 24 hours earlier', () => {
      spec
        .given([])
        .when(flag(READER, null, { ...weighty, registered_at: '2026-03-09T09:30:00.000Z' }))
        .then([postFlagged({ reason: null, flag_count: 1, flagged_at: at, weight: 'counts', counting_count: 1 })]);
    });

    it('counts a sixth flag without ghosting the post again', () => {
      spec
        .given([...postFlags(5), postGhosted()])
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 6, flagged_at: at, weight: 'counts', counting_count: 6 })]);
    });

    it('does not count a withdrawn flag: four standing after a withdrawal, the next flag is the fifth', () => {
      const flags = postFlags(5);
      spec
        .given([...flags.slice(0, 4), postFlagWithdrawn({ agent_id: flags[0].data.agent_id, flag_count: 3 })])
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 4, flagged_at: at, weight: 'counts', counting_count: 4 })]);
    });

    it('never counts again the flags a restore spent: a restored post is not re-hidden by them', () => {
      const flags = postFlags(5);
      const spent = flags.map((f) => f.data.agent_id);
      const restored = moderationDecided({ item_id: POST, author_agent_id: AUTHOR, decision: 'restore', hidden: false, spent });
      spec
        .given([...flags, postGhosted(), restored, postFlagWithdrawn({ agent_id: spent[0], flag_count: 4 })])
        .when(flag(spent[0]))
        .then([postFlagged({ agent_id: spent[0], reason: 'spam', flag_count: 5, flagged_at: at, weight: 'spent', counting_count: 0 })]);
    });

    it('appends nothing for a repeat flag from the same flagger', () => {
      const flags = postFlags(3);
      spec.given(flags).when(flag(flags[1].data.agent_id)).thenNothingHappened();
    });

    it("refuses the author's flag on their own post with 400 cannot_flag_own_post", () => {
      spec.given([]).when(flag(AUTHOR)).thenThrows('cannot_flag_own_post', 400);
    });
  });

  describe('WithdrawPostFlag', () => {
    const spec = DeciderSpecification.for<WithdrawPostFlag, PostState, PostStreamEvent>({ decide: decideWithdrawPostFlag, ...postAggregate });
    const withdraw = (agent_id = READER): WithdrawPostFlag => ({ type: 'WithdrawPostFlag', data: { post_id: POST, agent_id }, metadata: { now: NOW } });

    it('withdraws a standing flag', () => {
      spec
        .given([postFlagged()])
        .when(withdraw())
        .then([postFlagWithdrawn({ agent_id: READER, flag_count: 0, withdrawn_at: NOW.toISOString() })]);
    });

    it('answers 404 flag_not_found without a standing flag', () => {
      spec
        .given([postFlagged(), postFlagWithdrawn({ agent_id: READER })])
        .when(withdraw())
        .thenThrows('flag_not_found', 404);
    });
  });
});
