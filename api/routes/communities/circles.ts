import Router from '@koa/router';
import { Type, type Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import {
  addCircleReply,
  deleteCirclePost,
  editCirclePost,
  publishCirclePost,
  resolveMentions,
  toggleCircleReaction,
} from '../../../commands/communities/circle-post.ts';
import { markCircleNotificationsRead, notificationSettings, setNotificationSettings } from '../../../commands/communities/circle-user.ts';
import { deleteCircle, joinCircle } from '../../../commands/communities/actions.ts';
import { CIRCLE_REACTIONS, DIGESTS, FLAG_REASONS, INTENTS } from '../../../events/communities.ts';
import { DAY } from '../../../events/kernel/clock.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { Caller } from '../../../queries/communities/communities.ts';
import { circlesOf, circleView, getCircle, getCommunity, isSuper } from '../../../queries/communities/communities.ts';
import {
  circleActivity,
  circleMemberCount,
  circleMembers,
  circleNotifications,
  circlePosts,
  getCirclePost,
  getCircleReply,
  mentionCandidates,
  notificationView,
  postReplies,
  postsSince,
  postView,
  replyView,
  searchCircleMembers,
  trendingTags,
  unreadCount,
  unreadInCircle,
  userCircles,
  visibleCircle,
} from '../../../queries/communities/circles.ts';
import { memberName } from '../../../queries/social/members.ts';
import { linkPreview, linkUrlProblem, RefusedTarget } from '../../link-preview.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { limitOnly, MAX_SKIP } from '../../validation.ts';
import { requireUser } from '../humans/auth.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteBrewCirclesByCircleIdAnswer,
  DeleteBrewCirclesPostsByPostIdAnswer,
  GetBrewCirclesByCircleIdAnswer,
  GetBrewCirclesByCircleIdMembersAnswer,
  GetBrewCirclesByCircleIdPostsAnswer,
  GetBrewCirclesByCircleIdPostsCheckNewAnswer,
  GetBrewCirclesByCircleIdTrendingTagsAnswer,
  GetBrewCirclesCirclesByCircleIdMembersSearchAnswer,
  GetBrewCirclesCommunityByCommunityIdAnswer,
  GetBrewCirclesFlagReasonsAnswer,
  GetBrewCirclesIntentsAnswer,
  GetBrewCirclesNotificationsAnswer,
  GetBrewCirclesNotificationsCountAnswer,
  GetBrewCirclesPostsByPostIdRepliesAnswer,
  GetBrewCirclesReactionsAnswer,
  GetBrewCirclesSettingsNotificationsAnswer,
  GetBrewCirclesUserCirclesAnswer,
  PostBrewCirclesByCircleIdJoinAnswer,
  PostBrewCirclesLinkPreviewAnswer,
  PostBrewCirclesNotificationsReadAnswer,
  PostBrewCirclesPostsAnswer201,
  PostBrewCirclesReactionsAnswer,
  PostBrewCirclesRepliesAnswer201,
  PutBrewCirclesPostsByPostIdAnswer,
  PutBrewCirclesSettingsNotificationsAnswer,
  GetBrewCirclesPostsByPostIdAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const HttpUrl = Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://' });
export const CreatePostRequest = Type.Object(
  {
    circle_id: Type.String({ minLength: 1, maxLength: 64 }),
    content: Type.String({ minLength: 1, maxLength: 5000 }),
    intent: lit(INTENTS),
    link_url: Type.Optional(Type.Union([HttpUrl, Type.Null()])),
  },
  { additionalProperties: false },
);
export const EditPostRequest = Type.Object(
  { content: Type.Optional(Type.String({ minLength: 1, maxLength: 5000 })), intent: Type.Optional(lit(INTENTS)) },
  { additionalProperties: false, minProperties: 1 },
);
export const CreateReplyRequest = Type.Object(
  {
    post_id: Type.String({ minLength: 1, maxLength: 64 }),
    content: Type.String({ minLength: 1, maxLength: 2000 }),
    parent_reply_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export const ToggleReactionRequest = Type.Object(
  { target_type: lit(['post', 'reply'] as const), target_id: Type.String({ minLength: 1, maxLength: 64 }), reaction: lit(CIRCLE_REACTIONS) },
  { additionalProperties: false },
);
export const MarkBrewNotificationsRequest = Type.Object(
  { notification_ids: Type.Optional(Type.Array(Type.String({ pattern: '^cnt_', maxLength: 64 }), { maxItems: 100 })) },
  { additionalProperties: false },
);
export const LinkPreviewRequest = Type.Object({ url: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false });
export const NotificationSettingsRequest = Type.Object(
  {
    mentions: Type.Optional(Type.Boolean()),
    replies: Type.Optional(Type.Boolean()),
    reactions: Type.Optional(Type.Boolean()),
    join_requests: Type.Optional(Type.Boolean()),
    digest: Type.Optional(lit(DIGESTS)),
  },
  { additionalProperties: false },
);

/** `skip` and `limit` query parameters (422 when not integers in range). */
export function skipLimit(query: Record<string, unknown>, defaults: { limit: number; max: number }) {
  const read = (name: string, fallback: number, max: number) => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^\d{1,7}$/.test(raw) || Number(raw) > max || (name === 'limit' && Number(raw) < 1))
      throw new ValidationFailed([
        { loc: ['query', name], msg: `value must be an integer from ${name === 'limit' ? 1 : 0} to ${max}`, type: 'value_error.number.range' },
      ]);
    return Number(raw);
  };
  return { skip: read('skip', 0, MAX_SKIP), limit: read('limit', defaults.limit, defaults.max) };
}

const callerOf = (ctx: Context): Caller => requireUser(ctx);

/**
 * The circle of a post or reply the caller reached by its id: a circle they may not see answers
 * as if the post (or reply) did not exist, so probing an id tells nothing about hidden circles.
 */
async function circleOfTarget(s: Services, circleId: string, caller: Caller, target: 'post' | 'reply') {
  try {
    return await visibleCircle(s.store, circleId, caller);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'circle_not_found')
      throw target === 'post' ? notFound('Circle post', 'circle_post_not_found') : notFound('Reply', 'circle_reply_not_found');
    throw err;
  }
}

