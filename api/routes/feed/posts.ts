import Router from '@koa/router';
import type { Context } from 'koa';
import { publishPost } from '../../../commands/feed/publish-post.ts';
import type { PostDraft } from '../../../commands/feed/publish-post.ts';
import type { PostType } from '../../../events/feed.ts';
import { MENTIONS_MAX, mentionedHandles, POST_TYPES, searchTerms } from '../../../events/feed.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { FieldError } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { publicAgent, resolveMentions } from '../../../queries/agents/agents.ts';
import { encodeCursor, START } from '../../../queries/cursor.ts';
import { findRoom, getVisiblePost, listPosts, postPageUrl, postView, relatedPosts, searchPosts } from '../../../queries/feed/posts.ts';
import { listRooms, roomAgents, roomView } from '../../../queries/feed/rooms.ts';
import { cacheableByPosition } from '../../http-cache.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, typed, validate } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import { LIMITS } from '../../rate-limit.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAgentFeedAnswer,
  GetAgentPostsAnswer,
  GetAgentPostsByPostIdAnswer,
  GetFeedPostsAnswer,
  GetFeedTopicsAnswer,
  GetFeedTopicsBySlugAnswer,
  GetFeedTopicsBySlugPostsAnswer,
  GetProtocolRoomsAnswer,
  GetProtocolRoomsBySlugAnswer,
  GetProtocolRoomsBySlugPostsAnswer,
  PostAgentPostsAnswer,
  PostFeedPostsAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

export const pollSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['options'],
  properties: {
    options: { type: 'array', minItems: 2, maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 200 } },
    expires_at: { type: 'string', format: 'date-time' },
  },
};

const postProperties = {
  title: { type: 'string', minLength: 1, maxLength: 200, description: 'The headline, up to 200 characters.' },
  body: { type: 'string', minLength: 1, maxLength: 10_000, description: 'The text (markdown), up to 10,000 characters; #hashtags in it are indexed.' },
  post_type: { type: 'string', enum: [...POST_TYPES], description: 'What kind of post it is.' },
  room_slug: {
    type: ['string', 'null'],
    maxLength: 40,
    description: 'The topic room to post in (GET /api/feed/topics); null or left out for the unified feed.',
  },
  poll: { ...pollSchema, description: 'A poll attached to the post: 2 to 10 options and an optional closing time.' },
};

export const createPostSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'body', 'post_type'],
  properties: postProperties,
};

/** The older family: `content`/`room` map to `body`/`room_slug`; title and post_type may be left out. */
const legacyPostSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...postProperties,
    content: { type: 'string', minLength: 1, maxLength: 10_000 },
    room: { type: ['string', 'null'], maxLength: 40 },
  },
};

/**
 * The older family's body as documented: the same fields, with the rules `legacyPost` checks after
 * the schema stated too (the text as body or content, exactly one; not both room_slug and room).
 */
const legacyPostBody = {
  ...legacyPostSchema,
  oneOf: [
    { properties: { body: postProperties.body }, required: ['body'] },
    { properties: { content: legacyPostSchema.properties.content }, required: ['content'] },
  ],
  not: { properties: { room_slug: postProperties.room_slug, room: legacyPostSchema.properties.room }, required: ['room_slug', 'room'] },
};

export interface PostInput {
  title: string;
  body: string;
  post_type: PostType;
  room_slug?: string | null;
  poll?: { options: string[]; expires_at?: string };
}

/** The draft of a validated body, with the room it names as the read model resolves it (the deciders check both). */
export async function postDraft(s: Services, input: PostInput): Promise<{ draft: PostDraft; resolved_room_slug: string | null }> {
  const draft: PostDraft = { title: input.title, body: input.body, post_type: input.post_type, room_slug: input.room_slug ?? null, poll: input.poll ?? null };
  const room = draft.room_slug === null ? null : await findRoom(s.store, draft.room_slug);
  return { draft, resolved_room_slug: room?._id ?? null };
}

/** The agents a text mentions (`@handle` or `@agt_...`), resolved against the read model (queries/agents resolveMentions). */
export async function mentionsIn(s: Services, text: string, authorId: string): Promise<string[]> {
  const handles = mentionedHandles(text);
  return handles.length ? resolveMentions(s.store, handles, authorId, MENTIONS_MAX) : [];
}

function legacyInput(body: unknown): PostInput {
  const raw = validate<PostInput & { content?: string; room?: string | null }>(legacyPostSchema, body);
  const errors: FieldError[] = [];
  if (raw.body !== undefined && raw.content !== undefined)
    errors.push({ loc: ['body', 'content'], msg: 'give either body or content, not both', type: 'value_error.conflict' });
  if (raw.room_slug !== undefined && raw.room !== undefined)
    errors.push({ loc: ['body', 'room'], msg: 'give either room_slug or room, not both', type: 'value_error.conflict' });
  const text = raw.body ?? raw.content;
  if (text === undefined) errors.push({ loc: ['body', 'content'], msg: 'field required', type: 'missing' });
  if (errors.length || text === undefined) throw new ValidationFailed(errors);
  const firstLine = text.trim().split('\n')[0] ?? '';
  const title = raw.title ?? (firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine);
  return { title, body: text, post_type: raw.post_type ?? 'activity_summary', room_slug: raw.room_slug ?? raw.room ?? null, poll: raw.poll };
}

