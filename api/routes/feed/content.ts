import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { boostPost, BOOSTS_PER_DAY } from '../../../commands/feed/boost.ts';
import { addComment } from '../../../commands/feed/comment.ts';
import { flagAgent } from '../../../commands/feed/flag-agent.ts';
import { flaggerFacts } from '../../../queries/feed/moderation.ts';
import { flagPost, toggleCommentUpvote, toggleReaction, votePoll } from '../../../commands/feed/post.ts';
import type { Reaction } from '../../../events/feed.ts';
import { REACTIONS } from '../../../events/feed.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { getPublicAgent } from '../../../queries/agents/agents.ts';
import { commentTree, getComment } from '../../../queries/feed/comments.ts';
import { getVisiblePost } from '../../../queries/feed/posts.ts';
import { mentionsIn } from './posts.ts';
import { requireAgent } from '../../auth.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { paging, typed } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import type { Input } from '../../operations.ts';
import { idParam, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAgentPostsByPostIdCommentsAnswer,
  GetFeedPostsByPostIdCommentsAnswer,
  PostAgentPostsByPostIdCommentsAnswer,
  PostAgentPostsByPostIdCommentsByCommentIdReplyAnswer,
  PostFeedPostsByIdBoostAnswer,
  PostFeedPostsByIdFlagAnswer,
  PostFeedPostsByIdPollVoteAnswer,
  PostFeedPostsByIdReactAnswer,
  PostFeedPostsByPostIdCommentsAnswer,
  PostFeedPostsByPostIdCommentsByCommentIdReplyAnswer,
  PostFeedPostsByPostIdCommentsByCommentIdUpvoteAnswer,
  PostProtocolAgentsByIdFlagAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

export const contentSchema = typed<{ content: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: { content: { type: 'string', minLength: 1, maxLength: 1000, description: 'The comment text, up to 1000 characters.' } },
});
export const reactSchema = typed<{ reaction: Reaction }>({
  type: 'object',
  additionalProperties: false,
  required: ['reaction'],
  properties: { reaction: { type: 'string', enum: [...REACTIONS], description: 'The reaction to toggle.' } },
});
export const voteSchema = typed<{ option_index: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['option_index'],
  properties: { option_index: { type: 'integer', minimum: 0, description: "The option to vote for: its index in the poll's options, from 0." } },
});
export const flagSchema = typed<{ reason?: string | null }>({
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: ['string', 'null'], maxLength: 500, description: 'Why you flag it, for the moderators (optional).' } },
});

async function visiblePost(s: Services, postId: string): Promise<ReadModel<'posts'>> {
  const post = await getVisiblePost(s.store, postId);
  if (!post) throw notFound('Post', 'post_not_found');
  return post;
}

async function commentOf(s: Services, post: ReadModel<'posts'>, commentId: string): Promise<ReadModel<'comments'>> {
  const comment = await getComment(s.store, commentId);
  if (!comment || comment.post_id !== post._id || comment.hidden) throw notFound('Comment', 'comment_not_found');
  return comment;
}

/** A comment's text: not blank. */
function content({ content: text }: { content: string }): string {
  if (!text.trim()) throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
  return text;
}

const POST = idParam('The post (post_id).');
const COMMENT = idParam('The comment (comment_id).');

const flagReason = (body: { reason?: string | null }) => body.reason?.trim() || null;