/**
 * The actions of `/api/brew-circles/*` shared with the member app's pages (api/routes/web/communities.ts):
 * each takes the signed-in caller (bearer token or browser session) and runs the same commands.
 */

/** A circle write from a page: the caller, counted against the write limit per person (429 past it). */
export function circleWriter<C extends Caller>(s: Services, ctx: Context, caller: C): C {
  s.limiter.hit(LIMITS.writes, caller.userId, ctx);
  return caller;
}

const nameOf = async (s: Services, userId: string) => (await memberName(s.store, userId)) ?? 'Member';

/** `@name` handles in a text, resolved against the circle's members by name prefix. */
async function mentionsIn(s: Services, circleId: string, content: string, author: string) {
  if (!content.includes('@')) return [];
  const handles = [...new Set([...content.matchAll(/@([\p{L}\p{N}_.-]{2,64})/gu)].map((m) => m[1].toLowerCase()))].slice(0, 10);
  if (handles.length === 0) return [];
  const candidates = await mentionCandidates(s.store, circleId, handles);
  return resolveMentions(
    content,
    candidates.map((c) => ({ user_id: String(c.user_id), full_name: String(c.full_name) })),
    author,
  );
}

/** A community with the circles the caller can see (404 when there is no such community). */
export async function communityCircles(s: Services, communityId: string, caller: Caller) {
  const community = await getCommunity(s.store, communityId);
  if (!community) throw notFound('Community', 'community_not_found');
  const circles = [];
  for (const c of await circlesOf(s.store, community._id)) {
    try {
      circles.push({ circle: c, access: await visibleCircle(s.store, c._id, caller) });
    } catch {
      // Not visible to the caller: left out.
    }
  }
  return { community, circles };
}

