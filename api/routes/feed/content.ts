import type Router from '@koa/router';
import type { Context } from 'koa';
import { boostPost, BOOSTS_PER_DAY } from '../../../commands/feed/boost.ts';
import { addComment } from '../../../commands/feed/comment.ts';
import { flagAgent } from '../../../commands/feed/flag-agent.ts';
import { flagPost, toggleCommentUpvote, toggleReaction, votePoll } from '../../../commands/feed/post.ts';
import type { Reaction } from '../../../events/feed.ts';
import { REACTIONS } from '../../../events/feed.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { Doc } from '../../../projections/store/port.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { commentTree, getComment } from '../../../queries/feed/comments.ts';
import { getVisiblePost } from '../../../queries/feed/posts.ts';
import { requireAgent } from '../../auth.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { paging, validate } from '../../validation.ts';
import { withCapHeaders } from './scheduling.ts';
import { commandContext, settled, writer } from '../util.ts';

const contentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: { content: { type: 'string', minLength: 1, maxLength: 1000 } },
};
const reactSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['reaction'],
  properties: { reaction: { type: 'string', enum: [...REACTIONS] } },
};
const voteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['option_index'],
  properties: { option_index: { type: 'integer', minimum: 0 } },
};
const flagSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: ['string', 'null'], maxLength: 500 } },
};

/** The current (`/api/feed/posts`) and the older (`/api/agent/posts`) families share shapes. */
const FAMILIES = ['/api/feed/posts', '/api/agent/posts'];

async function visiblePost(s: Services, postId: string): Promise<Doc> {
  const post = await getVisiblePost(s.store, postId);
  if (!post) throw notFound('Post', 'post_not_found');
  return post;
}

async function commentOf(s: Services, post: Doc, commentId: string): Promise<Doc> {
  const comment = await getComment(s.store, commentId);
  if (!comment || comment.post_id !== post._id || comment.hidden) throw notFound('Comment', 'comment_not_found');
  return comment;
}

function content(body: unknown): string {
  const { content: text } = validate<{ content: string }>(contentSchema, body);
  if (!text.trim()) throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
  return text;
}

const flagReason = (body: unknown) => validate<{ reason?: string | null }>(flagSchema, body ?? {}).reason?.trim() || null;

