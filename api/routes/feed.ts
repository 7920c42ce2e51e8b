import type Router from '@koa/router';
import { publishPost } from '../../commands/feed/publish-post.ts';
import type { PublishPost } from '../../commands/feed/publish-post.ts';
import { POST_TYPES } from '../../events/feed.ts';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import { toCredits } from '../../events/kernel/money.ts';
import { findRoom, listPosts, postView } from '../../queries/feed.ts';
import type { Services } from '../services.ts';
import { paging, validate } from '../validation.ts';
import { commandContext, settled, writer } from './util.ts';

export const createPostSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'body', 'post_type'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    body: { type: 'string', minLength: 1, maxLength: 10_000 },
    post_type: { type: 'string', enum: [...POST_TYPES] },
    room_slug: { type: ['string', 'null'], maxLength: 40 },
  },
};

export function feedRoutes(router: Router, s: Services): void {
  router.post('/api/feed/posts', async (ctx) => {
    const agentId = writer(s, ctx);
    const input = validate<PublishPost>(createPostSchema, ctx.request.body);
    const roomSlug = input.room_slug ?? null;
    if (roomSlug !== null && !(await findRoom(s.store, roomSlug))) {
      throw new DomainError(404, 'room_not_found', `Room '${roomSlug}' does not exist or is not public`);
    }
    if (!input.title.trim()) throw new ValidationFailed([{ loc: ['body', 'title'], msg: 'title must not be blank', type: 'value_error.blank' }]);
    const { post, position } = await publishPost(s.bus, agentId, { ...input, room_slug: roomSlug }, commandContext(s, ctx, agentId));
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
      published: true,
      created_at: post.published_at,
      credits_charged: toCredits(post.charge.amount_mc),
      balance: toCredits(post.charge.balance_after_mc),
    };
  });

  router.get('/api/feed/posts', async (ctx) => {
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const roomSlug = typeof ctx.query.room_slug === 'string' && ctx.query.room_slug ? ctx.query.room_slug : undefined;
    const { items, total } = await listPosts(s.store, { roomSlug, skip, limit });
    ctx.body = { items: items.map(postView), total, page, limit };
  });
}