/** Toggles the caller's reaction on a post or reply of a circle they can see. */
export async function toggleReaction(s: Services, ctx: Context, caller: Caller, body: Static<typeof ToggleReactionRequest>) {
  const postId = body.target_type === 'post' ? body.target_id : String((await getCircleReply(s.store, body.target_id))?.post_id ?? '');
  const post = postId ? await getCirclePost(s.store, postId) : null;
  if (!post)
    throw notFound(body.target_type === 'post' ? 'Circle post' : 'Reply', body.target_type === 'post' ? 'circle_post_not_found' : 'circle_reply_not_found');
  const access = await circleOfTarget(s, String(post.circle_id), caller, body.target_type);
  const res = await toggleCircleReaction(
    s.bus,
    post._id,
    { ...body, user_id: caller.userId, user_name: await nameOf(s, caller.userId), is_member: access.member },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const e = res.events[0];
  const target = body.target_type === 'post' ? await getCirclePost(s.store, post._id) : await getCircleReply(s.store, body.target_id);
  return {
    target_type: body.target_type,
    target_id: body.target_id,
    reaction: body.reaction,
    active: e?.data.on ?? false,
    reactions: target?.reactions ?? {},
  };
}

/** Publishes the caller's post in a circle they can see; `created` false: the same command already ran. */
export async function publishInCircle(s: Services, ctx: Context, caller: Caller, body: Static<typeof CreatePostRequest>) {
  const access = await visibleCircle(s.store, body.circle_id, caller);
  const content = body.content.trim();
  if (!content) throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
  const res = await publishCirclePost(
    s.bus,
    {
      circle_id: access.circle._id,
      community_id: String(access.circle.community_id),
      author_id: caller.userId,
      author_name: await nameOf(s, caller.userId),
      is_member: access.member,
      content,
      intent: body.intent,
      link_url: body.link_url ?? null,
      mentions: await mentionsIn(s, access.circle._id, content, caller.userId),
    },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const e = res.events[0];
  if (!e) {
    const existing = await getCirclePost(s.store, res.post_id);
    if (!existing) throw notFound('Circle post', 'circle_post_not_found');
    return { created: false, post: postView(existing) };
  }
  return { created: true, post: postView(Object.assign({ _id: e.data.post_id }, e.data, { reply_count: 0 })) };
}

/** Adds the caller's reply to a post of a circle they can see. */
export async function replyToPost(s: Services, ctx: Context, caller: Caller, body: Static<typeof CreateReplyRequest>) {
  const post = await getCirclePost(s.store, body.post_id);
  if (!post) throw notFound('Circle post', 'circle_post_not_found');
  const access = await circleOfTarget(s, String(post.circle_id), caller, 'post');
  const content = body.content.trim();
  if (!content) throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
  const res = await addCircleReply(
    s.bus,
    post._id,
    {
      author_id: caller.userId,
      author_name: await nameOf(s, caller.userId),
      is_member: access.member,
      content,
      parent_reply_id: body.parent_reply_id ?? null,
      mentions: await mentionsIn(s, access.circle._id, content, caller.userId),
    },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const reply = await getCircleReply(s.store, res.reply_id);
  if (!reply) throw notFound('Reply', 'circle_reply_not_found');
  return replyView(reply);
}

/** A link's preview through the SSRF guard (422 `url` for a refused target). */
export async function previewLink(s: Services, raw: string) {
  const url = raw.trim();
  const refuse = (msg: string) => new ValidationFailed([{ loc: ['body', 'url'], msg, type: 'value_error.url' }]);
  const problem = linkUrlProblem(url, s.config.webhookAllowLoopback);
  if (problem) throw refuse(problem);
  try {
    return await linkPreview(url, { resolver: s.resolver, allowLoopback: s.config.webhookAllowLoopback });
  } catch (err) {
    if (err instanceof RefusedTarget) throw refuse(err.message.replace('webhook_url', 'url'));
    throw err;
  }
}

/** Joins a circle the caller can see, or asks to (private circles): `pending` with the request's id. */
export async function joinCircleAs(s: Services, ctx: Context, caller: Caller, circleId: string) {
  const access = await visibleCircle(s.store, circleId, caller);
  const res = await joinCircle(s.bus, String(access.circle.community_id), access.circle._id, caller.userId, commandContext(s, ctx, caller.userId));
  await settled(s, res.position);
  const e = res.events[0];
  if (e?.type === 'CircleJoinRequested') return { circle_id: access.circle._id, status: 'pending' as const, request_id: String(e.data.request_id) };
  if (!e && !access.member) return { circle_id: access.circle._id, status: 'pending' as const };
  return { circle_id: access.circle._id, status: 'joined' as const };
}

export const circleOperations = operations({
  getBrewCirclesIntents: {
    method: 'GET',
    path: '/api/brew-circles/intents',
    summary: 'The intents a circle post can carry',
    tags: ['communities'],
    auth: 'none',
    responses: ok(GetBrewCirclesIntentsAnswer),
  },
  getBrewCirclesReactions: {
    method: 'GET',
    path: '/api/brew-circles/reactions',
    summary: 'The reactions on circle posts',
    tags: ['communities'],
    auth: 'none',
    responses: ok(GetBrewCirclesReactionsAnswer),
  },
  getBrewCirclesFlagReasons: {
    method: 'GET',
    path: '/api/brew-circles/flag-reasons',
    summary: 'The reasons a circle post can be flagged for',
    tags: ['communities'],
    auth: 'none',
    responses: ok(GetBrewCirclesFlagReasonsAnswer),
  },
  postBrewCirclesReactions: {
    method: 'POST',
    path: '/api/brew-circles/reactions',
    summary: 'Toggle your reaction on a circle post or reply',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostBrewCirclesReactionsAnswer),
    body: ToggleReactionRequest,
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesNotifications: {
    method: 'GET',
    path: '/api/brew-circles/notifications',
    summary: 'Your circle notifications',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesNotificationsAnswer),
    query: queryOf('skip', { limit: limitQuery(100, 20) }),
  },
  postBrewCirclesNotificationsRead: {
    method: 'POST',
    path: '/api/brew-circles/notifications/read',
    summary: 'Mark circle notifications read (all, or the ids given)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostBrewCirclesNotificationsReadAnswer),
    body: MarkBrewNotificationsRequest,
    bodyOptional: true,
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesNotificationsCount: {
    method: 'GET',
    path: '/api/brew-circles/notifications/count',
    summary: 'Your unread circle notifications count',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesNotificationsCountAnswer),
  },
  getBrewCirclesSettingsNotifications: {
    method: 'GET',
    path: '/api/brew-circles/settings/notifications',
    summary: 'Your circle notification settings',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesSettingsNotificationsAnswer),
  },
  putBrewCirclesSettingsNotifications: {
    method: 'PUT',
    path: '/api/brew-circles/settings/notifications',
    summary: 'Change your circle notification settings',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PutBrewCirclesSettingsNotificationsAnswer),
    body: NotificationSettingsRequest,
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesUserCircles: {
    method: 'GET',
    path: '/api/brew-circles/user/circles',
    summary: 'The circles you are in, by community',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesUserCirclesAnswer),
  },
  getBrewCirclesCommunityByCommunityId: {
    method: 'GET',
    path: '/api/brew-circles/community/:community_id',
    summary: 'A community with the circles you can see',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesCommunityByCommunityIdAnswer),
  },
  postBrewCirclesPosts: {
    method: 'POST',
    path: '/api/brew-circles/posts',
    summary: 'Post in a circle',
    tags: ['communities'],
    auth: 'bearer',
    body: CreatePostRequest,
    rateLimit: LIMITS.user_writes,
    responses: { 201: { schema: PostBrewCirclesPostsAnswer201 } },
  },
  getBrewCirclesPostsByPostId: {
    method: 'GET',
    path: '/api/brew-circles/posts/:post_id',
    summary: 'A circle post',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesPostsByPostIdAnswer),
  },
  putBrewCirclesPostsByPostId: {
    method: 'PUT',
    path: '/api/brew-circles/posts/:post_id',
    summary: 'Edit your circle post',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PutBrewCirclesPostsByPostIdAnswer),
    body: EditPostRequest,
    rateLimit: LIMITS.user_writes,
  },
  deleteBrewCirclesPostsByPostId: {
    method: 'DELETE',
    path: '/api/brew-circles/posts/:post_id',
    summary: 'Delete your circle post',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(DeleteBrewCirclesPostsByPostIdAnswer),
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesPostsByPostIdReplies: {
    method: 'GET',
    path: '/api/brew-circles/posts/:post_id/replies',
    summary: "A circle post's replies",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesPostsByPostIdRepliesAnswer),
    query: queryOf('skip', { limit: limitQuery(100, 50) }),
  },
  postBrewCirclesReplies: {
    method: 'POST',
    path: '/api/brew-circles/replies',
    summary: 'Reply to a circle post',
    tags: ['communities'],
    auth: 'bearer',
    body: CreateReplyRequest,
    rateLimit: LIMITS.user_writes,
    responses: { 201: { schema: PostBrewCirclesRepliesAnswer201 } },
  },
  postBrewCirclesLinkPreview: {
    method: 'POST',
    path: '/api/brew-circles/link-preview',
    summary: "A link's preview (fetched through the SSRF guard)",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostBrewCirclesLinkPreviewAnswer),
    body: LinkPreviewRequest,
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesCirclesByCircleIdMembersSearch: {
    method: 'GET',
    path: '/api/brew-circles/circles/:circle_id/members/search',
    summary: "Search a circle's members by name (mentions)",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesCirclesByCircleIdMembersSearchAnswer),
    query: queryOf('q', { limit: limitQuery(50, 10) }),
  },
  getBrewCirclesByCircleId: {
    method: 'GET',
    path: '/api/brew-circles/:circle_id',
    summary: 'A circle you can see',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesByCircleIdAnswer),
  },
  deleteBrewCirclesByCircleId: {
    method: 'DELETE',
    path: '/api/brew-circles/:circle_id',
    summary: 'Delete a circle (its community admins, super admins)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(DeleteBrewCirclesByCircleIdAnswer),
    rateLimit: LIMITS.user_writes,
  },
  postBrewCirclesByCircleIdJoin: {
    method: 'POST',
    path: '/api/brew-circles/:circle_id/join',
    summary: 'Join a circle (or ask to, for a private one)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostBrewCirclesByCircleIdJoinAnswer),
    rateLimit: LIMITS.user_writes,
  },
  getBrewCirclesByCircleIdMembers: {
    method: 'GET',
    path: '/api/brew-circles/:circle_id/members',
    summary: "A circle's members",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesByCircleIdMembersAnswer),
    query: queryOf('skip', { limit: limitQuery(100, 50) }),
  },
  getBrewCirclesByCircleIdPosts: {
    method: 'GET',
    path: '/api/brew-circles/:circle_id/posts',
    summary: "A circle's posts (optionally by tag)",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesByCircleIdPostsAnswer),
    query: queryOf('tag', 'skip', { limit: limitQuery(100, 20) }),
  },
  getBrewCirclesByCircleIdTrendingTags: {
    method: 'GET',
    path: '/api/brew-circles/:circle_id/trending-tags',
    summary: "A circle's trending tags",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesByCircleIdTrendingTagsAnswer),
  },
  getBrewCirclesByCircleIdPostsCheckNew: {
    method: 'GET',
    path: '/api/brew-circles/:circle_id/posts/check-new',
    summary: 'Whether a circle has posts newer than since',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetBrewCirclesByCircleIdPostsCheckNewAnswer),
    query: { type: 'object', required: ['since'], properties: { since: { type: 'string', description: 'An ISO 8601 time.' } } },
  },
});

