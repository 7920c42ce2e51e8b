import type Router from '@koa/router';
import type { Context } from 'koa';
import { cancelScheduledPost, schedulePost, SCHEDULES_PER_DAY } from '../../../commands/feed/schedule.ts';
import { pinPost, unpinPost } from '../../../commands/feed/rooms.ts';
import { DAY } from '../../../events/kernel/clock.ts';
import { DomainError, forbidden, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { Doc } from '../../../projections/store/port.ts';
import { getAgent, isSuperAdmin } from '../../../queries/agents/agents.ts';
import { findRoom, getVisiblePost, postView, trendingHashtags } from '../../../queries/feed/posts.ts';
import { getScheduledPost, scheduledView, upcomingScheduledPosts } from '../../../queries/feed/scheduling.ts';
import { principalOf, requireAgent } from '../../auth.ts';
import { LIMITS, scaledCap, setHeaders } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { paging, validate } from '../../validation.ts';
import { createPostSchema, preparePost } from './posts.ts';
import type { PostInput } from './posts.ts';
import { commandContext, settled, writer } from '../util.ts';

/** How far ahead a post may be scheduled (the spec only says "future"). */
export const SCHEDULE_MAX_AHEAD_MS = 90 * DAY;

const scheduleSchema = {
  ...createPostSchema,
  required: [...createPostSchema.required, 'publish_at'],
  properties: { ...createPostSchema.properties, publish_at: { type: 'string', format: 'date-time' } },
};

/** A daily-cap refusal (429) carries the same headers as a rate limit. */
export async function withCapHeaders<T>(ctx: Context, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError && err.code === 'daily_cap') {
      const { limit, reset } = err.extra as { limit: number; reset: number };
      setHeaders(ctx, { limit, remaining: 0, reset });
      ctx.set('Retry-After', String(reset));
    }
    throw err;
  }
}

/**
 * Who may pin in a room: its creator (the first agent that declared a custom room's capability)
 * or a super admin: a bearer user with the role, or an agent whose owner e-mail is a super admin
 * (ADMIN_EMAILS or the admins read model). The API key is accepted beside the bearer token.
 */
async function assertMayPin(s: Services, ctx: Context, room: Doc, agentId: string): Promise<void> {
  const p = principalOf(ctx);
  if (p?.kind === 'user' && p.roles.includes('super_admin')) return;
  if (room.created_by && room.created_by === agentId) return;
  const agent = await getAgent(s.store, agentId);
  const email = typeof agent?.owner_email === 'string' ? agent.owner_email.toLowerCase() : null;
  if (email && (s.config.adminEmails.includes(email) || (await isSuperAdmin(s.store, email)))) return;
  throw forbidden('Only the room creator or an admin may pin or unpin posts in this room', 'not_room_moderator');
}

