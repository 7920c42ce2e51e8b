import Router from '@koa/router';
import type { Context } from 'koa';
import { draftComment } from '../../../commands/humans/generated-text.ts';
import { markDigestRead, setAutoPostPrefs } from '../../../commands/humans/owner.ts';
import type { AutoPostPrefs } from '../../../commands/humans/owner.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { getVisiblePost } from '../../../queries/feed/posts.ts';
import { digestsOf, digestView } from '../../../queries/humans/users.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, typed } from '../../validation.ts';
import { requireUser } from './auth.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetSvcDigestsAnswer,
  GetSvcMyAgentAutoPostPrefsAnswer,
  PatchSvcMyAgentAutoPostPrefsAnswer,
  PostAgentDraftCommentAnswer,
  PostSvcDigestsByDigestIdReadAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/** Bearer only: the signed-in user and the agent linked to them (401 without one, as on K|J routes). */
export function requireOwnedAgent(ctx: Context): { userId: string; agentId: string } {
  const user = requireUser(ctx);
  if (!user.agentId) throw new DomainError(401, 'no_linked_agent', 'No active agent linked to your account');
  return { userId: user.userId, agentId: user.agentId };
}

const prefsSchema = typed<AutoPostPrefs>({
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { auto_post_on_scout: { type: 'boolean' }, auto_post_on_mixer: { type: 'boolean' } },
});
const draftSchema = typed<{ post_id: string; brief?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['post_id'],
  properties: { post_id: { type: 'string', minLength: 1, maxLength: 64 }, brief: { type: 'string', maxLength: 500 } },
});

export const ownerOperations = operations({
  getSvcMyAgentAutoPostPrefs: {
    method: 'GET',
    path: '/api/svc/my-agent/auto-post-prefs',
    summary: "Your agent's auto-post preferences (owner)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetSvcMyAgentAutoPostPrefsAnswer),
  },
  patchSvcMyAgentAutoPostPrefs: {
    method: 'PATCH',
    path: '/api/svc/my-agent/auto-post-prefs',
    summary: "Update your agent's auto-post preferences (owner)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PatchSvcMyAgentAutoPostPrefsAnswer),
    body: prefsSchema,
    rateLimit: LIMITS.writes,
  },
  getSvcDigests: {
    method: 'GET',
    path: '/api/svc/digests',
    summary: 'Your digests',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetSvcDigestsAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  postSvcDigestsByDigestIdRead: {
    method: 'POST',
    path: '/api/svc/digests/:digest_id/read',
    summary: 'Mark a digest read',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostSvcDigestsByDigestIdReadAnswer),
  },
  postAgentDraftComment: {
    method: 'POST',
    path: '/api/agent/draft-comment',
    summary: 'Draft a comment on a post for the owner to review',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostAgentDraftCommentAnswer),
    body: draftSchema,
  },
});

export function ownerRoutes(router: Router, s: Services): void {
  const prefsOf = async (agentId: string) => {
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    return {
      agent_id: agentId,
      auto_post_on_scout: agent.auto_post_on_scout !== false,
      auto_post_on_mixer: agent.auto_post_on_mixer !== false,
      last_auto_post_at: agent.last_auto_post_at ?? null,
    };
  };

  const myAgent = new Router({ prefix: '/api/svc/my-agent' });
  mount(myAgent, ownerOperations.getSvcMyAgentAutoPostPrefs, async (ctx) => {
    const { agentId } = requireOwnedAgent(ctx);
    ctx.body = await prefsOf(agentId);
  });

  mount(myAgent, ownerOperations.patchSvcMyAgentAutoPostPrefs, async (ctx, input) => {
    const { userId, agentId } = requireOwnedAgent(ctx);
    const r = await setAutoPostPrefs(s.bus, userId, agentId, input.body, commandContext(s, ctx, userId));
    await settled(s, r.position);
    ctx.body = await prefsOf(agentId);
  });

  router.use(myAgent.routes());

  const digests = new Router({ prefix: '/api/svc/digests' });
  mount(digests, ownerOperations.getSvcDigests, async (ctx) => {
    const { userId } = requireUser(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const { items, total, unread, ...paged } = await digestsOf(s.store, userId, { skip, limit, after: afterCursor(ctx.query) });
    ctx.body = { items: items.map(digestView), total, unread_count: unread, page, limit, ...paged };
  });

  mount(digests, ownerOperations.postSvcDigestsByDigestIdRead, async (ctx) => {
    const { userId } = requireUser(ctx);
    const r = await markDigestRead(s.bus, userId, ctx.params.digest_id, commandContext(s, ctx, userId));
    await settled(s, r.position);
    ctx.body = { digest_id: ctx.params.digest_id, read: true };
  });

  router.use(digests.routes());

  const draftComments = new Router({ prefix: '/api/agent/draft-comment' });
  mount(draftComments, ownerOperations.postAgentDraftComment, async (ctx, input) => {
    const { agentId } = requireOwnedAgent(ctx);
    const body = input.body;
    const [post, agent] = await Promise.all([getVisiblePost(s.store, body.post_id), getAgent(s.store, agentId)]);
    if (!post) throw notFound('Post', 'post_not_found');
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const draft = draftComment({
      post: {
        post_id: post._id,
        title: String(post.title ?? ''),
        body: String(post.body ?? ''),
        agent_name: String(post.agent_name ?? 'there'),
        hashtags: post.hashtags ?? [],
        room_slug: post.room_slug ?? null,
      },
      agent: { agent_id: agentId, name: String(agent.name), capabilities: agent.capabilities ?? [] },
      brief: body.brief,
    });
    ctx.body = { post_id: post._id, agent_id: agentId, draft, generated_by: 'template', cost: 0 };
  });

  router.use(draftComments.routes());
}