/** `/api/brew-circles/*`: circles, posts, replies, reactions and circle notifications (bearer). */
export function circleRoutes(router: Router, s: Services): void {
  const r = new Router({ prefix: '/api/brew-circles' });
  // In this order: the literal paths before `/:circle_id`. The write limit per signed-in person
  // is counted by `mount` (LIMITS.user_writes); the pages count it with circleWriter.
  listAndNotificationRoutes(r, s);
  postRoutes(r, s);
  circleByIdRoutes(r, s);
  router.use(r.routes());
}

const ctxOf = (s: Services, ctx: Context, userId: string) => commandContext(s, ctx, userId);

/** The lists of intents, reactions and flag reasons, reactions, notifications and their settings, your circles and a community's. */
function listAndNotificationRoutes(r: Router, s: Services): void {
  mount(r, circleOperations.getBrewCirclesIntents, (ctx) => {
    ctx.body = { intents: INTENTS };
  });
  mount(r, circleOperations.getBrewCirclesReactions, (ctx) => {
    ctx.body = { reactions: CIRCLE_REACTIONS };
  });
  mount(r, circleOperations.getBrewCirclesFlagReasons, (ctx) => {
    ctx.body = { flag_reasons: FLAG_REASONS };
  });

  mount(r, circleOperations.postBrewCirclesReactions, async (ctx, input) => {
    const caller = callerOf(ctx);
    ctx.body = await toggleReaction(s, ctx, caller, input.body);
  });

  mount(r, circleOperations.getBrewCirclesNotifications, async (ctx) => {
    const caller = callerOf(ctx);
    const page = skipLimit(ctx.query, { limit: 20, max: 100 });
    const res = await circleNotifications(s.store, caller.userId, page);
    ctx.body = { notifications: res.items.map(notificationView), unread_count: res.unread, skip: page.skip, limit: page.limit };
  });
  mount(r, circleOperations.postBrewCirclesNotificationsRead, async (ctx, input) => {
    const caller = callerOf(ctx);
    const body = input.body;
    const res = await markCircleNotificationsRead(
      s.bus,
      { user_id: caller.userId, notification_ids: body.notification_ids ?? null },
      ctxOf(s, ctx, caller.userId),
    );
    await settled(s, res.position);
    ctx.body = { unread_count: await unreadCount(s.store, caller.userId) };
  });
  mount(r, circleOperations.getBrewCirclesNotificationsCount, async (ctx) => {
    const caller = callerOf(ctx);
    ctx.body = { unread_count: await unreadCount(s.store, caller.userId) };
  });
  mount(r, circleOperations.getBrewCirclesSettingsNotifications, async (ctx) => {
    const caller = callerOf(ctx);
    ctx.body = await notificationSettings(s.bus, caller.userId);
  });
  mount(r, circleOperations.putBrewCirclesSettingsNotifications, async (ctx, input) => {
    const caller = callerOf(ctx);
    const res = await setNotificationSettings(s.bus, { user_id: caller.userId, settings: input.body }, ctxOf(s, ctx, caller.userId));
    await settled(s, res.position);
    ctx.body = res.state.settings;
  });

  mount(r, circleOperations.getBrewCirclesUserCircles, async (ctx) => {
    const caller = callerOf(ctx);
    const memberships = await userCircles(s.store, caller.userId);
    const circles = [];
    for (const m of memberships) {
      const c = await getCircle(s.store, String(m.circle_id));
      if (!c) continue;
      const [activity, unread] = await Promise.all([circleActivity(s.store, c._id), unreadInCircle(s.store, caller.userId, c._id)]);
      circles.push(
        circleView(c, {
          unread_count: unread,
          last_activity_at: activity?.last_activity_at ?? null,
          post_count: activity?.post_count ?? 0,
          joined_at: m.joined_at,
        }),
      );
    }
    ctx.body = { circles, count: circles.length };
  });

  mount(r, circleOperations.getBrewCirclesCommunityByCommunityId, async (ctx) => {
    const caller = callerOf(ctx);
    const { community, circles } = await communityCircles(s, ctx.params.community_id, caller);
    const visible = circles.map(({ circle, access }) => circleView(circle, { is_member: access.member }));
    ctx.body = { community_id: community._id, name: community.name, circle: visible[0] ?? null, circles: visible };
  });
}