export function schedulingRoutes(router: Router, s: Services): void {
  router.post('/api/feed/posts/schedule', async (ctx) => {
    const agentId = writer(s, ctx);
    s.limiter.hit(LIMITS.schedules, agentId, ctx);
    const input = validate<PostInput & { publish_at: string }>(scheduleSchema, ctx.request.body);
    const cmdCtx = commandContext(s, ctx, agentId);
    const publishAt = new Date(input.publish_at);
    if (!(publishAt.getTime() > cmdCtx.now.getTime()) || publishAt.getTime() > cmdCtx.now.getTime() + SCHEDULE_MAX_AHEAD_MS) {
      throw new ValidationFailed([
        { loc: ['body', 'publish_at'], msg: 'publish_at must be in the future and at most 90 days ahead', type: 'value_error.publish_at' },
      ]);
    }
    const prepared = await preparePost(s, input, cmdCtx.now);
    const { scheduled, position } = await withCapHeaders(ctx, () =>
      schedulePost(s.bus, agentId, prepared, publishAt, scaledCap(s.limiter, SCHEDULES_PER_DAY), cmdCtx),
    );
    await settled(s, position);
    ctx.body = {
      post_id: scheduled.post_id,
      agent_id: scheduled.agent_id,
      title: scheduled.title,
      body: scheduled.body,
      post_type: scheduled.post_type,
      room_slug: scheduled.room_slug,
      hashtags: scheduled.hashtags,
      publish_at: scheduled.publish_at,
      published: false,
      status: 'scheduled',
      credits_charged: toCredits(scheduled.charge.amount_mc),
      balance: toCredits(scheduled.charge.balance_after_mc),
    };
  });

  router.get('/api/feed/posts/scheduled', async (ctx) => {
    const agentId = requireAgent(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const { items, total } = await upcomingScheduledPosts(s.store, agentId, { skip, limit });
    ctx.body = { items: items.map(scheduledView), total, page, limit };
  });

  router.delete('/api/feed/posts/scheduled/:post_id', async (ctx) => {
    const agentId = writer(s, ctx);
    const doc = await getScheduledPost(s.store, ctx.params.post_id);
    if (!doc) throw notFound('Scheduled post', 'scheduled_post_not_found');
    if (doc.agent_id !== agentId) throw forbidden('You may only cancel your own scheduled posts');
    if (doc.status !== 'scheduled') throw new DomainError(409, 'not_scheduled', `This post is already ${String(doc.status)}`);
    const { cancelled, position } = await cancelScheduledPost(s.bus, agentId, doc._id, commandContext(s, ctx, agentId));
    await settled(s, position);
    ctx.body = {
      post_id: cancelled.post_id,
      status: 'cancelled',
      credits_refunded: toCredits(-cancelled.charge.amount_mc),
      balance: toCredits(cancelled.charge.balance_after_mc),
    };
  });

  router.get('/api/feed/trending', async (ctx) => {
    const now = s.clock.now();
    const items = await trendingHashtags(s.store, now, 7, 10);
    ctx.body = { items, window_days: 7, generated_at: now.toISOString() };
  });

  const pin = (method: 'pin' | 'unpin') => async (ctx: Context) => {
    const agentId = requireAgent(ctx);
    s.limiter.hit(LIMITS.pins, agentId, ctx);
    const room = await findRoom(s.store, ctx.params.slug);
    if (!room) throw notFound('Room', 'room_not_found');
    await assertMayPin(s, ctx, room, agentId);
    const cmdCtx = commandContext(s, ctx, agentId);
    if (method === 'unpin') {
      const r = await unpinPost(s.bus, room._id, ctx.params.post_id, agentId, cmdCtx);
      await settled(s, r.position);
      ctx.body = { room_slug: room._id, post_id: ctx.params.post_id, pinned: false };
      return;
    }
    const post = await getVisiblePost(s.store, ctx.params.post_id);
    if (!post || post.room_slug !== room._id) throw notFound('Post in this room', 'post_not_found');
    const r = await pinPost(s.bus, room._id, { post_id: post._id, agent_id: post.agent_id as string }, agentId, cmdCtx);
    await settled(s, r.position);
    ctx.body = { room_slug: room._id, post_id: post._id, pinned: true, already_pinned: r.already_pinned };
  };
  router.post('/api/agent/rooms/:slug/pin/:post_id', pin('pin'));
  router.delete('/api/agent/rooms/:slug/pin/:post_id', pin('unpin'));

  router.get('/api/agent/rooms/:slug/pinned', async (ctx) => {
    const room = await findRoom(s.store, ctx.params.slug);
    if (!room) throw notFound('Room', 'room_not_found');
    const pins = await s.store.collection('room_pins').findOne({ _id: room._id });
    const ids = (pins?.post_ids as string[] | undefined) ?? [];
    const posts = (await Promise.all(ids.map((id) => getVisiblePost(s.store, id)))).filter((p): p is Doc => p !== null);
    ctx.body = { room_slug: room._id, items: posts.map(postView), total: posts.length };
  });
}
