import type Router from '@koa/router';
import type { Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import { CIRCLE_REACTIONS, CODE_STATUSES, INTENTS, VISIBILITIES } from '../../../events/communities.ts';
import type { Visibility } from '../../../events/communities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import {
  circleActivity,
  circleMemberCount,
  circlePosts,
  getCirclePost,
  postReplies,
  postView,
  replyView,
  visibleCircle,
} from '../../../queries/communities/circles.ts';
import {
  adminScope,
  administered,
  circlesOf,
  codeView,
  communityMembers,
  communityStats,
  getCircle,
  getCode,
  getCommunity,
  getJoinRequest,
  isCommunityMember,
  joinRequests,
  memberCommunities,
  memberJoinRequests,
  memberView,
  requestView,
} from '../../../queries/communities/communities.ts';
import { isOneOf } from '../../guards.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { assetUrl } from '../../web/assets.ts';
import { validate } from '../../validation.ts';
import type { Schema } from '../../validation.ts';
import type { Member, Problem } from '../../web/member.ts';
import { doneTo, formField, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, MEMBER_FORM, MEMBER_PAGE } from '../../web/page-operations.ts';
import {
  circleWriter,
  communityCircles,
  CreatePostRequest,
  CreateReplyRequest,
  joinCircleAs,
  LinkPreviewRequest,
  previewLink,
  publishInCircle,
  replyToPost,
  toggleReaction,
  ToggleReactionRequest,
} from '../communities/circles.ts';
import {
  createCode,
  CreateCodeRequest,
  decideRequest,
  inviteQr,
  JoinCommunityRequest,
  joinByCode,
  removeMember,
  setCodeStatus,
  setVisibility,
} from '../communities/community-admin.ts';

/**
 * The member app's communities (docs/WEB.md "Communities"): joining by invite code, circles by
 * visibility, join requests, circle posts, replies, reactions and link previews; and community
 * administration for the communities the member administers. Every action runs the same function
 * as its API route (api/routes/communities/*), which runs the same command.
 */

const field = (description: string, extra: Record<string, unknown> = {}): Schema => ({ type: 'string', description, ...extra });
const ADMIN = 'Community admins of this community (and super admins) only: anyone else gets 403.';