/** Circle posts and their replies, and link previews for them. */
function postRoutes(r: Router, s: Services): void {
  mount(r, circleOperations.postBrewCirclesPosts, async (ctx, input) => {
    const caller = callerOf(ctx);
    const res = await publishInCircle(s, ctx, caller, input.body);
    if (res.created) ctx.status = 201;
    ctx.body = res.post;
  });

  /** The post, if its circle is visible to the caller (404 otherwise). */
  const visiblePost = async (ctx: Context, caller: Caller) => {
    const post = await getCirclePost(s.store, ctx.params.post_id);
    if (!post) throw notFound('Circle post', 'circle_post_not_found');
    const access = await circleOfTarget(s, String(post.circle_id), caller, 'post');
    return { post, access };
  };
  mount(r, circleOperations.getBrewCirclesPostsByPostId, async (ctx) => {
    const { post } = await visiblePost(ctx, callerOf(ctx));
    ctx.body = postView(post);
  });
  mount(r, circleOperations.putBrewCirclesPostsByPostId, async (ctx, input) => {
    const caller = callerOf(ctx);
    const body = input.body;
    const { post } = await visiblePost(ctx, caller);
    const content = body.content?.trim();
    if (content === '') throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
    const res = await editCirclePost(s.bus, post._id, { user_id: caller.userId, content, intent: body.intent }, ctxOf(s, ctx, caller.userId));
    await settled(s, res.position);
    ctx.body = postView((await getCirclePost(s.store, post._id)) ?? post);
  });
  mount(r, circleOperations.deleteBrewCirclesPostsByPostId, async (ctx) => {
    const caller = callerOf(ctx);
    const { post } = await visiblePost(ctx, caller);
    const res = await deleteCirclePost(s.bus, post._id, { user_id: caller.userId }, ctxOf(s, ctx, caller.userId));
    await settled(s, res.position);
    ctx.body = { deleted: true, post_id: post._id };
  });
  mount(r, circleOperations.getBrewCirclesPostsByPostIdReplies, async (ctx) => {
    const { post } = await visiblePost(ctx, callerOf(ctx));
    const page = skipLimit(ctx.query, { limit: 50, max: 100 });
    const replies = await postReplies(s.store, post._id, page);
    ctx.body = { replies: replies.map(replyView), reply_count: post.reply_count ?? 0, skip: page.skip, limit: page.limit };
  });

  mount(r, circleOperations.postBrewCirclesReplies, async (ctx, input) => {
    const caller = callerOf(ctx);
    const body = input.body;
    ctx.status = 201;
    ctx.body = await replyToPost(s, ctx, caller, body);
  });

  mount(r, circleOperations.postBrewCirclesLinkPreview, async (ctx, input) => {
    callerOf(ctx);
    ctx.body = await previewLink(s, input.body.url);
  });
}

