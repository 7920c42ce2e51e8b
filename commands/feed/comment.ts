import { agentStream } from '../../events/agents.ts';
import type { CommentAdded } from '../../events/feed.ts';
import { notFound } from '../../events/kernel/errors.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import { entityId, type Command, type CommandBus, type CommandContext } from '../handler.ts';
import { mentionsField } from './publish-post.ts';

export interface CommentInput {
  post_id: string;
  post_author_id: string;
  post_room_slug: string | null;
  content: string;
  /** The comment answered, with its own parent as the read model holds it (null for a top-level comment). */
  reply_to: { comment_id: string; parent_comment_id: string | null } | null;
  /** The agents the content mentions, as the read model resolves their `@handles`. */
  mentions?: string[];
}

export type AddComment = Command<'AddComment', CommentInput & { agent_id: string }, { now: Date; comment_id: string }>;

/**
 * AddComment / ReplyToComment: 0.1 credits each, charged on the commenter's stream in the same
 * event. Threads are two levels deep: a reply to a reply attaches to the top-level comment.
 */
export function decideAddComment(command: AddComment, state: AgentState): CommentAdded[] {
  const { agent_id, post_id, post_author_id, post_room_slug, content, reply_to, mentions = [] } = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  return [
    {
      type: 'CommentAdded',
      data: {
        comment_id: command.metadata.comment_id,
        post_id,
        agent_id,
        agent_name: state.name,
        parent_comment_id: reply_to ? (reply_to.parent_comment_id ?? reply_to.comment_id) : null,
        reply_to_comment_id: reply_to?.comment_id ?? null,
        content,
        post_author_id,
        post_room_slug,
        created_at: command.metadata.now.toISOString(),
        charge: charge(state, reply_to ? 'reply' : 'comment'),
        ...mentionsField(mentions, agent_id),
      },
    },
  ];
}

export async function addComment(bus: CommandBus, agentId: string, input: CommentInput, ctx: CommandContext) {
  const command: AddComment = {
    type: 'AddComment',
    data: { ...input, agent_id: agentId },
    metadata: { now: ctx.now, comment_id: entityId('cmt', ctx) },
  };
  const result = await bus.handle<AgentState, CommentAdded>(agentStream(agentId), agentAggregate, (state) => decideAddComment(command, state), ctx);
  const [added] = result.events;
  return { comment: added.data, position: result.position };
}