export const communityPageOperations = operations({
  getAppCommunities: {
    method: 'GET',
    path: '/app/communities',
    summary: "The member's communities and circles, and joining one with an invite code",
    tags: ['app'],
    auth: 'member',
    query: { type: 'object', properties: { code: field('An invite code to fill in (from a /join/:code link)', { maxLength: 32 }) } },
    responses: MEMBER_PAGE,
  },
  postAppCommunitiesJoin: {
    method: 'POST',
    path: '/app/communities/join',
    summary: 'Join a community with an invite code (as POST /api/communities/join)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ code: field('The invite code', { maxLength: 32 }) }, ['code']),
    responses: MEMBER_FORM,
  },
  getAppCommunitiesByCommunityId: {
    method: 'GET',
    path: '/app/communities/:community_id',
    summary: 'A community: the circles the member can see by visibility, and their join requests',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppCirclesByCircleIdJoin: {
    method: 'POST',
    path: '/app/circles/:circle_id/join',
    summary: 'Join a circle, or ask to (as POST /api/brew-circles/:circle_id/join)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  getAppCirclesByCircleId: {
    method: 'GET',
    path: '/app/circles/:circle_id',
    summary: "A circle: its posts with reactions and replies, and the member's new post",
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppCirclesByCircleIdPosts: {
    method: 'POST',
    path: '/app/circles/:circle_id/posts',
    summary: 'Post in a circle (as POST /api/brew-circles/posts)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf(
      {
        content: field('The post', { maxLength: 5000 }),
        intent: { enum: [...INTENTS] },
        link_url: field('An http(s) link (optional)', { maxLength: 2000 }),
      },
      ['content', 'intent'],
    ),
    responses: MEMBER_FORM,
  },
  postAppCirclesByCircleIdLinkPreview: {
    method: 'POST',
    path: '/app/circles/:circle_id/link-preview',
    summary: "The circle page with a link's preview before posting (as POST /api/brew-circles/link-preview)",
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf(
      {
        link_url: field('The link to preview', { maxLength: 2000 }),
        content: field('The post being written (kept)', { maxLength: 5000 }),
        intent: field('The intent chosen (kept)', { maxLength: 20 }),
      },
      ['link_url'],
    ),
    responses: MEMBER_FORM,
  },
  getAppCirclePostsByPostId: {
    method: 'GET',
    path: '/app/circle-posts/:post_id',
    summary: 'A circle post with its replies',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppCirclePostsByPostIdReplies: {
    method: 'POST',
    path: '/app/circle-posts/:post_id/replies',
    summary: 'Reply to a circle post (as POST /api/brew-circles/replies)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ content: field('The reply', { maxLength: 2000 }) }, ['content']),
    responses: MEMBER_FORM,
  },
  postAppCirclePostsByPostIdReactions: {
    method: 'POST',
    path: '/app/circle-posts/:post_id/reactions',
    summary: 'Toggle a reaction on a circle post or one of its replies (as POST /api/brew-circles/reactions)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf(
      {
        reaction: { enum: [...CIRCLE_REACTIONS] },
        reply_id: field('A reply of this post (else the post itself)', { maxLength: 64 }),
        back: { enum: ['post', 'circle'], description: 'The page to go back to' },
      },
      ['reaction'],
    ),
    responses: MEMBER_FORM,
  },
  postAppCirclePostsByPostIdLinkPreview: {
    method: 'POST',
    path: '/app/circle-posts/:post_id/link-preview',
    summary: "The post page with its link's preview (as POST /api/brew-circles/link-preview)",
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  getAppCommunitiesByCommunityIdAdmin: {
    method: 'GET',
    path: '/app/communities/:community_id/admin',
    summary: 'Community admin: members, invite codes with their QR codes, circle visibility and join requests',
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppCommunitiesByCommunityIdAdminMembersByUserIdRemove: {
    method: 'POST',
    path: '/app/communities/:community_id/admin/members/:user_id/remove',
    summary: 'Community admin: remove a member (as DELETE /api/admin/community-admin/members/:member_id)',
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  postAppCommunitiesByCommunityIdAdminCodes: {
    method: 'POST',
    path: '/app/communities/:community_id/admin/codes',
    summary: 'Community admin: create an invite code (as POST /api/admin/community-admin/codes)',
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({
      label: field('A label (optional)', { maxLength: 100 }),
      max_uses: field('The most joins it allows (optional, 1 to 1000000)', { maxLength: 7 }),
      expires_on: field('The last day it works (optional, YYYY-MM-DD, UTC)', { maxLength: 10 }),
    }),
    responses: MEMBER_FORM,
  },
  postAppCommunitiesByCommunityIdAdminCodesByCodeIdStatus: {
    method: 'POST',
    path: '/app/communities/:community_id/admin/codes/:code_id/status',
    summary: 'Community admin: activate, pause or revoke an invite code (as PUT /api/admin/community-admin/codes/:code_id)',
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ status: { enum: [...CODE_STATUSES] } }, ['status']),
    responses: MEMBER_FORM,
  },
  postAppCommunitiesByCommunityIdAdminCirclesByCircleIdVisibility: {
    method: 'POST',
    path: '/app/communities/:community_id/admin/circles/:circle_id/visibility',
    summary: "Community admin: set a circle's visibility (as PUT /api/admin/community-admin/circles/:circle_id/visibility)",
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ visibility: { enum: [...VISIBILITIES] } }, ['visibility']),
    responses: MEMBER_FORM,
  },
  postAppCommunitiesByCommunityIdAdminRequestsByRequestIdDecide: {
    method: 'POST',
    path: '/app/communities/:community_id/admin/requests/:request_id/decide',
    summary:
      'Community admin: approve or decline a circle join request with a note (as POST /api/admin/community-admin/circle-requests/:request_id/approve|reject)',
    description: ADMIN,
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ decision: { enum: ['approve', 'decline'] }, admin_note: field('A note to the person (optional)', { maxLength: 500 }) }, ['decision']),
    responses: MEMBER_FORM,
  },
});

/** What the pages say for each visibility. */
export const VISIBILITY_WORDS: Record<Visibility, { label: string; heading: string; who: string }> = {
  public: { label: 'Public', heading: 'Public circles', who: 'Anyone signed in can see it; people outside the community ask to join.' },
  community: { label: 'Members', heading: 'Members-only circles', who: 'Members of the community see and join it.' },
  private: { label: 'Private', heading: 'Private circles', who: 'Only its members see it; an admin adds them.' },
};

