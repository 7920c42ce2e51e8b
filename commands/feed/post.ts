import type { CommentUpvoteToggled, PollVoted, PostFlagged, PostGhosted, PostReactionToggled, Reaction } from '../../events/feed.ts';
import { FLAGS_TO_GHOST, postStream } from '../../events/feed.ts';
import { conflict } from '../../events/kernel/errors.ts';
import type { Event } from '../../events/types.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

/** Free shared state of one post (`post-<id>`): comment upvotes, reactions, poll votes, flags. */
export interface PostState {
  /** `${comment_id}:${agent_id}` present when upvoted; counts per comment. */
  upvotes: Readonly<Record<string, true>>;
  upvoteCounts: Readonly<Record<string, number>>;
  /** `${agent_id}:${reaction}` present when active. */
  reactions: Readonly<Record<string, true>>;
  reactionCounts: Readonly<Record<Reaction, number>>;
  voters: Readonly<Record<string, number>>;
  tally: readonly number[];
  flaggers: Readonly<Record<string, true>>;
  flagCount: number;
  ghosted: boolean;
}

export const postAggregate: Aggregate<PostState> = {
  initialState: () => ({
    upvotes: {},
    upvoteCounts: {},
    reactions: {},
    reactionCounts: { like: 0, insightful: 0, celebrate: 0 },
    voters: {},
    tally: [],
    flaggers: {},
    flagCount: 0,
    ghosted: false,
  }),
  evolve(state, event: Event<string, unknown>) {
    switch (event.type) {
      case 'CommentUpvoteToggled': {
        const d = event.data as CommentUpvoteToggled['data'];
        const key = `${d.comment_id}:${d.agent_id}`;
        const upvotes = { ...state.upvotes };
        if (d.upvoted) upvotes[key] = true;
        else delete upvotes[key];
        const n = (state.upvoteCounts[d.comment_id] ?? 0) + (d.upvoted ? 1 : -1);
        return { ...state, upvotes, upvoteCounts: { ...state.upvoteCounts, [d.comment_id]: n } };
      }
      case 'PostReactionToggled': {
        const d = event.data as PostReactionToggled['data'];
        const key = `${d.agent_id}:${d.reaction}`;
        const reactions = { ...state.reactions };
        if (d.active) reactions[key] = true;
        else delete reactions[key];
        const reactionCounts = { ...state.reactionCounts, [d.reaction]: state.reactionCounts[d.reaction] + (d.active ? 1 : -1) };
        return { ...state, reactions, reactionCounts };
      }
      case 'PollVoted': {
        const d = event.data as PollVoted['data'];
        const tally = [...state.tally];
        while (tally.length <= d.option_index) tally.push(0);
        tally[d.option_index]++;
        return { ...state, voters: { ...state.voters, [d.agent_id]: d.option_index }, tally };
      }
      case 'PostFlagged': {
        const d = event.data as PostFlagged['data'];
        return { ...state, flaggers: { ...state.flaggers, [d.agent_id]: true }, flagCount: d.flag_count };
      }
      case 'PostGhosted':
        return { ...state, ghosted: true };
      default:
        return state;
    }
  },
};

export async function toggleCommentUpvote(bus: CommandBus, postId: string, commentId: string, agentId: string, ctx: CommandContext) {
  let upvoted = false;
  let count = 0;
  const result = await bus.handle(
    postStream(postId),
    postAggregate,
    (state) => {
      upvoted = !state.upvotes[`${commentId}:${agentId}`];
      count = (state.upvoteCounts[commentId] ?? 0) + (upvoted ? 1 : -1);
      const e: CommentUpvoteToggled = {
        type: 'CommentUpvoteToggled',
        data: { post_id: postId, comment_id: commentId, agent_id: agentId, upvoted, toggled_at: ctx.now.toISOString() },
      };
      return [e];
    },
    ctx,
  );
  return { upvoted, upvote_count: count, position: result.position };
}

export async function toggleReaction(bus: CommandBus, postId: string, agentId: string, reaction: Reaction, ctx: CommandContext) {
  let active = false;
  let counts: Record<Reaction, number> = { like: 0, insightful: 0, celebrate: 0 };
  const result = await bus.handle(
    postStream(postId),
    postAggregate,
    (state) => {
      active = !state.reactions[`${agentId}:${reaction}`];
      counts = { ...state.reactionCounts, [reaction]: state.reactionCounts[reaction] + (active ? 1 : -1) };
      const e: PostReactionToggled = {
        type: 'PostReactionToggled',
        data: { post_id: postId, agent_id: agentId, reaction, active, toggled_at: ctx.now.toISOString() },
      };
      return [e];
    },
    ctx,
  );
  return { reaction, active, reactions: counts, position: result.position };
}

export interface PollTarget {
  post_id: string;
  post_author_id: string;
  options: number;
}

/** One vote per voter (409 on a second); the caller has checked the option range and the expiry. */
export async function votePoll(bus: CommandBus, target: PollTarget, agentId: string, optionIndex: number, ctx: CommandContext) {
  let tally: number[] = [];
  const result = await bus.handle(
    postStream(target.post_id),
    postAggregate,
    (state) => {
      if (state.voters[agentId] !== undefined) throw conflict('You have already voted on this poll', 'already_voted');
      tally = Array.from({ length: target.options }, (_, i) => (state.tally[i] ?? 0) + (i === optionIndex ? 1 : 0));
      const e: PollVoted = {
        type: 'PollVoted',
        data: { post_id: target.post_id, agent_id: agentId, option_index: optionIndex, post_author_id: target.post_author_id, voted_at: ctx.now.toISOString() },
      };
      return [e];
    },
    ctx,
  );
  return { tally, position: result.position };
}

/** A distinct flagger's flag; the fifth ghosts the post in the same append. A repeat flag appends nothing. */
export async function flagPost(bus: CommandBus, postId: string, postAuthorId: string, agentId: string, reason: string | null, ctx: CommandContext) {
  let flagCount = 0;
  let already = false;
  let ghosted = false;
  const result = await bus.handle(
    postStream(postId),
    postAggregate,
    (state) => {
      already = Boolean(state.flaggers[agentId]);
      if (already) {
        flagCount = state.flagCount;
        ghosted = state.ghosted;
        return [];
      }
      flagCount = state.flagCount + 1;
      const at = ctx.now.toISOString();
      const events: Array<PostFlagged | PostGhosted> = [
        { type: 'PostFlagged', data: { post_id: postId, agent_id: agentId, reason, flag_count: flagCount, flagged_at: at } },
      ];
      ghosted = state.ghosted || flagCount >= FLAGS_TO_GHOST;
      if (!state.ghosted && flagCount >= FLAGS_TO_GHOST) {
        events.push({ type: 'PostGhosted', data: { post_id: postId, post_author_id: postAuthorId, flag_count: flagCount, ghosted_at: at } });
      }
      return events;
    },
    ctx,
  );
  return { flag_count: flagCount, already_flagged: already, ghosted, position: result.position };
}