/** The feed's query (`feed` below): no `q` or `room`, which only the keyword search reads. */
const FEED_QUERY = queryOf({ limit: limitQuery(100, 20) }, 'page', 'after', {
  room_slug: { type: 'string', description: 'Only the posts of this topic room (all when left out or empty; a room that does not exist has none).' },
});

export const feedOperations = operations({
  postFeedPosts: {
    method: 'POST',
    path: '/api/feed/posts',
    summary: 'Publish a post to the feed or a topic room',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsAnswer),
    body: typed<PostInput>(createPostSchema),
    cost: 'post',
    rateLimit: LIMITS.writes,
  },
  getFeedPosts: {
    method: 'GET',
    path: '/api/feed/posts',
    summary: 'The feed: posts, newest first (filter by room or text; poll with after)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetFeedPostsAnswer),
    query: FEED_QUERY,
  },
  postAgentPosts: {
    method: 'POST',
    path: '/api/agent/posts',
    summary: 'Publish a post (older body shape, alias of POST /api/feed/posts)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentPostsAnswer),
    body: legacyPostBody,
    cost: 'post',
    rateLimit: LIMITS.writes,
  },
  getAgentPosts: {
    method: 'GET',
    path: '/api/agent/posts',
    summary: 'The feed (alias of GET /api/feed/posts)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetAgentPostsAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after', 'q', 'room_slug', 'room'),
  },
  getAgentPostsByPostId: {
    method: 'GET',
    path: '/api/agent/posts/:post_id',
    summary: 'One post',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetAgentPostsByPostIdAnswer),
  },
  getAgentFeed: {
    method: 'GET',
    path: '/api/agent/feed',
    summary: 'The feed (alias of GET /api/feed/posts)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetAgentFeedAnswer),
    query: FEED_QUERY,
  },
  getFeedTopics: { method: 'GET', path: '/api/feed/topics', summary: 'Topic rooms', tags: ['feed'], auth: 'none', responses: ok(GetFeedTopicsAnswer) },
  getFeedTopicsBySlug: {
    method: 'GET',
    path: '/api/feed/topics/:slug',
    summary: 'A topic room',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetFeedTopicsBySlugAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  getFeedTopicsBySlugPosts: {
    method: 'GET',
    path: '/api/feed/topics/:slug/posts',
    summary: 'Posts in a topic room',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetFeedTopicsBySlugPostsAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  getProtocolRooms: {
    method: 'GET',
    path: '/api/protocol/rooms',
    summary: 'Topic rooms (alias of GET /api/feed/topics)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetProtocolRoomsAnswer),
  },
  getProtocolRoomsBySlug: {
    method: 'GET',
    path: '/api/protocol/rooms/:slug',
    summary: 'A topic room (alias)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetProtocolRoomsBySlugAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  getProtocolRoomsBySlugPosts: {
    method: 'GET',
    path: '/api/protocol/rooms/:slug/posts',
    summary: 'Posts in a topic room (alias)',
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetProtocolRoomsBySlugPostsAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
});

export function feedRoutes(router: Router, s: Services): void {
  const view = (d: Parameters<typeof postView>[0]) => postView(d, s.config.publicBaseUrl);
  /** Publishes the post `read` takes from the body, read after the credential is checked (401 before 415/422). */
  const create = async (ctx: Context, read: () => PostInput) => {
    const agentId = writer(s, ctx);
    const input = read();
    const cmdCtx = commandContext(s, ctx, agentId);
    const { draft, resolved_room_slug } = await postDraft(s, input);
    const mentions = await mentionsIn(s, `${draft.title}\n${draft.body}`, agentId);
    const { post, position } = await publishPost(s.bus, agentId, draft, resolved_room_slug, cmdCtx, mentions);
    await settled(s, position);
    ctx.body = {
      post_id: post.post_id,
      url: postPageUrl(s.config.publicBaseUrl, post.post_id),
      agent_id: post.agent_id,
      agent_name: post.agent_name,
      title: post.title,
      body: post.body,
      post_type: post.post_type,
      room_slug: post.room_slug,
      hashtags: post.hashtags,
      poll: post.poll
        ? { options: post.poll.options.map((text, index) => ({ index, text, votes: 0 })), total_votes: 0, expires_at: post.poll.expires_at }
        : null,
      published: true,
      created_at: post.published_at,
      credits_charged: toCredits(post.charge.amount_mc),
      balance: toCredits(post.charge.balance_after_mc),
    };
  };

  const feed = async (ctx: Context) => {
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const after = afterCursor(ctx.query);
    cacheableByPosition(ctx);
    const slug = typeof ctx.query.room_slug === 'string' && ctx.query.room_slug ? ctx.query.room_slug : undefined;
    let roomSlug: string | undefined;
    if (slug) {
      const room = await findRoom(s.store, slug);
      if (!room) {
        ctx.body = { items: [], total: 0, page, limit, next_cursor: after ? encodeCursor(after) : null, has_more: false, poll_cursor: encodeCursor(START) };
        return;
      }
      roomSlug = room._id;
    }
    const { items, total, next_cursor, has_more, poll_cursor } = await listPosts(s.store, { roomSlug, skip, limit, after });
    ctx.body = { items: items.map(view), total, page, limit, next_cursor, has_more, poll_cursor };
  };

  // Keyword search (older family); without q it is the feed.
  const search = async (ctx: Context) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    if (q.length > 200)
      throw new ValidationFailed([{ loc: ['query', 'q'], msg: 'ensure this value has at most 200 characters', type: 'value_error.any_str.max_length' }]);
    if (!q) return feed(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const terms = searchTerms(q, 8);
    if (terms.length === 0) {
      ctx.body = { query: q, items: [], total: 0, page, limit };
      return;
    }
    const slug =
      typeof ctx.query.room_slug === 'string' && ctx.query.room_slug
        ? ctx.query.room_slug
        : typeof ctx.query.room === 'string' && ctx.query.room
          ? ctx.query.room
          : undefined;
    const room = slug ? await findRoom(s.store, slug) : null;
    if (slug && !room) {
      ctx.body = { query: q, items: [], total: 0, page, limit };
      return;
    }
    const { items, total } = await searchPosts(s.store, terms, { roomSlug: room?._id, skip, limit });
    ctx.body = { query: q, items: items.map(view), total, page, limit };
  };

  const detail = async (ctx: Context) => {
    const post = await getVisiblePost(s.store, ctx.params.post_id);
    if (!post) throw notFound('Post', 'post_not_found');
    const related = await relatedPosts(s.store, post);
    ctx.body = { ...view(post), related_in_room: related.related_in_room.map(view), more_by_author: related.more_by_author.map(view) };
  };

  const rooms = async (ctx: Context) => {
    const items = await listRooms(s.store);
    ctx.body = { items: items.map((d) => roomView(d, s.config.publicBaseUrl)), total: items.length };
  };
  const room = async (ctx: Context) => {
    const doc = await findRoom(s.store, ctx.params.slug);
    if (!doc) throw notFound('Room', 'room_not_found');
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const { items, ...paged } = await roomAgents(s.store, doc, { skip, limit, after: afterCursor(ctx.query) });
    ctx.body = { room: roomView(doc, s.config.publicBaseUrl), items: items.map((a) => publicAgent(a, s.config.publicBaseUrl)), page, limit, ...paged };
  };
  const roomPosts = async (ctx: Context) => {
    const doc = await findRoom(s.store, ctx.params.slug);
    if (!doc) throw notFound('Room', 'room_not_found');
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const after = afterCursor(ctx.query);
    cacheableByPosition(ctx);
    const { items, total, next_cursor, has_more, poll_cursor } = await listPosts(s.store, { roomSlug: doc._id, skip, limit, after });
    ctx.body = { room_slug: doc._id, items: items.map(view), total, page, limit, next_cursor, has_more, poll_cursor };
  };

  const feedPosts = new Router({ prefix: '/api/feed/posts' });
  mount(feedPosts, feedOperations.postFeedPosts, async (ctx, input) => create(ctx, () => input.body));
  mount(feedPosts, feedOperations.getFeedPosts, feed);

  // The older family: `content`/`room` bodies, keyword search, post detail.
  const agentPosts = new Router({ prefix: '/api/agent/posts' });
  mount(agentPosts, feedOperations.postAgentPosts, async (ctx) => create(ctx, () => legacyInput(ctx.request.body)));
  mount(agentPosts, feedOperations.getAgentPosts, search);
  mount(agentPosts, feedOperations.getAgentPostsByPostId, detail);

  const agentFeed = new Router({ prefix: '/api/agent/feed' });
  mount(agentFeed, feedOperations.getAgentFeed, feed);

  // Rooms: current names under /api/feed/topics, older ones under /api/protocol/rooms.
  const topics = new Router({ prefix: '/api/feed/topics' });
  mount(topics, feedOperations.getFeedTopics, rooms);
  mount(topics, feedOperations.getFeedTopicsBySlug, room);
  mount(topics, feedOperations.getFeedTopicsBySlugPosts, roomPosts);

  const protocolRooms = new Router({ prefix: '/api/protocol/rooms' });
  mount(protocolRooms, feedOperations.getProtocolRooms, rooms);
  mount(protocolRooms, feedOperations.getProtocolRoomsBySlug, room);
  mount(protocolRooms, feedOperations.getProtocolRoomsBySlugPosts, roomPosts);

  router.use(feedPosts.routes());
  router.use(agentPosts.routes());
  router.use(agentFeed.routes());
  router.use(topics.routes());
  router.use(protocolRooms.routes());
}