const postPath = (postId: string) => `/app/circle-posts/${encodeURIComponent(postId)}`;
const circlePath = (circleId: string) => `/app/circles/${encodeURIComponent(circleId)}`;
const communityPath = (communityId: string) => `/app/communities/${encodeURIComponent(communityId)}`;
const adminPath = (communityId: string) => `${communityPath(communityId)}/admin`;

/** A form's failure the form can show (a wrong field, a conflict, a limit), else null (the error page shows it). */
function formProblem(err: unknown): Problem | null {
  const problem = problemOf(err);
  if (!problem || [401, 403, 404].includes(problem.status)) return null;
  return problem;
}

/**
 * The member app's community pages, registered on one web router: the member's communities, a
 * community's circles, a circle and its posts, and community administration.
 */
export function communityPageRoutes(router: Router, s: Services): void {
  const web = webRouter(s);
  memberCommunityPages(web, s);
  communityPages(web, s);
  circlePages(web, s);
  circlePostPages(web, s);
  communityAdminPages(web, s);
  router.use(web.routes());
}

const ops = communityPageOperations;

// ---- The member's communities and joining by code ----

async function listPage(s: Services, ctx: Context, member: Member, data: { code?: string; problem?: Problem | null }, status = 200) {
  const [joined, admin] = await Promise.all([memberCommunities(s.store, member.userId), administered(s.store, member.userId)]);
  const ids = new Set(joined.map((c) => c._id));
  const communities = [...joined, ...admin.filter((c) => !ids.has(c._id))].map((c) => ({
    community_id: c._id,
    name: String(c.name),
    description: String(c.description ?? ''),
    admin: (c.admins ?? []).includes(member.userId),
    member: ids.has(c._id),
  }));
  await page(s, ctx, 'app/communities/list', { title: 'Communities', communities, code: '', problem: null, ...data }, status);
}

/** The list of the member's communities, and joining one by invite code. */
function memberCommunityPages(web: Router, s: Services): void {
  mount(web, ops.getAppCommunities, async (ctx) => {
    const member = await requireMember(s, ctx);
    const code = typeof ctx.query.code === 'string' ? ctx.query.code.slice(0, 32) : '';
    await listPage(s, ctx, member, { code });
  });

  mount(web, ops.postAppCommunitiesJoin, async (ctx) => {
    const member = await requireMember(s, ctx);
    const code = formField(ctx, 'code').trim();
    let joined: Awaited<ReturnType<typeof joinByCode>>;
    try {
      const body = validate<Static<typeof JoinCommunityRequest>>(JoinCommunityRequest, { code });
      joined = await joinByCode(s, ctx, member.userId, body.code);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem || problem.status === 401) throw err;
      if (problem.code === 'invite_code_not_found') problem.message = 'That invite code does not match any community.';
      return listPage(s, ctx, member, { code: code.slice(0, 32), problem }, problem.status);
    }
    const name = String(joined.community.name);
    doneTo(ctx, communityPath(String(joined.community.community_id)), joined.joined ? `You joined ${name}.` : `You are already a member of ${name}.`);
  });
}

// ---- A community and its circles ----