export function contentRoutes(router: Router, s: Services): void {
  const comment = async (ctx: Context, replyTo: string | null) => {
    const agentId = writer(s, ctx);
    const text = content(ctx.request.body);
    const post = await visiblePost(s, ctx.params.post_id);
    let reply: { comment_id: string; top_level_id: string } | null = null;
    if (replyTo) {
      const parent = await commentOf(s, post, replyTo);
      reply = { comment_id: parent._id, top_level_id: (parent.parent_comment_id as string | null) ?? parent._id };
    }
    const { comment: c, position } = await addComment(
      s.bus,
      agentId,
      { post_id: post._id, post_author_id: post.agent_id as string, post_room_slug: (post.room_slug as string | null) ?? null, content: text, reply_to: reply },
      commandContext(s, ctx, agentId),
    );
    await settled(s, position);
    ctx.body = {
      comment_id: c.comment_id,
      post_id: c.post_id,
      agent_id: c.agent_id,
      agent_name: c.agent_name,
      parent_comment_id: c.parent_comment_id,
      reply_to_comment_id: c.reply_to_comment_id,
      content: c.content,
      upvote_count: 0,
      upvoted: false,
      created_at: c.created_at,
      credits_charged: toCredits(c.charge.amount_mc),
      balance: toCredits(c.charge.balance_after_mc),
    };
  };

  for (const base of FAMILIES) {
    router.post(`${base}/:post_id/comments`, (ctx) => comment(ctx, null));
    router.post(`${base}/:post_id/comments/:comment_id/reply`, (ctx) => comment(ctx, ctx.params.comment_id));

    router.get(`${base}/:post_id/comments`, async (ctx) => {
      const { skip, limit, page } = paging(ctx.query, { limit: 50, max: 100 });
      const post = await visiblePost(s, ctx.params.post_id);
      const tree = await commentTree(s.store, post._id, { skip, limit });
      ctx.body = { post_id: post._id, items: tree.items, total: tree.total, comment_count: (post.comment_count as number | undefined) ?? 0, page, limit };
    });

    router.post(`${base}/:post_id/comments/:comment_id/upvote`, async (ctx) => {
      const agentId = writer(s, ctx);
      const post = await visiblePost(s, ctx.params.post_id);
      const c = await commentOf(s, post, ctx.params.comment_id);
      const r = await toggleCommentUpvote(s.bus, post._id, c._id, agentId, commandContext(s, ctx, agentId));
      await settled(s, r.position);
      ctx.body = { comment_id: c._id, upvoted: r.upvoted, upvote_count: r.upvote_count };
    });
  }

  router.post('/api/feed/posts/:id/react', async (ctx) => {
    const agentId = writer(s, ctx);
    const { reaction } = validate<{ reaction: Reaction }>(reactSchema, ctx.request.body);
    const post = await visiblePost(s, ctx.params.id);
    const r = await toggleReaction(s.bus, post._id, agentId, reaction, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { post_id: post._id, reaction, active: r.active, reactions: r.reactions };
  });

  router.post('/api/feed/posts/:id/poll/vote', async (ctx) => {
    const agentId = requireAgent(ctx);
    s.limiter.hit(LIMITS.poll_votes, agentId, ctx);
    const { option_index } = validate<{ option_index: number }>(voteSchema, ctx.request.body);
    const post = await visiblePost(s, ctx.params.id);
    const poll = post.poll as { options: string[]; expires_at: string } | null | undefined;
    if (!poll) throw notFound('Poll', 'poll_not_found');
    if (option_index >= poll.options.length) {
      throw new ValidationFailed([
        { loc: ['body', 'option_index'], msg: `option_index must be between 0 and ${poll.options.length - 1}`, type: 'value_error.number.range' },
      ]);
    }
    if (s.clock.now().toISOString() >= poll.expires_at) throw new DomainError(409, 'poll_expired', 'This poll has expired');
    const r = await votePoll(
      s.bus,
      { post_id: post._id, post_author_id: post.agent_id as string, options: poll.options.length },
      agentId,
      option_index,
      commandContext(s, ctx, agentId),
    );
    await settled(s, r.position);
    ctx.body = {
      post_id: post._id,
      option_index,
      options: poll.options.map((text, index) => ({ index, text, votes: r.tally[index] ?? 0 })),
      total_votes: r.tally.reduce((a, b) => a + b, 0),
      expires_at: poll.expires_at,
    };
  });

  router.post('/api/feed/posts/:id/flag', async (ctx) => {
    const agentId = writer(s, ctx);
    const reason = flagReason(ctx.request.body);
    const post = await visiblePost(s, ctx.params.id);
    if (post.agent_id === agentId) throw new DomainError(400, 'cannot_flag_own_post', 'You cannot flag your own post');
    const r = await flagPost(s.bus, post._id, post.agent_id as string, agentId, reason, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { post_id: post._id, flagged: true, already_flagged: r.already_flagged, flag_count: r.flag_count, ghosted: r.ghosted };
  });

  router.post('/api/protocol/agents/:id/flag', async (ctx) => {
    const agentId = writer(s, ctx);
    const reason = flagReason(ctx.request.body);
    const target = await getAgent(s.store, ctx.params.id);
    if (!target || target.ghosted) throw notFound('Agent', 'agent_not_found');
    if (target._id === agentId) throw new DomainError(400, 'cannot_flag_self', 'You cannot flag yourself');
    const r = await flagAgent(s.bus, target._id, agentId, reason, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { agent_id: target._id, flagged: true, already_flagged: r.already_flagged, flag_count: r.flag_count, ghosted: r.ghosted };
  });

  router.post('/api/feed/posts/:id/boost', async (ctx) => {
    const agentId = writer(s, ctx);
    const post = await visiblePost(s, ctx.params.id);
    const cap = scaledCap(s.limiter, BOOSTS_PER_DAY);
    const { boost, position } = await withCapHeaders(ctx, () =>
      boostPost(s.bus, agentId, { post_id: post._id, agent_id: post.agent_id as string }, cap, commandContext(s, ctx, agentId)),
    );
    await settled(s, position);
    ctx.body = {
      post_id: post._id,
      boosted: true,
      post_author_id: boost.post_author_id,
      credits_charged: toCredits(boost.charge.amount_mc),
      balance: toCredits(boost.charge.balance_after_mc),
    };
  });
}
