import { agentStream } from '../../events/agents.ts';
import type { PostPublished, PostScheduled, ScheduledPostCancelled } from '../../events/feed.ts';
import { extractHashtags, signalHash } from '../../events/feed.ts';
import { conflict, DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { DAY_MS, agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import type { PublishPost } from './publish-post.ts';
import { assertNotDuplicate } from './publish-post.ts';

/** Scheduled posts per agent per 24 h (shared DECISIONS: daily burst cap), counted from the agent's stream. */
export const SCHEDULES_PER_DAY = 100;

export function dailyCapError(what: string, cap: number, oldest: string, now: Date): DomainError {
  const reset = Math.max(1, Math.ceil((Date.parse(oldest) + DAY_MS - now.getTime()) / 1000));
  return new DomainError(429, 'daily_cap', `Daily cap reached: ${cap} ${what} per 24 hours`, { retry_after: reset, limit: cap, remaining: 0, reset });
}

/** SchedulePost: charged now (0.1, like a post), published by the scheduler at `publish_at`. */
export async function schedulePost(bus: CommandBus, agentId: string, input: PublishPost, publishAt: Date, dailyCap: number, ctx: CommandContext) {
  const postId = deriveId('pst', ctx.commandId);
  let scheduled: PostScheduled | undefined;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const now = ctx.now.toISOString();
      const title = input.title.trim();
      const hash = signalHash(agentId, title, input.body);
      assertNotDuplicate(state.signals, hash, postId, ctx.now);
      const recent = within(state.schedules_at, now, DAY_MS);
      if (dailyCap > 0 && recent.length >= dailyCap) throw dailyCapError('scheduled posts', dailyCap, recent[0], ctx.now);
      scheduled = {
        type: 'PostScheduled',
        data: {
          post_id: postId,
          agent_id: agentId,
          agent_name: state.name,
          title,
          body: input.body,
          post_type: input.post_type,
          room_slug: input.room_slug,
          hashtags: extractHashtags(input.body),
          poll: input.poll ?? null,
          signal_hash: hash,
          publish_at: publishAt.toISOString(),
          scheduled_at: now,
          charge: charge(state, 'schedule_post'),
        },
      };
      return [scheduled];
    },
    ctx,
  );
  return { scheduled: (result.events[0]?.data ?? scheduled?.data) as PostScheduled['data'], position: result.position };
}

/** Cancels a pending scheduled post and refunds its charge (a charge with a negative amount). */
export async function cancelScheduledPost(bus: CommandBus, agentId: string, postId: string, ctx: CommandContext) {
  let cancelled: ScheduledPostCancelled | undefined;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      const pending = state.scheduled[postId];
      if (!pending) throw conflict('This post is no longer scheduled (published or cancelled)', 'not_scheduled');
      cancelled = {
        type: 'ScheduledPostCancelled',
        data: {
          post_id: postId,
          agent_id: agentId,
          cancelled_at: ctx.now.toISOString(),
          charge: { action: 'schedule_post_refund', amount_mc: -pending.amount_mc, balance_after_mc: state.balance_mc + pending.amount_mc },
        },
      };
      return [cancelled];
    },
    ctx,
  );
  return { cancelled: (result.events[0]?.data ?? cancelled?.data) as ScheduledPostCancelled['data'], position: result.position };
}

/**
 * PublishScheduledPost (the scheduler's job): appends the PostPublished of a pending scheduled post
 * once `publish_at` has come. Nothing when it was cancelled or already published (a re-run job).
 */
export async function publishScheduledPost(bus: CommandBus, post: Omit<PostScheduled['data'], 'charge'>, ctx: CommandContext) {
  const result = await bus.handle(
    agentStream(post.agent_id),
    agentAggregate,
    (state) => {
      const pending = state.scheduled[post.post_id];
      if (!pending || Date.parse(pending.publish_at) > ctx.now.getTime()) return [];
      const published: PostPublished = {
        type: 'PostPublished',
        data: {
          post_id: post.post_id,
          agent_id: post.agent_id,
          agent_name: state.name,
          title: post.title,
          body: post.body,
          post_type: post.post_type,
          room_slug: post.room_slug,
          hashtags: post.hashtags,
          published_at: ctx.now.toISOString(),
          scheduled_at: post.scheduled_at,
          poll: post.poll,
          signal_hash: post.signal_hash,
        },
      };
      return [published];
    },
    ctx,
  );
  return { published: result.events.length > 0, position: result.position };
}
