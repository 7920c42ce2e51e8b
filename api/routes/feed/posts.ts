import type Router from '@koa/router';
import type { Context } from 'koa';
import { publishPost } from '../../../commands/feed/publish-post.ts';
import type { PublishPost } from '../../../commands/feed/publish-post.ts';
import type { PostPoll, PostType } from '../../../events/feed.ts';
import { POST_TYPES, searchTerms } from '../../../events/feed.ts';
import { DAY } from '../../../events/kernel/clock.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { FieldError } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { publicAgent } from '../../../queries/agents/agents.ts';
import { findRoom, getVisiblePost, listPosts, postView, relatedPosts, searchPosts } from '../../../queries/feed/posts.ts';
import { listRooms, roomAgents, roomView } from '../../../queries/feed/rooms.ts';
import type { Services } from '../../services.ts';
import { paging, validate } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';

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
  title: { type: 'string', minLength: 1, maxLength: 200 },
  body: { type: 'string', minLength: 1, maxLength: 10_000 },
  post_type: { type: 'string', enum: [...POST_TYPES] },
  room_slug: { type: ['string', 'null'], maxLength: 40 },
  poll: pollSchema,
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

export const POLL_DEFAULT_MS = DAY;
export const POLL_MAX_MS = 7 * DAY;

export interface PostInput {
  title: string;
  body: string;
  post_type: PostType;
  room_slug?: string | null;
  poll?: { options: string[]; expires_at?: string };
}

/** Checks what JSON Schema cannot (blank title, poll expiry in (now, now + 7 days]) and resolves the room. */
export async function preparePost(s: Services, input: PostInput, now: Date): Promise<PublishPost> {
  const errors: FieldError[] = [];
  if (!input.title.trim()) errors.push({ loc: ['body', 'title'], msg: 'title must not be blank', type: 'value_error.blank' });
  if (!input.body.trim()) errors.push({ loc: ['body', 'body'], msg: 'body must not be blank', type: 'value_error.blank' });
  let poll: PostPoll | null = null;
  if (input.poll) {
    const expires = input.poll.expires_at ? Date.parse(input.poll.expires_at) : now.getTime() + POLL_DEFAULT_MS;
    if (!(expires > now.getTime()) || expires > now.getTime() + POLL_MAX_MS) {
      errors.push({
        loc: ['body', 'poll', 'expires_at'],
        msg: 'expires_at must be in the future and at most 7 days ahead',
        type: 'value_error.poll.expires_at',
      });
    }
    if (input.poll.options.some((o) => !o.trim()))
      errors.push({ loc: ['body', 'poll', 'options'], msg: 'options must not be blank', type: 'value_error.blank' });
    poll = { options: input.poll.options.map((o) => o.trim()), expires_at: new Date(expires).toISOString() };
  }
  if (errors.length) throw new ValidationFailed(errors);
  let roomSlug = input.room_slug ?? null;
  if (roomSlug !== null) {
    const room = await findRoom(s.store, roomSlug);
    if (!room) throw new DomainError(404, 'room_not_found', `Room '${roomSlug}' does not exist or is not public`);
    roomSlug = room._id;
  }
  return { title: input.title, body: input.body, post_type: input.post_type, room_slug: roomSlug, poll };
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

export function feedRoutes(router: Router, s: Services): void {
  const create = async (ctx: Context, input: PostInput) => {
    const agentId = writer(s, ctx);
    const cmdCtx = commandContext(s, ctx, agentId);
    const prepared = await preparePost(s, input, cmdCtx.now);
    const { post, position } = await publishPost(s.bus, agentId, prepared, cmdCtx);
    await settled(s, position);
    ctx.body = {
      post_id: post.post_id,
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

  router.post('/api/feed/posts', async (ctx) => create(ctx, validate<PostInput>(createPostSchema, ctx.request.body)));
  router.post('/api/agent/posts', async (ctx) => create(ctx, legacyInput(ctx.request.body)));

  const feed = async (ctx: Context) => {
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const slug = typeof ctx.query.room_slug === 'string' && ctx.query.room_slug ? ctx.query.room_slug : undefined;
    let roomSlug: string | undefined;
    if (slug) {
      const room = await findRoom(s.store, slug);
      if (!room) {
        ctx.body = { items: [], total: 0, page, limit };
        return;
      }
      roomSlug = room._id;
    }
    const { items, total } = await listPosts(s.store, { roomSlug, skip, limit });
    ctx.body = { items: items.map(postView), total, page, limit };
  };
  router.get('/api/feed/posts', feed);
  router.get('/api/agent/feed', feed);

  // Keyword search (older family); without q it is the feed.
  router.get('/api/agent/posts', async (ctx) => {
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
    ctx.body = { query: q, items: items.map(postView), total, page, limit };
  });

  router.get('/api/agent/posts/:post_id', async (ctx) => {
    const post = await getVisiblePost(s.store, ctx.params.post_id);
    if (!post) throw notFound('Post', 'post_not_found');
    const related = await relatedPosts(s.store, post);
    ctx.body = { ...postView(post), related_in_room: related.related_in_room.map(postView), more_by_author: related.more_by_author.map(postView) };
  });

  // Rooms / topics: current names under /api/feed/topics, older ones under /api/protocol/rooms.
  const rooms = async (ctx: Context) => {
    const items = await listRooms(s.store);
    ctx.body = { items: items.map(roomView), total: items.length };
  };
  const room = async (ctx: Context) => {
    const doc = await findRoom(s.store, ctx.params.slug);
    if (!doc) throw notFound('Room', 'room_not_found');
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const agents = await roomAgents(s.store, doc, { skip, limit });
    ctx.body = { room: roomView(doc), items: agents.items.map((a) => publicAgent(a, s.config.publicBaseUrl)), total: agents.total, page, limit };
  };
  const roomPosts = async (ctx: Context) => {
    const doc = await findRoom(s.store, ctx.params.slug);
    if (!doc) throw notFound('Room', 'room_not_found');
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const { items, total } = await listPosts(s.store, { roomSlug: doc._id, skip, limit });
    ctx.body = { room_slug: doc._id, items: items.map(postView), total, page, limit };
  };
  for (const base of ['/api/feed/topics', '/api/protocol/rooms']) {
    router.get(base, rooms);
    router.get(`${base}/:slug`, room);
    router.get(`${base}/:slug/posts`, roomPosts);
  }
}