/** A community's page (its circles by visibility and the member's join requests), and joining a circle. */
function communityPages(web: Router, s: Services): void {
  mount(web, ops.getAppCommunitiesByCommunityId, async (ctx) => {
    const member = await requireMember(s, ctx);
    const { community, circles } = await communityCircles(s, ctx.params.community_id, member);
    const [isMember, requests] = await Promise.all([
      isCommunityMember(s.store, community._id, member.userId),
      memberJoinRequests(s.store, community._id, member.userId),
    ]);
    const isAdmin = circles.some((c) => c.access.admin) || (community.admins ?? []).includes(member.userId);
    // Someone outside the community who sees no circle learns nothing about it.
    if (!isMember && !isAdmin && circles.length === 0) throw notFound('Community', 'community_not_found');
    const names = new Map(circles.map((c) => [c.circle._id, String(c.circle.name)]));
    const latest = new Map<string, ReadModel<'circle_join_requests'>>();
    const requestOf = (r: ReadModel<'circle_join_requests'> | undefined) => (r ? requestView(r) : null);
    for (const r of requests) if (!latest.has(String(r.circle_id))) latest.set(String(r.circle_id), r);
    const groups = VISIBILITIES.map((visibility) => ({
      visibility,
      ...VISIBILITY_WORDS[visibility],
      circles: circles
        .filter((c) => c.circle.visibility === visibility)
        .map(({ circle, access }) => ({
          circle_id: circle._id,
          name: String(circle.name),
          description: String(circle.description ?? ''),
          member: access.member,
          request: requestOf(latest.get(circle._id)),
        })),
    })).filter((g) => g.circles.length > 0);
    await page(s, ctx, 'app/communities/community', {
      title: String(community.name),
      community: { community_id: community._id, name: String(community.name), description: String(community.description ?? '') },
      isMember,
      isAdmin,
      groups,
      requests: requests.map((r) => ({ ...requestView(r), circle_name: names.get(String(r.circle_id)) ?? 'A circle' })),
    });
  });

  mount(web, ops.postAppCirclesByCircleIdJoin, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    const res = await joinCircleAs(s, ctx, member, ctx.params.circle_id);
    if (res.status === 'joined') return doneTo(ctx, circlePath(res.circle_id), 'You joined the circle.');
    const circle = await getCircle(s.store, res.circle_id);
    doneTo(
      ctx,
      circle ? communityPath(String(circle.community_id)) : circlePath(res.circle_id),
      'Your request to join is with the community’s admins. Its status is on this page.',
    );
  });
}

// ---- A circle, its posts, replies, reactions and link previews ----

interface Compose {
  content: string;
  intent: string;
  link_url: string;
}

async function circlePage(
  s: Services,
  ctx: Context,
  member: Member,
  circleId: string,
  data: { compose?: Compose; problem?: Problem | null; preview?: unknown } = {},
  status = 200,
) {
  const access = await visibleCircle(s.store, circleId, member);
  const circle = access.circle;
  const [community, posts, members, activity] = await Promise.all([
    getCommunity(s.store, String(circle.community_id)),
    circlePosts(s.store, circle._id, { skip: 0, limit: 50 }),
    circleMemberCount(s.store, circle._id),
    circleActivity(s.store, circle._id),
  ]);
  await page(
    s,
    ctx,
    'app/communities/circle',
    {
      title: String(circle.name),
      circle: {
        circle_id: circle._id,
        name: String(circle.name),
        description: String(circle.description ?? ''),
        visibility: VISIBILITY_WORDS[circle.visibility]?.label ?? String(circle.visibility),
      },
      community: community ? { community_id: community._id, name: String(community.name) } : null,
      access: { member: access.member, admin: access.admin },
      members,
      postCount: Number(activity?.post_count ?? 0),
      posts: posts.map(postView),
      intents: INTENTS,
      reactions: CIRCLE_REACTIONS,
      compose: { content: '', intent: 'update', link_url: '', ...data.compose },
      problem: data.problem ?? null,
      preview: data.preview ?? null,
    },
    status,
  );
}

const composeOf = (ctx: Context): Compose => ({
  content: formField(ctx, 'content').slice(0, 5000),
  intent: formField(ctx, 'intent').slice(0, 20),
  link_url: formField(ctx, 'link_url').trim().slice(0, 2000),
});

/** A circle's page, posting in it, and a link's preview before posting. */
function circlePages(web: Router, s: Services): void {
  mount(web, ops.getAppCirclesByCircleId, async (ctx) => {
    const member = await requireMember(s, ctx);
    await circlePage(s, ctx, member, ctx.params.circle_id);
  });

  mount(web, ops.postAppCirclesByCircleIdPosts, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    const compose = composeOf(ctx);
    let post: Awaited<ReturnType<typeof publishInCircle>>['post'];
    try {
      const body = validate<Static<typeof CreatePostRequest>>(CreatePostRequest, {
        circle_id: ctx.params.circle_id,
        content: compose.content,
        intent: compose.intent,
        link_url: compose.link_url || null,
      });
      ({ post } = await publishInCircle(s, ctx, member, body));
    } catch (err) {
      const problem = formProblem(err);
      if (!problem) throw err;
      return circlePage(s, ctx, member, ctx.params.circle_id, { compose, problem }, problem.status);
    }
    doneTo(ctx, `${circlePath(String(post.circle_id))}#post-${encodeURIComponent(String(post.post_id))}`, 'Your post is in the circle.');
  });

  mount(web, ops.postAppCirclesByCircleIdLinkPreview, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    await visibleCircle(s.store, ctx.params.circle_id, member);
    const compose = composeOf(ctx);
    try {
      const body = validate<Static<typeof LinkPreviewRequest>>(LinkPreviewRequest, { url: compose.link_url });
      const preview = await previewLink(s, body.url);
      await circlePage(s, ctx, member, ctx.params.circle_id, { compose, preview });
    } catch (err) {
      const problem = formProblem(err);
      if (!problem) throw err;
      if (problem.fields.url) problem.fields.link_url = problem.fields.url;
      await circlePage(s, ctx, member, ctx.params.circle_id, { compose, problem }, problem.status);
    }
  });
}