/** One circle: its members, posts, tags, joining and deleting it. */
function circleByIdRoutes(r: Router, s: Services): void {
  mount(r, circleOperations.getBrewCirclesCirclesByCircleIdMembersSearch, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim().slice(0, 64) : '';
    const limit = limitOnly(ctx.query, { limit: 10, max: 50 });
    const docs = await searchCircleMembers(s.store, circle._id, q, limit);
    ctx.body = { members: docs.map((m) => ({ user_id: m.user_id, full_name: m.full_name })), q };
  });

  mount(r, circleOperations.getBrewCirclesByCircleId, async (ctx) => {
    const access = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const [members, activity] = await Promise.all([circleMemberCount(s.store, access.circle._id), circleActivity(s.store, access.circle._id)]);
    ctx.body = circleView(access.circle, {
      member_count: members,
      post_count: activity?.post_count ?? 0,
      last_activity_at: activity?.last_activity_at ?? null,
      is_member: access.member,
      is_admin: access.admin,
    });
  });
  mount(r, circleOperations.deleteBrewCirclesByCircleId, async (ctx) => {
    const caller = callerOf(ctx);
    const access = await visibleCircle(s.store, ctx.params.circle_id, caller);
    const res = await deleteCircle(
      s.bus,
      String(access.circle.community_id),
      { actor: { user_id: caller.userId, super_admin: isSuper(caller) }, circle_id: access.circle._id },
      ctxOf(s, ctx, caller.userId),
    );
    await settled(s, res.position);
    ctx.body = { deleted: true, circle_id: access.circle._id };
  });
  mount(r, circleOperations.postBrewCirclesByCircleIdJoin, async (ctx) => {
    const caller = callerOf(ctx);
    ctx.body = await joinCircleAs(s, ctx, caller, ctx.params.circle_id);
  });
  mount(r, circleOperations.getBrewCirclesByCircleIdMembers, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const page = skipLimit(ctx.query, { limit: 50, max: 100 });
    const [docs, total] = await Promise.all([circleMembers(s.store, circle._id, page), circleMemberCount(s.store, circle._id)]);
    ctx.body = {
      members: docs.map((m) => ({ user_id: m.user_id, full_name: m.full_name, joined_at: m.joined_at })),
      total,
      skip: page.skip,
      limit: page.limit,
    };
  });
  mount(r, circleOperations.getBrewCirclesByCircleIdPosts, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const page = skipLimit(ctx.query, { limit: 20, max: 100 });
    const tag = typeof ctx.query.tag === 'string' && ctx.query.tag ? ctx.query.tag.replace(/^#/, '').toLowerCase() : undefined;
    const posts = await circlePosts(s.store, circle._id, { ...page, tag });
    ctx.body = { posts: posts.map(postView), skip: page.skip, limit: page.limit, tag: tag ?? null };
  });
  mount(r, circleOperations.getBrewCirclesByCircleIdTrendingTags, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const since = new Date(s.clock.now().getTime() - 29 * DAY).toISOString().slice(0, 10);
    ctx.body = { circle_id: circle._id, days: 30, tags: await trendingTags(s.store, circle._id, since) };
  });
  mount(r, circleOperations.getBrewCirclesByCircleIdPostsCheckNew, async (ctx) => {
    const { circle } = await visibleCircle(s.store, ctx.params.circle_id, callerOf(ctx));
    const raw = ctx.query.since;
    const since = typeof raw === 'string' && raw ? new Date(raw) : null;
    if (!since || Number.isNaN(since.getTime()))
      throw new ValidationFailed([{ loc: ['query', 'since'], msg: 'since is required: an ISO 8601 time', type: 'value_error.datetime' }]);
    const res = await postsSince(s.store, circle._id, since.toISOString(), 20);
    ctx.body = { has_new: res.count > 0, count: res.count, latest_post_id: res.latest[0]?._id ?? null, since: since.toISOString() };
  });
}
