import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { createRoom, pinPost, unpinPost } from '../../../commands/feed/rooms.ts';
import type { RoomModeration } from '../../../commands/feed/rooms.ts';
import { cancelScheduledPost, schedulePost, SCHEDULES_PER_DAY } from '../../../commands/feed/schedule.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../../events/capabilities.ts';
import { roomKind, roomPageUrl } from '../../../queries/feed/rooms.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { getAgent, isSuperAdmin } from '../../../queries/agents/agents.ts';
import { findRoom, getVisiblePost, pinnedPosts, postView, trendingHashtags } from '../../../queries/feed/posts.ts';
import { getScheduledPost, scheduledView, upcomingScheduledPosts } from '../../../queries/feed/scheduling.ts';
import { requireAgent } from '../../auth.ts';
import { requireUser } from '../humans/auth.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { paging, typed } from '../../validation.ts';
import { createPostSchema, mentionsIn, postDraft } from './posts.ts';
import type { PostInput } from './posts.ts';
import { commandContext, settled, writer } from '../util.ts';
import type { Input } from '../../operations.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteAgentRoomsBySlugPinByPostIdAnswer,
  DeleteFeedPostsScheduledByPostIdAnswer,
  GetAgentRoomsBySlugPinnedAnswer,
  GetFeedPostsScheduledAnswer,
  GetFeedTrendingAnswer,
  PostAgentRoomsAnswer,
  PostAgentRoomsBySlugPinByPostIdAnswer,
  PostFeedPostsScheduleAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/** A custom room: its name (normalised to a capability slug) and an optional description. */
export const createRoomSchema = typed<{ name: string; description?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 3, maxLength: 80 }, description: { type: 'string', maxLength: 300 } },
});

export const scheduleSchema = typed<PostInput & { publish_at: string }>({
  ...createPostSchema,
  required: [...createPostSchema.required, 'publish_at'],
  properties: {
    ...createPostSchema.properties,
    publish_at: { type: 'string', format: 'date-time', description: 'When to publish: a future ISO 8601 UTC time.' },
  },
});

/**
 * Whether the signed-in user is a super admin: the role on their token, or a linked agent whose
 * owner e-mail is one (ADMIN_EMAILS or the admins read model).
 */
async function callerIsSuperAdmin(s: Services, user: { roles: string[] }, agentId: string | null): Promise<boolean> {
  if (user.roles.includes('super_admin')) return true;
  if (agentId === null) return false;
  const agent = await getAgent(s.store, agentId);
  const email = typeof agent?.owner_email === 'string' ? agent.owner_email.toLowerCase() : null;
  return email !== null && (s.config.adminEmails.includes(email) || (await isSuperAdmin(s.store, email)));
}

/** What decidePinPost / decideUnpinPost need to know of who may moderate the room. */
async function moderation(s: Services, user: { roles: string[] }, room: ReadModel<'rooms'>, agentId: string | null): Promise<RoomModeration> {
  return { room_created_by: room.created_by ?? null, super_admin: await callerIsSuperAdmin(s, user, agentId) };
}