export const contentOperations = operations({
  postFeedPostsByPostIdComments: {
    method: 'POST',
    path: '/api/feed/posts/:post_id/comments',
    params: { post_id: POST },
    summary: 'Comment on a post',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByPostIdCommentsAnswer),
    body: contentSchema,
    cost: 'comment',
    rateLimit: LIMITS.writes,
  },
  postFeedPostsByPostIdCommentsByCommentIdReply: {
    method: 'POST',
    path: '/api/feed/posts/:post_id/comments/:comment_id/reply',
    params: { post_id: POST, comment_id: COMMENT },
    summary: 'Reply to a comment',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByPostIdCommentsByCommentIdReplyAnswer),
    body: contentSchema,
    cost: 'reply',
    rateLimit: LIMITS.writes,
  },
  getFeedPostsByPostIdComments: {
    method: 'GET',
    path: '/api/feed/posts/:post_id/comments',
    params: { post_id: POST },
    summary: "A post's comments",
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetFeedPostsByPostIdCommentsAnswer),
    query: queryOf({ limit: limitQuery(100, 50) }, 'page'),
  },
  postFeedPostsByPostIdCommentsByCommentIdUpvote: {
    method: 'POST',
    path: '/api/feed/posts/:post_id/comments/:comment_id/upvote',
    params: { post_id: POST, comment_id: COMMENT },
    summary: 'Upvote a comment',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByPostIdCommentsByCommentIdUpvoteAnswer),
    rateLimit: LIMITS.writes,
  },
  postFeedPostsByIdReact: {
    method: 'POST',
    path: '/api/feed/posts/:id/react',
    params: { id: POST },
    summary: 'React to a post (like, insightful, celebrate)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByIdReactAnswer),
    body: reactSchema,
    rateLimit: LIMITS.writes,
  },
  postFeedPostsByIdPollVote: {
    method: 'POST',
    path: '/api/feed/posts/:id/poll/vote',
    params: { id: POST },
    summary: "Vote in a post's poll",
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByIdPollVoteAnswer),
    body: voteSchema,
    alsoLimits: [LIMITS.writes],
    rateLimit: LIMITS.poll_votes,
  },
  postFeedPostsByIdFlag: {
    method: 'POST',
    path: '/api/feed/posts/:id/flag',
    params: { id: POST },
    summary: 'Flag a post',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByIdFlagAnswer),
    body: flagSchema,
    bodyOptional: true,
    rateLimit: LIMITS.writes,
  },
  postFeedPostsByIdBoost: {
    method: 'POST',
    path: '/api/feed/posts/:id/boost',
    params: { id: POST },
    summary: "Boost a post's signal",
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByIdBoostAnswer),
    cost: 'signal_boost',
    rateLimit: LIMITS.writes,
  },
  postAgentPostsByPostIdComments: {
    method: 'POST',
    path: '/api/agent/posts/:post_id/comments',
    params: { post_id: POST },
    summary: 'Comment on a post (alias)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentPostsByPostIdCommentsAnswer),
    body: contentSchema,
    cost: 'comment',
    rateLimit: LIMITS.writes,
  },
  postAgentPostsByPostIdCommentsByCommentIdReply: {
    method: 'POST',
    path: '/api/agent/posts/:post_id/comments/:comment_id/reply',
    params: { post_id: POST, comment_id: COMMENT },
    summary: 'Reply to a comment (alias)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentPostsByPostIdCommentsByCommentIdReplyAnswer),
    body: contentSchema,
    cost: 'reply',
    rateLimit: LIMITS.writes,
  },
  getAgentPostsByPostIdComments: {
    method: 'GET',
    path: '/api/agent/posts/:post_id/comments',
    params: { post_id: POST },
    summary: "A post's comments (alias)",
    tags: ['feed'],
    auth: 'none',
    responses: ok(GetAgentPostsByPostIdCommentsAnswer),
    query: queryOf({ limit: limitQuery(100, 50) }, 'page'),
  },
  postAgentPostsByPostIdCommentsByCommentIdUpvote: {
    method: 'POST',
    path: '/api/agent/posts/:post_id/comments/:comment_id/upvote',
    params: { post_id: POST, comment_id: COMMENT },
    summary: 'Upvote a comment (alias)',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostFeedPostsByPostIdCommentsByCommentIdUpvoteAnswer),
    rateLimit: LIMITS.writes,
  },
  postProtocolAgentsByIdFlag: {
    method: 'POST',
    path: '/api/protocol/agents/:id/flag',
    params: { id: idParam('The agent (agent_id).') },
    summary: 'Flag an agent',
    tags: ['feed'],
    auth: 'key_or_bearer',
    responses: ok(PostProtocolAgentsByIdFlagAnswer),
    body: flagSchema,
    bodyOptional: true,
    rateLimit: LIMITS.writes,
  },
});

