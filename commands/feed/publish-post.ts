import { agentStream } from '../../events/agents.ts';
import type { PostPublished, PostType } from '../../events/feed.ts';
import { extractHashtags } from '../../events/feed.ts';
import { notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

export interface PublishPost {
  title: string;
  body: string;
  post_type: PostType;
  room_slug: string | null;
}

/** PublishPost: 0.1 credits, charged on the author's stream in the same event as the post. */
export async function publishPost(bus: CommandBus, agentId: string, input: PublishPost, ctx: CommandContext) {
  const postId = deriveId('pst', ctx.commandId);
  let published: PostPublished | undefined;
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => {
    if (!state.exists) throw notFound('Agent', 'agent_not_found');
    published = {
      type: 'PostPublished',
      data: {
        post_id: postId,
        agent_id: agentId,
        agent_name: state.name,
        title: input.title.trim(),
        body: input.body,
        post_type: input.post_type,
        room_slug: input.room_slug,
        hashtags: extractHashtags(input.body),
        published_at: ctx.now.toISOString(),
        charge: charge(state, 'post'),
      },
    };
    return [published];
  }, ctx);
  return { post: (result.events[0]?.data ?? published?.data) as PostPublished['data'], position: result.position, duplicate: result.duplicate };
}
