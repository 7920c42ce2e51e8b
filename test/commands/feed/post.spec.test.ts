import { expect } from 'chai';
import type { FlagPost, PostState, PostStreamEvent, ToggleCommentUpvote, ToggleReaction, VotePoll } from '../../../commands/feed/post.ts';
import { decideFlagPost, decideToggleCommentUpvote, decideToggleReaction, decideVotePoll, postAggregate } from '../../../commands/feed/post.ts';
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
    const flag = (agent_id = READER, reason: string | null = 'spam'): FlagPost => ({
      type: 'FlagPost',
      data: { post_id: POST, post_author_id: AUTHOR, agent_id, reason },
      metadata: { now: NOW },
    });

    it('counts a first flag from a distinct flagger', () => {
      spec
        .given(postFlags(2))
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 3, flagged_at: NOW.toISOString() })]);
    });

    it('ghosts the post with the fifth distinct flag, in the same decision', () => {
      spec
        .given(postFlags(4))
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 5, flagged_at: NOW.toISOString() }), postGhosted({ flag_count: 5, ghosted_at: NOW.toISOString() })]);
    });

    it('counts a sixth flag without ghosting the post again', () => {
      spec
        .given([...postFlags(5), postGhosted()])
        .when(flag())
        .then([postFlagged({ reason: 'spam', flag_count: 6, flagged_at: NOW.toISOString() })]);
    });

    it('appends nothing for a repeat flag from the same flagger', () => {
      const flags = postFlags(3);
      spec.given(flags).when(flag(flags[1].data.agent_id)).thenNothingHappened();
    });

    it("refuses the author's flag on their own post with 400 cannot_flag_own_post", () => {
      spec.given([]).when(flag(AUTHOR)).thenThrows('cannot_flag_own_post', 400);
    });
  });
});
