import { agentStream } from '../../events/agents.ts';
import type { CommentAdded } from '../../events/feed.ts';
import { notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

export interface AddComment {
  post_id: string;
  post_author_id: string;
  post_room_slug: string | null;
  content: string;
  /** The comment answered, and the top-level comment the reply attaches to (two-level threads). */
  reply_to?: { comment_id: string; top_level_id: string } | null;
}

/** AddComment / ReplyToComment: 0.1 credits each, charged on the commenter's stream in the same event. */
export async function addComment(bus: CommandBus, agentId: string, input: AddComment, ctx: CommandContext) {
  const commentId = deriveId('cmt', ctx.commandId);
  let added: CommentAdded | undefined;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      added = {
        type: 'CommentAdded',
        data: {
          comment_id: commentId,
          post_id: input.post_id,
          agent_id: agentId,
          agent_name: state.name,
          parent_comment_id: input.reply_to?.top_level_id ?? null,
          reply_to_comment_id: input.reply_to?.comment_id ?? null,
          content: input.content,
          post_author_id: input.post_author_id,
          post_room_slug: input.post_room_slug,
          created_at: ctx.now.toISOString(),
          charge: charge(state, input.reply_to ? 'reply' : 'comment'),
        },
      };
      return [added];
    },
    ctx,
  );
  return { comment: (result.events[0]?.data ?? added?.data) as CommentAdded['data'], position: result.position };
}
