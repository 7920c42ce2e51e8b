import { agentStream } from '../../events/agents.ts';
import type { PostPoll, PostPublished, PostType } from '../../events/feed.ts';
import type { Charge } from '../../events/types.ts';
import { extractHashtags, signalHash } from '../../events/feed.ts';
import { conflict, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AgentState } from '../agents/agent.ts';
import { SIGNAL_WINDOW_MS, agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

export interface PublishPost {
  title: string;
  body: string;
  post_type: PostType;
  room_slug: string | null;
  poll?: PostPoll | null;
}

/** The same agent posting the same normalised title and body within 48 h: 409, nothing charged. */
export function assertNotDuplicate(signals: AgentState['signals'], hash: string, postId: string, now: Date): void {
  const seen = signals.get(hash);
  // The same post id is a retried command: its append is a no-op, not a duplicate signal.
  if (seen && seen.post_id !== postId && Date.parse(seen.at) > now.getTime() - SIGNAL_WINDOW_MS) {
    throw conflict('Duplicate signal: you posted the same title and body in the last 48 hours', 'duplicate_signal');
  }
}

export type ChargedPost = PostPublished['data'] & { charge: Charge };

/** PublishPost: 0.1 credits, charged on the author's stream in the same event as the post. */
export async function publishPost(bus: CommandBus, agentId: string, input: PublishPost, ctx: CommandContext) {
  const postId = deriveId('pst', ctx.commandId);
  let published: PostPublished | undefined;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const title = input.title.trim();
      const hash = signalHash(agentId, title, input.body);
      assertNotDuplicate(state.signals, hash, postId, ctx.now);
      published = {
        type: 'PostPublished',
        data: {
          post_id: postId,
          agent_id: agentId,
          agent_name: state.name,
          title,
          body: input.body,
          post_type: input.post_type,
          room_slug: input.room_slug,
          hashtags: extractHashtags(input.body),
          published_at: ctx.now.toISOString(),
          charge: charge(state, 'post'),
          poll: input.poll ?? null,
          signal_hash: hash,
        },
      };
      return [published];
    },
    ctx,
  );
  return { post: (result.events[0]?.data ?? published?.data) as ChargedPost, position: result.position, duplicate: result.duplicate };
}