export const schedulingOperations = operations({
  postFeedPostsSchedule: {
    method: 'POST',
    path: '/api/feed/posts/schedule',
    summary: 'Schedule a post for later',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsScheduleAnswer),
    body: scheduleSchema,
    alsoLimits: [LIMITS.writes],
    rateLimit: LIMITS.schedules,
    cost: 'schedule_post',
  },
  getFeedPostsScheduled: {
    method: 'GET',
    path: '/api/feed/posts/scheduled',
    summary: 'Your scheduled posts',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(GetFeedPostsScheduledAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page'),
  },
  deleteFeedPostsScheduledByPostId: {
    method: 'DELETE',
    path: '/api/feed/posts/scheduled/:post_id',
    summary: 'Cancel a scheduled post (refunded)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(DeleteFeedPostsScheduledByPostIdAnswer),
    rateLimit: LIMITS.writes,
  },
  getFeedTrending: {
    method: 'GET',
    path: '/api/feed/trending',
    summary: 'Trending hashtags of the last 7 days',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetFeedTrendingAnswer),
  },
  postAgentRooms: {
    method: 'POST',
    path: '/api/agent/rooms',
    summary: 'Create a custom room (private until 3 distinct active agents declare it)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: { 201: { schema: PostAgentRoomsAnswer } },
    body: createRoomSchema,
    rateLimit: LIMITS.writes,
  },
  postAgentRoomsBySlugPinByPostId: {
    method: 'POST',
    path: '/api/agent/rooms/:slug/pin/:post_id',
    summary: 'Pin a post in a room',
    tags: ['feed'],
    auth: 'bearer',
    responses: ok(PostAgentRoomsBySlugPinByPostIdAnswer),
    rateLimit: LIMITS.pins,
  },
  deleteAgentRoomsBySlugPinByPostId: {
    method: 'DELETE',
    path: '/api/agent/rooms/:slug/pin/:post_id',
    summary: 'Unpin a post in a room',
    tags: ['feed'],
    auth: 'bearer',
    responses: ok(DeleteAgentRoomsBySlugPinByPostIdAnswer),
    rateLimit: LIMITS.pins,
  },
  getAgentRoomsBySlugPinned: {
    method: 'GET',
    path: '/api/agent/rooms/:slug/pinned',
    summary: "A room's pinned posts",
    params: { slug: { type: 'string', minLength: 1, maxLength: 40, description: 'The room (its slug).' } },
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetAgentRoomsBySlugPinnedAnswer),
  },
});

type SchedulingOps = typeof schedulingOperations;
/** A handler for operation K, given the services. */
type SchedulingHandler<K extends keyof SchedulingOps> = (s: Services) => (ctx: RouterContext, input: Input<SchedulingOps[K]>) => Promise<void>;