async function postPage(
  s: Services,
  ctx: Context,
  member: Member,
  postId: string,
  data: { reply?: string; problem?: Problem | null; preview?: unknown } = {},
  status = 200,
) {
  const post = await getCirclePost(s.store, postId);
  if (!post) throw notFound('Circle post', 'circle_post_not_found');
  const access = await circleOrPostNotFound(s, String(post.circle_id), member);
  const replies = await postReplies(s.store, post._id, { skip: 0, limit: 100 });
  await page(
    s,
    ctx,
    'app/communities/post',
    {
      title: `A post in ${String(access.circle.name)}`,
      circle: { circle_id: access.circle._id, name: String(access.circle.name) },
      access: { member: access.member },
      post: postView(post),
      replies: replies.map(replyView),
      reactions: CIRCLE_REACTIONS,
      reply: data.reply ?? '',
      problem: data.problem ?? null,
      preview: data.preview ?? null,
    },
    status,
  );
}

/** The circle of a post the member reached by its id: a hidden circle answers as if the post did not exist. */
async function circleOrPostNotFound(s: Services, circleId: string, member: Member) {
  try {
    return await visibleCircle(s.store, circleId, member);
  } catch {
    throw notFound('Circle post', 'circle_post_not_found');
  }
}

/** A circle post's page, replying, reacting, and its link's preview. */
function circlePostPages(web: Router, s: Services): void {
  mount(web, ops.getAppCirclePostsByPostId, async (ctx) => {
    const member = await requireMember(s, ctx);
    await postPage(s, ctx, member, ctx.params.post_id);
  });

  mount(web, ops.postAppCirclePostsByPostIdReplies, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    const content = formField(ctx, 'content').slice(0, 2000);
    let reply: Awaited<ReturnType<typeof replyToPost>>;
    try {
      const body = validate<Static<typeof CreateReplyRequest>>(CreateReplyRequest, { post_id: ctx.params.post_id, content });
      reply = await replyToPost(s, ctx, member, body);
    } catch (err) {
      const problem = formProblem(err);
      if (!problem) throw err;
      return postPage(s, ctx, member, ctx.params.post_id, { reply: content, problem }, problem.status);
    }
    doneTo(ctx, `${postPath(ctx.params.post_id)}#reply-${encodeURIComponent(String(reply.reply_id))}`, 'Your reply is posted.');
  });

  mount(web, ops.postAppCirclePostsByPostIdReactions, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    const replyId = formField(ctx, 'reply_id');
    const body = validate<Static<typeof ToggleReactionRequest>>(ToggleReactionRequest, {
      target_type: replyId ? 'reply' : 'post',
      target_id: replyId || ctx.params.post_id,
      reaction: formField(ctx, 'reaction'),
    });
    const post = await getCirclePost(s.store, ctx.params.post_id);
    if (!post) throw notFound('Circle post', 'circle_post_not_found');
    if (replyId) {
      const replies = await postReplies(s.store, post._id, { skip: 0, limit: 100 });
      if (!replies.some((r) => r._id === replyId)) throw notFound('Reply', 'circle_reply_not_found');
    }
    const res = await toggleReaction(s, ctx, member, body);
    const where =
      formField(ctx, 'back') === 'circle'
        ? `${circlePath(String(post.circle_id))}#post-${encodeURIComponent(post._id)}`
        : `${postPath(post._id)}${replyId ? `#reply-${encodeURIComponent(replyId)}` : ''}`;
    doneTo(ctx, where, res.active ? `You reacted: ${body.reaction}.` : `Your ${body.reaction} reaction is removed.`);
  });

  mount(web, ops.postAppCirclePostsByPostIdLinkPreview, async (ctx) => {
    const member = circleWriter(s, ctx, await requireMember(s, ctx));
    const post = await getCirclePost(s.store, ctx.params.post_id);
    if (!post) throw notFound('Circle post', 'circle_post_not_found');
    await circleOrPostNotFound(s, String(post.circle_id), member);
    if (typeof post.link_url !== 'string' || !post.link_url) return doneTo(ctx, postPath(post._id), 'This post has no link.');
    try {
      await postPage(s, ctx, member, post._id, { preview: await previewLink(s, post.link_url) });
    } catch (err) {
      const problem = formProblem(err);
      if (!problem) throw err;
      await postPage(s, ctx, member, post._id, { problem }, problem.status);
    }
  });
}

