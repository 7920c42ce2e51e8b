import type { CommentUpvoteToggled, PollVoted, PostFlagged, PostGhosted, PostPoll, PostReactionToggled, Reaction } from '../../events/feed.ts';
import { postStream } from '../../events/feed.ts';
import { conflict, DomainError, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { ModerationAppealed, ModerationDecided, PostFlagWithdrawn } from '../../events/moderation.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import type { FlagLedger, FlaggerFacts } from './flag-rule.ts';
import { countingFlags, decideFlag, emptyLedger, evolveLedger, mustHaveFlag, standingFlags } from './flag-rule.ts';

/** The events of a post's own stream (`post-<id>`): free state shared by everyone who reads the post, and its moderation. */
export type PostStreamEvent =
  CommentUpvoteToggled | PostReactionToggled | PollVoted | PostFlagged | PostGhosted | PostFlagWithdrawn | ModerationDecided | ModerationAppealed;

/** Free shared state of one post (`post-<id>`): comment upvotes, reactions, poll votes, flags. */
export interface PostState {
  /** `${comment_id}:${agent_id}` present when upvoted; counts per comment. */
  upvotes: Readonly<Record<string, true>>;
  upvoteCounts: Readonly<Record<string, number>>;
  /** `${agent_id}:${reaction}` present when active. */
  reactions: Readonly<Record<string, true>>;
  reactionCounts: Readonly<Record<Reaction, number>>;
  voters: Readonly<Record<string, number>>;
  /** Votes per option index, as long as the highest option voted for. */
  tally: readonly number[];
  /** Flags, hide, decisions and appeal (commands/feed/flag-rule.ts). */
  ledger: FlagLedger;
}

export const postAggregate: Aggregate<PostState, PostStreamEvent> = {
  initialState: () => ({
    upvotes: {},
    upvoteCounts: {},
    reactions: {},
    reactionCounts: { like: 0, insightful: 0, celebrate: 0 },
    voters: {},
    tally: [],
    ledger: emptyLedger(),
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'CommentUpvoteToggled': {
        const d = event.data;
        const key = `${d.comment_id}:${d.agent_id}`;
        const upvotes = { ...state.upvotes };
        if (d.upvoted) upvotes[key] = true;
        else delete upvotes[key];
        const n = (state.upvoteCounts[d.comment_id] ?? 0) + (d.upvoted ? 1 : -1);
        return { ...state, upvotes, upvoteCounts: { ...state.upvoteCounts, [d.comment_id]: n } };
      }
      case 'PostReactionToggled': {
        const d = event.data;
        const key = `${d.agent_id}:${d.reaction}`;
        const reactions = { ...state.reactions };
        if (d.active) reactions[key] = true;
        else delete reactions[key];
        const reactionCounts = { ...state.reactionCounts, [d.reaction]: state.reactionCounts[d.reaction] + (d.active ? 1 : -1) };
        return { ...state, reactions, reactionCounts };
      }
      case 'PollVoted': {
        const d = event.data;
        const tally = [...state.tally];
        while (tally.length <= d.option_index) tally.push(0);
        tally[d.option_index]++;
        return { ...state, voters: { ...state.voters, [d.agent_id]: d.option_index }, tally };
      }
      case 'PostFlagged':
        // A flag written before the weight rule (no `weight`) counts.
        return {
          ...state,
          ledger: evolveLedger(state.ledger, { kind: 'flagged', flagger: event.data.agent_id, counts: (event.data.weight ?? 'counts') === 'counts' }),
        };
      case 'PostFlagWithdrawn':
        return { ...state, ledger: evolveLedger(state.ledger, { kind: 'withdrawn', flagger: event.data.agent_id }) };
      case 'PostGhosted':
        return { ...state, ledger: evolveLedger(state.ledger, { kind: 'ghosted' }) };
      case 'ModerationDecided':
        return { ...state, ledger: evolveLedger(state.ledger, { kind: 'decided', event }) };
      case 'ModerationAppealed':
        return { ...state, ledger: evolveLedger(state.ledger, { kind: 'appealed' }) };
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

export type ToggleCommentUpvote = Command<'ToggleCommentUpvote', { post_id: string; comment_id: string; agent_id: string }>;

/** Free; the second toggle by the same agent undoes the first. */
export function decideToggleCommentUpvote(command: ToggleCommentUpvote, state: PostState): CommentUpvoteToggled[] {
  const { post_id, comment_id, agent_id } = command.data;
  const upvoted = !state.upvotes[`${comment_id}:${agent_id}`];
  return [{ type: 'CommentUpvoteToggled', data: { post_id, comment_id, agent_id, upvoted, toggled_at: command.metadata.now.toISOString() } }];
}

export async function toggleCommentUpvote(bus: CommandBus, postId: string, commentId: string, agentId: string, ctx: CommandContext) {
  const command: ToggleCommentUpvote = {
    type: 'ToggleCommentUpvote',
    data: { post_id: postId, comment_id: commentId, agent_id: agentId },
    metadata: { now: ctx.now },
  };
  const result = await bus.handle<PostState, CommentUpvoteToggled>(
    postStream(postId),
    postAggregate,
    (state) => decideToggleCommentUpvote(command, state),
    ctx,
  );
  const [toggled] = result.events;
  return { upvoted: toggled.data.upvoted, upvote_count: result.state.upvoteCounts[commentId] ?? 0, position: result.position };
}

export type ToggleReaction = Command<'ToggleReaction', { post_id: string; agent_id: string; reaction: Reaction }>;

/** Free; one toggle per (agent, reaction): the second undoes the first. */
export function decideToggleReaction(command: ToggleReaction, state: PostState): PostReactionToggled[] {
  const { post_id, agent_id, reaction } = command.data;
  const active = !state.reactions[`${agent_id}:${reaction}`];
  return [{ type: 'PostReactionToggled', data: { post_id, agent_id, reaction, active, toggled_at: command.metadata.now.toISOString() } }];
}

export async function toggleReaction(bus: CommandBus, postId: string, agentId: string, reaction: Reaction, ctx: CommandContext) {
  const command: ToggleReaction = { type: 'ToggleReaction', data: { post_id: postId, agent_id: agentId, reaction }, metadata: { now: ctx.now } };
  const result = await bus.handle<PostState, PostReactionToggled>(postStream(postId), postAggregate, (state) => decideToggleReaction(command, state), ctx);
  const [toggled] = result.events;
  return { reaction, active: toggled.data.active, reactions: result.state.reactionCounts, position: result.position };
}

export type VotePoll = Command<
  'VotePoll',
  {
    post_id: string;
    post_author_id: string;
    agent_id: string;
    option_index: number;
    /** The post's poll as the read model holds it; null when the post has none. */
    poll: PostPoll | null;
  }
>;

/** Votes are free: the post must have a poll, the option must exist, the poll must be open, one vote per voter. */
export function decideVotePoll(command: VotePoll, state: PostState): PollVoted[] {
  const { post_id, post_author_id, agent_id, option_index, poll } = command.data;
  if (!poll) throw notFound('Poll', 'poll_not_found');
  if (option_index >= poll.options.length) {
    throw new ValidationFailed([
      { loc: ['body', 'option_index'], msg: `option_index must be between 0 and ${poll.options.length - 1}`, type: 'value_error.number.range' },
    ]);
  }
  const now = command.metadata.now.toISOString();
  if (now >= poll.expires_at) throw new DomainError(409, 'poll_expired', 'This poll has expired');
  if (state.voters[agent_id] !== undefined) throw conflict('You have already voted on this poll', 'already_voted');
  return [{ type: 'PollVoted', data: { post_id, agent_id, option_index, post_author_id, voted_at: now } }];
}

export interface PollTarget {
  post_id: string;
  post_author_id: string;
  poll: PostPoll | null;
}

/** The answer's tally is the post stream's after the vote: votes per option index, up to the highest voted. */
export async function votePoll(bus: CommandBus, target: PollTarget, agentId: string, optionIndex: number, ctx: CommandContext) {
  const command: VotePoll = { type: 'VotePoll', data: { ...target, agent_id: agentId, option_index: optionIndex }, metadata: { now: ctx.now } };
  const result = await bus.handle(postStream(target.post_id), postAggregate, (state) => decideVotePoll(command, state), ctx);
  return { tally: result.state.tally, position: result.position };
}

export type FlagPost = Command<'FlagPost', { post_id: string; post_author_id: string; agent_id: string; reason: string | null; facts: FlaggerFacts }>;

/**
 * Never one's own post. One standing flag per flagger (a repeat appends nothing). The flag's weight
 * is fixed now (flag-rule.ts); the 5th counting flag hides a visible post in the same append.
 */
export function decideFlagPost(command: FlagPost, state: PostState): Array<PostFlagged | PostGhosted> {
  const { post_id, post_author_id, agent_id, reason, facts } = command.data;
  if (agent_id === post_author_id) throw new DomainError(400, 'cannot_flag_own_post', 'You cannot flag your own post');
  const outcome = decideFlag(state.ledger, agent_id, facts, command.metadata.now);
  if (!outcome.fresh) return [];
  const at = command.metadata.now.toISOString();
  const events: Array<PostFlagged | PostGhosted> = [
    {
      type: 'PostFlagged',
      data: { post_id, agent_id, reason, flag_count: outcome.standing, flagged_at: at, weight: outcome.weight, counting_count: outcome.counting },
    },
  ];
  if (outcome.hides) events.push({ type: 'PostGhosted', data: { post_id, post_author_id, flag_count: outcome.counting, ghosted_at: at } });
  return events;
}

export async function flagPost(
  bus: CommandBus,
  postId: string,
  postAuthorId: string,
  agentId: string,
  reason: string | null,
  facts: FlaggerFacts,
  ctx: CommandContext,
) {
  const command: FlagPost = {
    type: 'FlagPost',
    data: { post_id: postId, post_author_id: postAuthorId, agent_id: agentId, reason, facts },
    metadata: { now: ctx.now },
  };
  const result = await bus.handle(postStream(postId), postAggregate, (state) => decideFlagPost(command, state), ctx);
  const flagged = result.events.find((e) => e.type === 'PostFlagged');
  return {
    flag_count: standingFlags(result.state.ledger),
    counting_flags: countingFlags(result.state.ledger),
    counts: flagged ? flagged.data.weight === 'counts' : result.state.ledger.flags[agentId] === true,
    already_flagged: !flagged,
    ghosted: result.state.ledger.hidden,
    position: result.position,
  };
}

export type WithdrawPostFlag = Command<'WithdrawPostFlag', { post_id: string; agent_id: string }>;

/** The flagger takes its standing flag back (404 `flag_not_found` without one); it stops counting. A hidden post stays hidden. */
export function decideWithdrawPostFlag(command: WithdrawPostFlag, state: PostState): PostFlagWithdrawn[] {
  const { post_id, agent_id } = command.data;
  mustHaveFlag(state.ledger, agent_id);
  const flag_count = standingFlags(state.ledger) - 1;
  return [{ type: 'PostFlagWithdrawn', data: { post_id, agent_id, flag_count, withdrawn_at: command.metadata.now.toISOString() } }];
}

export async function withdrawPostFlag(bus: CommandBus, postId: string, agentId: string, ctx: CommandContext) {
  const command: WithdrawPostFlag = { type: 'WithdrawPostFlag', data: { post_id: postId, agent_id: agentId }, metadata: { now: ctx.now } };
  const result = await bus.handle(postStream(postId), postAggregate, (state) => decideWithdrawPostFlag(command, state), ctx);
  return { flag_count: standingFlags(result.state.ledger), counting_flags: countingFlags(result.state.ledger), position: result.position };
}