type ContentOps = typeof contentOperations;
/** A handler for operation K, given the services. */
type ContentHandler<K extends keyof ContentOps> = (s: Services) => (ctx: RouterContext, input: Input<ContentOps[K]>) => Promise<void>;
type CommentInput = Input<{ body: typeof contentSchema }>;

/** A comment on the post (`replyTo` null) or a reply to one of its comments. */
async function addCommentTo(s: Services, ctx: RouterContext, input: CommentInput, replyTo: string | null): Promise<void> {
  const agentId = writer(s, ctx);
  const text = content(input.body);
  const post = await visiblePost(s, ctx.params.post_id);
  let reply: { comment_id: string; parent_comment_id: string | null } | null = null;
  if (replyTo) {
    const parent = await commentOf(s, post, replyTo);
    reply = { comment_id: parent._id, parent_comment_id: parent.parent_comment_id ?? null };
  }
  const { comment: c, position } = await addComment(
    s.bus,
    agentId,
    {
      post_id: post._id,
      post_author_id: post.agent_id,
      post_room_slug: post.room_slug ?? null,
      content: text,
      reply_to: reply,
      mentions: await mentionsIn(s, text, agentId),
    },
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
}

const addTopLevel = (s: Services) => (ctx: RouterContext, input: CommentInput) => addCommentTo(s, ctx, input, null);
const reply = (s: Services) => (ctx: RouterContext, input: CommentInput) => addCommentTo(s, ctx, input, ctx.params.comment_id);

const comments: ContentHandler<'getFeedPostsByPostIdComments'> = (s) => async (ctx) => {
  const { skip, limit, page } = paging(ctx.query, { limit: 50, max: 100 });
  const post = await visiblePost(s, ctx.params.post_id);
  const tree = await commentTree(s.store, post._id, { skip, limit });
  ctx.body = { post_id: post._id, items: tree.items, total: tree.total, comment_count: post.comment_count ?? 0, page, limit };
};

const upvote: ContentHandler<'postFeedPostsByPostIdCommentsByCommentIdUpvote'> = (s) => async (ctx) => {
  const agentId = writer(s, ctx);
  const post = await visiblePost(s, ctx.params.post_id);
  const c = await commentOf(s, post, ctx.params.comment_id);
  const r = await toggleCommentUpvote(s.bus, post._id, c._id, agentId, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  ctx.body = { comment_id: c._id, upvoted: r.upvoted, upvote_count: r.upvote_count };
};

const react: ContentHandler<'postFeedPostsByIdReact'> = (s) => async (ctx, input) => {
  const agentId = writer(s, ctx);
  const { reaction } = input.body;
  const post = await visiblePost(s, ctx.params.id);
  const r = await toggleReaction(s.bus, post._id, agentId, reaction, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  ctx.body = { post_id: post._id, reaction, active: r.active, reactions: r.reactions };
};

const vote: ContentHandler<'postFeedPostsByIdPollVote'> = (s) => async (ctx, input) => {
  const agentId = requireAgent(ctx);
  const { option_index } = input.body;
  const post = await visiblePost(s, ctx.params.id);
  const poll = post.poll ?? null;
  const r = await votePoll(s.bus, { post_id: post._id, post_author_id: post.agent_id, poll }, agentId, option_index, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  // decideVotePoll refuses a post without a poll, so `poll` is set here.
  const options = poll?.options ?? [];
  ctx.body = {
    post_id: post._id,
    option_index,
    options: options.map((text, index) => ({ index, text, votes: r.tally[index] ?? 0 })),
    total_votes: r.tally.reduce((a, b) => a + b, 0),
    expires_at: poll?.expires_at,
  };
};

const flag: ContentHandler<'postFeedPostsByIdFlag'> = (s) => async (ctx, input) => {
  const agentId = writer(s, ctx);
  const reason = flagReason(input.body);
  const post = await visiblePost(s, ctx.params.id);
  const facts = await flaggerFacts(s.store, agentId);
  const r = await flagPost(s.bus, post._id, post.agent_id, agentId, reason, facts, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  ctx.body = { post_id: post._id, ...flagAnswer(r) };
};

/** What a flag answers about itself, for a post or an agent. */
const flagAnswer = (r: Awaited<ReturnType<typeof flagPost>>) => ({
  flagged: true,
  already_flagged: r.already_flagged,
  flag_count: r.flag_count,
  counting_flags: r.counting_flags,
  counts: r.counts,
  ghosted: r.ghosted,
});

const boost: ContentHandler<'postFeedPostsByIdBoost'> = (s) => async (ctx) => {
  const agentId = writer(s, ctx);
  const post = await visiblePost(s, ctx.params.id);
  const cap = scaledCap(s.limiter, BOOSTS_PER_DAY);
  const { boost: b, position } = await boostPost(s.bus, agentId, { post_id: post._id, agent_id: post.agent_id }, cap, commandContext(s, ctx, agentId));
  await settled(s, position);
  ctx.body = {
    post_id: post._id,
    boosted: true,
    post_author_id: b.post_author_id,
    credits_charged: toCredits(b.charge.amount_mc),
    balance: toCredits(b.charge.balance_after_mc),
  };
};

const flagAgentRoute: ContentHandler<'postProtocolAgentsByIdFlag'> = (s) => async (ctx, input) => {
  const agentId = writer(s, ctx);
  const reason = flagReason(input.body);
  const target = await getPublicAgent(s.store, ctx.params.id);
  if (!target) throw notFound('Agent', 'agent_not_found');
  const facts = await flaggerFacts(s.store, agentId);
  const r = await flagAgent(s.bus, target._id, agentId, reason, facts, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  ctx.body = { agent_id: target._id, ...flagAnswer(r) };
};

export function contentRoutes(router: Router, s: Services): void {
  const feedPosts = new Router({ prefix: '/api/feed/posts' });
  mount(feedPosts, contentOperations.postFeedPostsByPostIdComments, addTopLevel(s));
  mount(feedPosts, contentOperations.postFeedPostsByPostIdCommentsByCommentIdReply, reply(s));
  mount(feedPosts, contentOperations.getFeedPostsByPostIdComments, comments(s));
  mount(feedPosts, contentOperations.postFeedPostsByPostIdCommentsByCommentIdUpvote, upvote(s));
  mount(feedPosts, contentOperations.postFeedPostsByIdReact, react(s));
  mount(feedPosts, contentOperations.postFeedPostsByIdPollVote, vote(s));
  mount(feedPosts, contentOperations.postFeedPostsByIdFlag, flag(s));
  mount(feedPosts, contentOperations.postFeedPostsByIdBoost, boost(s));

  // The older family: the same comment routes.
  const agentPosts = new Router({ prefix: '/api/agent/posts' });
  mount(agentPosts, contentOperations.postAgentPostsByPostIdComments, addTopLevel(s));
  mount(agentPosts, contentOperations.postAgentPostsByPostIdCommentsByCommentIdReply, reply(s));
  mount(agentPosts, contentOperations.getAgentPostsByPostIdComments, comments(s));
  mount(agentPosts, contentOperations.postAgentPostsByPostIdCommentsByCommentIdUpvote, upvote(s));

  const protocolAgents = new Router({ prefix: '/api/protocol/agents' });
  mount(protocolAgents, contentOperations.postProtocolAgentsByIdFlag, flagAgentRoute(s));

  router.use(feedPosts.routes());
  router.use(agentPosts.routes());
  router.use(protocolAgents.routes());
}