// ---- Community admins ----

type Community = ReadModel<'communities'>;

/** The community of an admin page, for its admins (and super admins) only: 403 for anyone else, 404 for no such community. */
async function adminCommunity(s: Services, ctx: Context, member: Member): Promise<Community> {
  const [community] = await adminScope(s.store, member, ctx.params.community_id);
  return community;
}

async function adminPage(
  s: Services,
  ctx: Context,
  member: Member,
  community: Community,
  data: { problem?: Problem | null; form?: Record<string, string> } = {},
  status = 200,
) {
  const [stats, circles, members, pending, decided, codes] = await Promise.all([
    communityStats(s.store, community._id),
    circlesOf(s.store, community._id),
    communityMembers(s.store, { communityIds: [community._id], skip: 0, limit: 100 }),
    joinRequests(s.store, [community._id], 'pending', 100),
    joinRequests(s.store, [community._id], undefined, 20),
    s.store.collection('invite_codes').find({ community_id: community._id }, { sort: { community_id: 1, seq: -1 }, limit: 100, hint: 'by_community' }),
  ]);
  const names = new Map(circles.map((c) => [c._id, String(c.name)]));
  const codeViews = [];
  for (const c of codes) {
    const view = codeView(c, s.config.publicBaseUrl);
    const svg = String(await inviteQr(s, String(c.code), 'svg'));
    codeViews.push({ ...view, qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` });
  }
  await page(
    s,
    ctx,
    'app/communities/admin',
    {
      scripts: [assetUrl('communities.js')],
      title: `Manage ${String(community.name)}`,
      community: { community_id: community._id, name: String(community.name) },
      stats,
      circles: circles.map((c) => ({ circle_id: c._id, name: String(c.name), visibility: String(c.visibility) })),
      visibilities: VISIBILITIES.map((v) => ({ value: v, ...VISIBILITY_WORDS[v] })),
      members: members.docs.map(memberView),
      membersTotal: members.total,
      pending: pending.map((r) => ({ ...requestView(r), circle_name: names.get(String(r.circle_id)) ?? 'A circle' })),
      decided: decided.filter((r) => r.status !== 'pending').map((r) => ({ ...requestView(r), circle_name: names.get(String(r.circle_id)) ?? 'A circle' })),
      codes: codeViews,
      codeStatuses: CODE_STATUSES,
      me: member.userId,
      problem: data.problem ?? null,
      form: { label: '', max_uses: '', expires_on: '', ...data.form },
    },
    status,
  );
}

/** Runs an admin form's action: on a problem the form can show, the admin page again with it. */
async function adminAction(s: Services, ctx: Context, member: Member, community: Community, act: () => Promise<string>, form?: Record<string, string>) {
  let notice: string;
  try {
    notice = await act();
  } catch (err) {
    const problem = formProblem(err);
    if (!problem) throw err;
    return adminPage(s, ctx, member, community, { problem, form }, problem.status);
  }
  doneTo(ctx, adminPath(community._id), notice);
}

/** Community administration: the admin page, members, invite codes, circle visibility and join requests. */
function communityAdminPages(web: Router, s: Services): void {
  mount(web, ops.getAppCommunitiesByCommunityIdAdmin, async (ctx) => {
    const member = await requireMember(s, ctx);
    await adminPage(s, ctx, member, await adminCommunity(s, ctx, member));
  });

  mount(web, ops.postAppCommunitiesByCommunityIdAdminMembersByUserIdRemove, async (ctx) => {
    const member = await requireMember(s, ctx);
    const community = await adminCommunity(s, ctx, member);
    await adminAction(s, ctx, member, community, async () => {
      const res = await removeMember(s, ctx, member, ctx.params.user_id, community._id);
      return res.removed ? 'The member is removed from the community.' : 'Nothing changed.';
    });
  });

  mount(web, ops.postAppCommunitiesByCommunityIdAdminCodes, async (ctx) => {
    const member = await requireMember(s, ctx);
    const community = await adminCommunity(s, ctx, member);
    const form = {
      label: formField(ctx, 'label').slice(0, 100),
      max_uses: formField(ctx, 'max_uses').trim().slice(0, 7),
      expires_on: formField(ctx, 'expires_on').trim().slice(0, 10),
    };
    await adminAction(
      s,
      ctx,
      member,
      community,
      async () => {
        const body = validate<Static<typeof CreateCodeRequest>>(CreateCodeRequest, {
          community_id: community._id,
          label: form.label.trim() || null,
          max_uses: /^\d+$/.test(form.max_uses) ? Number(form.max_uses) : form.max_uses || null,
          expires_at: /^\d{4}-\d{2}-\d{2}$/.test(form.expires_on) ? `${form.expires_on}T23:59:59.000Z` : form.expires_on || null,
        });
        const code = await createCode(s, ctx, member, body);
        return `Invite code ${String(code.code)} is ready to share.`;
      },
      form,
    );
  });

  mount(web, ops.postAppCommunitiesByCommunityIdAdminCodesByCodeIdStatus, async (ctx) => {
    const member = await requireMember(s, ctx);
    const community = await adminCommunity(s, ctx, member);
    const code = await getCode(s.store, ctx.params.code_id);
    if (!code || code.community_id !== community._id) throw notFound('Invite code', 'invite_code_not_found');
    await adminAction(s, ctx, member, community, async () => {
      const status = formField(ctx, 'status');
      if (!isOneOf(CODE_STATUSES, status)) throw enumProblem('status', CODE_STATUSES);
      const after = await setCodeStatus(s, ctx, member, code._id, status);
      return `Invite code ${String(after.code)} is ${String(after.status)}.`;
    });
  });

  mount(web, ops.postAppCommunitiesByCommunityIdAdminCirclesByCircleIdVisibility, async (ctx) => {
    const member = await requireMember(s, ctx);
    const community = await adminCommunity(s, ctx, member);
    const circle = await getCircle(s.store, ctx.params.circle_id);
    if (!circle || circle.community_id !== community._id) throw notFound('Circle', 'circle_not_found');
    await adminAction(s, ctx, member, community, async () => {
      const visibility = formField(ctx, 'visibility');
      if (!isOneOf(VISIBILITIES, visibility)) throw enumProblem('visibility', VISIBILITIES);
      const after = await setVisibility(s, ctx, member, circle._id, visibility, community._id);
      return `${String(after.name)} is now ${VISIBILITY_WORDS[after.visibility]?.label.toLowerCase() ?? String(after.visibility)}.`;
    });
  });

  mount(web, ops.postAppCommunitiesByCommunityIdAdminRequestsByRequestIdDecide, async (ctx) => {
    const member = await requireMember(s, ctx);
    const community = await adminCommunity(s, ctx, member);
    const request = await getJoinRequest(s.store, ctx.params.request_id);
    if (!request || request.community_id !== community._id) throw notFound('Join request', 'join_request_not_found');
    await adminAction(s, ctx, member, community, async () => {
      const decision = formField(ctx, 'decision');
      if (decision !== 'approve' && decision !== 'decline') throw enumProblem('decision', ['approve', 'decline']);
      const after = await decideRequest(s, ctx, member, request._id, decision === 'approve', formField(ctx, 'admin_note'), 'body');
      return `${String(after.full_name)}’s request is ${after.status === 'approved' ? 'approved' : 'declined'}.`;
    });
  });
}

const enumProblem = (name: string, values: readonly string[]) =>
  new ValidationFailed([{ loc: ['body', name], msg: `value must be one of: ${values.join(', ')}`, type: 'type_error.enum' }]);