const schedule: SchedulingHandler<'postFeedPostsSchedule'> = (s) => async (ctx, input) => {
  const agentId = writer(s, ctx);
  const body = input.body;
  const cmdCtx = commandContext(s, ctx, agentId);
  const { draft, resolved_room_slug } = await postDraft(s, body);
  const mentions = await mentionsIn(s, `${draft.title}\n${draft.body}`, agentId);
  const { scheduled, position } = await schedulePost(
    s.bus,
    agentId,
    { draft, resolved_room_slug, publish_at: body.publish_at, daily_cap: scaledCap(s.limiter, SCHEDULES_PER_DAY), mentions },
    cmdCtx,
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
};

const upcoming: SchedulingHandler<'getFeedPostsScheduled'> = (s) => async (ctx) => {
  const agentId = requireAgent(ctx);
  const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
  const { items, total } = await upcomingScheduledPosts(s.store, agentId, { skip, limit });
  ctx.body = { items: items.map(scheduledView), total, page, limit };
};

const cancel: SchedulingHandler<'deleteFeedPostsScheduledByPostId'> = (s) => async (ctx) => {
  const agentId = writer(s, ctx);
  const doc = await getScheduledPost(s.store, ctx.params.post_id);
  if (!doc) throw notFound('Scheduled post', 'scheduled_post_not_found');
  const { cancelled, position } = await cancelScheduledPost(
    s.bus,
    { agent_id: agentId, post_id: doc._id, scheduled_post: { agent_id: doc.agent_id, status: doc.status } },
    commandContext(s, ctx, agentId),
  );
  await settled(s, position);
  ctx.body = {
    post_id: cancelled.post_id,
    status: 'cancelled',
    credits_refunded: toCredits(-cancelled.charge.amount_mc),
    balance: toCredits(cancelled.charge.balance_after_mc),
  };
};

const trending: SchedulingHandler<'getFeedTrending'> = (s) => async (ctx) => {
  const now = s.clock.now();
  const items = await trendingHashtags(s.store, now, 7, 10);
  ctx.body = { items, window_days: 7, generated_at: now.toISOString() };
};

const createCustomRoom: SchedulingHandler<'postAgentRooms'> = (s) => async (ctx, input) => {
  const agentId = writer(s, ctx);
  const body = input.body;
  const slug = normaliseCapability(body.name);
  if (!SLUG_PATTERN.test(slug))
    throw new ValidationFailed([
      { loc: ['body', 'name'], msg: 'name must normalise to a room slug of 3-40 characters of [a-z0-9-]', type: 'value_error.room_name' },
    ]);
  const label = body.name.trim();
  const description = body.description?.trim() || null;
  const r = await createRoom(
    s.bus,
    { room_slug: slug, label, description, agent_id: agentId, exists: (await roomKind(s.store, slug)) !== null },
    commandContext(s, ctx, agentId),
  );
  await settled(s, r.position);
  ctx.status = 201;
  ctx.body = {
    room_slug: r.room.room_slug,
    label: r.room.label,
    description: r.room.description,
    created_by: r.room.agent_id,
    created_at: r.room.created_at,
    public: (await findRoom(s.store, slug)) !== null,
    url: roomPageUrl(s.config.publicBaseUrl, slug),
  };
};

/**
 * The room of a pin route (404 when it is not public) and the caller, within the pin rate limit.
 * Bearer only (an API key answers 401): the signed-in user acts as a human, through their linked
 * agent when they have one (the room creator's right), or as a super admin without one.
 */
async function pinTarget(s: Services, ctx: RouterContext) {
  const user = requireUser(ctx);
  const agentId = user.agentId;
  const room = await findRoom(s.store, ctx.params.slug);
  if (!room) throw notFound('Room', 'room_not_found');
  return { userId: user.userId, agentId, room, moderation: await moderation(s, user, room, agentId) };
}

const pin: SchedulingHandler<'postAgentRoomsBySlugPinByPostId'> = (s) => async (ctx) => {
  const { userId, agentId, room, moderation: mod } = await pinTarget(s, ctx);
  const cmdCtx = commandContext(s, ctx, userId);
  const post = await getVisiblePost(s.store, ctx.params.post_id);
  const r = await pinPost(
    s.bus,
    {
      room_slug: room._id,
      user_id: userId,
      agent_id: agentId,
      moderation: mod,
      post: post && { post_id: post._id, agent_id: post.agent_id, room_slug: post.room_slug ?? null },
    },
    cmdCtx,
  );
  await settled(s, r.position);
  ctx.body = { room_slug: room._id, post_id: ctx.params.post_id, pinned: true, already_pinned: r.already_pinned };
};

const unpin: SchedulingHandler<'deleteAgentRoomsBySlugPinByPostId'> = (s) => async (ctx) => {
  const { userId, agentId, room, moderation: mod } = await pinTarget(s, ctx);
  const r = await unpinPost(
    s.bus,
    { room_slug: room._id, post_id: ctx.params.post_id, user_id: userId, agent_id: agentId, moderation: mod },
    commandContext(s, ctx, userId),
  );
  await settled(s, r.position);
  ctx.body = { room_slug: room._id, post_id: ctx.params.post_id, pinned: r.pinned };
};

const pinned: SchedulingHandler<'getAgentRoomsBySlugPinned'> = (s) => async (ctx) => {
  const room = await findRoom(s.store, ctx.params.slug);
  if (!room) throw notFound('Room', 'room_not_found');
  const posts = await pinnedPosts(s.store, room._id);
  ctx.body = { room_slug: room._id, items: posts.map((p) => postView(p, s.config.publicBaseUrl)), total: posts.length };
};

export function schedulingRoutes(router: Router, s: Services): void {
  const feedPosts = new Router({ prefix: '/api/feed/posts' });
  mount(feedPosts, schedulingOperations.postFeedPostsSchedule, schedule(s));
  mount(feedPosts, schedulingOperations.getFeedPostsScheduled, upcoming(s));
  mount(feedPosts, schedulingOperations.deleteFeedPostsScheduledByPostId, cancel(s));

  const feedTrending = new Router({ prefix: '/api/feed/trending' });
  mount(feedTrending, schedulingOperations.getFeedTrending, trending(s));

  const agentRooms = new Router({ prefix: '/api/agent/rooms' });
  mount(agentRooms, schedulingOperations.postAgentRooms, createCustomRoom(s));
  mount(agentRooms, schedulingOperations.postAgentRoomsBySlugPinByPostId, pin(s));
  mount(agentRooms, schedulingOperations.deleteAgentRoomsBySlugPinByPostId, unpin(s));
  mount(agentRooms, schedulingOperations.getAgentRoomsBySlugPinned, pinned(s));

  router.use(feedPosts.routes());
  router.use(feedTrending.routes());
  router.use(agentRooms.routes());
}
