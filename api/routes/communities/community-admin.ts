import Router from '@koa/router';
import { Type, type Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import QRCode from 'qrcode';
import {
  addCircleMember,
  answerJoinRequest,
  createCircle,
  createCommunity,
  createInviteCode,
  joinWithCode,
  nameCommunityAdmin,
  removeCommunityMember,
  setCircleVisibility,
  updateInviteCodeStatus,
} from '../../../commands/communities/actions.ts';
import type { Actor } from '../../../commands/communities/community.ts';
import { CODE_STATUSES, VISIBILITIES } from '../../../events/communities.ts';
import type { CodeStatus, Visibility as VisibilityName } from '../../../events/communities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { Caller } from '../../../queries/communities/communities.ts';
import {
  adminScope,
  circlesOf,
  circleView,
  codeByValue,
  codeView,
  communityMembers,
  communityStats,
  communityView,
  getCircle,
  getCode,
  getCommunity,
  getJoinRequest,
  inviteAnalytics,
  isCommunityMember,
  isSuper,
  joinRequests,
  joinUrl,
  memberView,
  requestView,
} from '../../../queries/communities/communities.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging } from '../../validation.ts';
import { requireUser } from '../humans/auth.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteAdminCommunityAdminMembersByMemberIdAnswer,
  GetAdminCommunityAdminCircleRequestsAnswer,
  GetAdminCommunityAdminDashboardAnswer,
  GetAdminCommunityAdminInviteAnalyticsByCommunityIdAnswer,
  GetAdminCommunityAdminMembersAnswer,
  PostAdminCommunitiesAnswer201,
  PostAdminCommunitiesByCommunityIdAdminsAnswer,
  PostAdminCommunityAdminCircleRequestsByRequestIdApproveAnswer,
  PostAdminCommunityAdminCircleRequestsByRequestIdRejectAnswer,
  PostAdminCommunityAdminCirclesAnswer201,
  PostAdminCommunityAdminCirclesByCircleIdMembersAnswer,
  PostAdminCommunityAdminCodesAnswer201,
  PostCommunitiesJoinAnswer,
  PutAdminCommunityAdminCirclesByCircleIdVisibilityAnswer,
  PutAdminCommunityAdminCodesByCodeIdAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const Visibility = Type.Union(VISIBILITIES.map((v) => Type.Literal(v)));
export const CreateCommunityRequest = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), description: Type.Optional(Type.String({ maxLength: 1000 })), open: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const NameAdminRequest = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const CreateCircleRequest = Type.Object(
  {
    community_id: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    visibility: Type.Optional(Visibility),
  },
  { additionalProperties: false },
);
export const CreateCodeRequest = Type.Object(
  {
    community_id: Type.String({ minLength: 1, maxLength: 64 }),
    label: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    max_uses: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { additionalProperties: false },
);
export const UpdateCodeStatusRequest = Type.Object({ status: Type.Union(CODE_STATUSES.map((v) => Type.Literal(v))) }, { additionalProperties: false });
export const AddCircleMemberRequest = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const JoinCommunityRequest = Type.Object({ code: Type.String({ minLength: 1, maxLength: 32 }) }, { additionalProperties: false });

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const callerOf = (ctx: Context): Caller => requireUser(ctx);
const actorOf = (c: Caller): Actor => ({ user_id: c.userId, super_admin: isSuper(c) });

const isOneOf = <T extends string>(values: readonly T[], raw: string): raw is T => values.some((v) => v === raw);

function oneOf<T extends string>(values: readonly T[], raw: unknown, name: string, required: boolean): T | undefined {
  if (raw === undefined || raw === '') {
    if (required) throw new ValidationFailed([{ loc: ['query', name], msg: 'field required', type: 'value_error.missing' }]);
    return undefined;
  }
  if (typeof raw !== 'string' || !isOneOf(values, raw))
    throw new ValidationFailed([{ loc: ['query', name], msg: `value must be one of: ${values.join(', ')}`, type: 'type_error.enum' }]);
  return raw;
}

/**
 * The actions of the community-admin routes and of joining by code, shared with the member app's
 * pages (api/routes/web/communities.ts): each checks the caller's role on the object's community
 * (adminScope: 403 `community_admin_required` for a member who does not administer it) and runs
 * the same command.
 */

/** Joins the community of an invite code (404 for an unknown code). */
export async function joinByCode(s: Services, ctx: Context, userId: string, raw: string) {
  const code = await codeByValue(s.store, raw.trim());
  const r = await joinWithCode(s.bus, code ? { code_id: code._id, community_id: String(code.community_id) } : null, userId, commandContext(s, ctx, userId));
  await settled(s, r.position);
  const c = code ? await getCommunity(s.store, String(code.community_id)) : null;
  if (!c) throw notFound('Community', 'community_not_found');
  return { community: communityView(c), joined: r.events.length > 0, circles: (await circlesOf(s.store, c._id)).map((x) => circleView(x)) };
}

/** Removes a member from a community the caller administers (without `communityId`: the one they share). */
export async function removeMember(s: Services, ctx: Context, caller: Caller, memberId: string, communityId?: string) {
  const scope = await adminScope(s.store, caller, communityId);
  if (scope.length !== 1 && !communityId) {
    // Without community_id: the one community the caller administers that the member is in.
    const inside = [];
    for (const c of scope) if (await isCommunityMember(s.store, c._id, memberId)) inside.push(c);
    scope.splice(0, scope.length, ...inside);
  }
  const community = scope[0];
  if (!community) throw notFound('Member', 'not_community_member');
  const res = await removeCommunityMember(s.bus, community._id, { actor: actorOf(caller), user_id: memberId }, commandContext(s, ctx, caller.userId));
  await settled(s, res.position);
  return { removed: true, user_id: memberId, community_id: community._id };
}

/** Creates an invite code of a community the caller administers. */
export async function createCode(s: Services, ctx: Context, caller: Caller, body: Static<typeof CreateCodeRequest>) {
  const [community] = await adminScope(s.store, caller, body.community_id);
  const res = await createInviteCode(
    s.bus,
    community._id,
    {
      actor: actorOf(caller),
      label: body.label?.trim() || null,
      max_uses: body.max_uses ?? null,
      expires_at: body.expires_at ? new Date(body.expires_at).toISOString() : null,
    },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const code = await getCode(s.store, res.code_id);
  if (!code) throw notFound('Invite code', 'invite_code_not_found');
  return codeView(code, s.config.publicBaseUrl);
}

/** Activates, pauses or revokes an invite code of a community the caller administers. */
export async function setCodeStatus(s: Services, ctx: Context, caller: Caller, codeId: string, status: CodeStatus) {
  const code = await getCode(s.store, codeId);
  if (!code) {
    await adminScope(s.store, caller);
    throw notFound('Invite code', 'invite_code_not_found');
  }
  await adminScope(s.store, caller, String(code.community_id));
  const res = await updateInviteCodeStatus(
    s.bus,
    String(code.community_id),
    { actor: actorOf(caller), code_id: code._id, status },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const after = await getCode(s.store, code._id);
  return codeView(after ?? code, s.config.publicBaseUrl);
}

/** The QR code of an invite code's join link: PNG bytes, or SVG text. */
export async function inviteQr(s: Services, code: string, format: 'png' | 'svg'): Promise<Buffer | string> {
  const url = joinUrl(s.config.publicBaseUrl, code);
  if (format === 'svg') return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return QRCode.toBuffer(url, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 320 });
}

/** A circle of a community the caller administers (404 before 403 only for admins). */
export async function circleToAdminister(s: Services, caller: Caller, circleId: string, communityId?: string) {
  const circle = await getCircle(s.store, circleId);
  if (!circle) {
    await adminScope(s.store, caller, communityId);
    throw notFound('Circle', 'circle_not_found');
  }
  await adminScope(s.store, caller, String(circle.community_id));
  return circle;
}

/** Sets the visibility of a circle of a community the caller administers. */
export async function setVisibility(s: Services, ctx: Context, caller: Caller, circleId: string, visibility: VisibilityName, communityId?: string) {
  const circle = await circleToAdminister(s, caller, circleId, communityId);
  const res = await setCircleVisibility(
    s.bus,
    String(circle.community_id),
    { actor: actorOf(caller), circle_id: circle._id, visibility },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const after = await getCircle(s.store, circle._id);
  return circleView(after ?? circle);
}

/** Approves or declines a circle join request of a community the caller administers, with the admin's note (at most 500 characters). */
export async function decideRequest(s: Services, ctx: Context, caller: Caller, requestId: string, approve: boolean, rawNote: string, noteIn: 'query' | 'body') {
  const note = rawNote.trim();
  if (note.length > 500) throw new ValidationFailed([{ loc: [noteIn, 'admin_note'], msg: 'at most 500 characters', type: 'value_error.any_str.max_length' }]);
  const request = await getJoinRequest(s.store, requestId);
  if (!request) {
    await adminScope(s.store, caller);
    throw notFound('Join request', 'join_request_not_found');
  }
  await adminScope(s.store, caller, String(request.community_id));
  const res = await answerJoinRequest(
    s.bus,
    { community_id: String(request.community_id), user_id: String(request.user_id) },
    { actor: actorOf(caller), request_id: request._id, approve, admin_note: note },
    commandContext(s, ctx, caller.userId),
  );
  await settled(s, res.position);
  const after = await getJoinRequest(s.store, request._id);
  return requestView(after ?? request);
}

export const communityAdminOperations = operations({
  postAdminCommunities: {
    method: 'POST',
    path: '/api/admin/communities',
    summary: 'Super admin: create a community (with its default circles)',
    tags: ['communities'],
    auth: 'admin',
    body: CreateCommunityRequest,
    responses: { 201: { schema: PostAdminCommunitiesAnswer201 } },
  },
  postAdminCommunitiesByCommunityIdAdmins: {
    method: 'POST',
    path: '/api/admin/communities/:community_id/admins',
    summary: 'Super admin: name a community admin',
    tags: ['communities'],
    auth: 'admin',
    responses: ok(PostAdminCommunitiesByCommunityIdAdminsAnswer),
    body: NameAdminRequest,
  },
  postCommunitiesJoin: {
    method: 'POST',
    path: '/api/communities/join',
    summary: 'Join a community with an invite code',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostCommunitiesJoinAnswer),
    body: JoinCommunityRequest,
  },
  getAdminCommunityAdminDashboard: {
    method: 'GET',
    path: '/api/admin/community-admin/dashboard',
    summary: 'Community admin: your communities with their figures (super admins: all)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetAdminCommunityAdminDashboardAnswer),
    query: queryOf('community_id'),
  },
  getAdminCommunityAdminMembers: {
    method: 'GET',
    path: '/api/admin/community-admin/members',
    summary: 'Community admin: members (filter by circle, search)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetAdminCommunityAdminMembersAnswer),
    query: queryOf('community_id', 'circle_filter', 'search', { limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  deleteAdminCommunityAdminMembersByMemberId: {
    method: 'DELETE',
    path: '/api/admin/community-admin/members/:member_id',
    summary: 'Community admin: remove a member',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(DeleteAdminCommunityAdminMembersByMemberIdAnswer),
    query: queryOf('community_id'),
  },
  postAdminCommunityAdminCodes: {
    method: 'POST',
    path: '/api/admin/community-admin/codes',
    summary: 'Community admin: create an invite code',
    tags: ['communities'],
    auth: 'bearer',
    body: CreateCodeRequest,
    responses: { 201: { schema: PostAdminCommunityAdminCodesAnswer201 } },
  },
  putAdminCommunityAdminCodesByCodeId: {
    method: 'PUT',
    path: '/api/admin/community-admin/codes/:code_id',
    summary: 'Community admin: activate or disable an invite code',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PutAdminCommunityAdminCodesByCodeIdAnswer),
    body: UpdateCodeStatusRequest,
  },
  getAdminCommunityAdminCodeQrByCode: {
    method: 'GET',
    path: '/api/admin/community-admin/code-qr/:code',
    summary: 'Community admin: the QR code of an invite link (PNG, or SVG with format=svg)',
    tags: ['communities'],
    auth: 'bearer',
    query: { type: 'object', properties: { format: { enum: ['png', 'svg'] } } },
    responses: { 200: { contentType: 'image/png', alsoContentTypes: ['image/svg+xml'], schema: { type: 'string', contentEncoding: 'binary' } } },
  },
  getAdminCommunityAdminInviteAnalyticsByCommunityId: {
    method: 'GET',
    path: '/api/admin/community-admin/invite-analytics/:community_id',
    summary: "Community admin: a community's invite code analytics",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetAdminCommunityAdminInviteAnalyticsByCommunityIdAnswer),
  },
  postAdminCommunityAdminCircles: {
    method: 'POST',
    path: '/api/admin/community-admin/circles',
    summary: 'Community admin: create a circle',
    tags: ['communities'],
    auth: 'bearer',
    body: CreateCircleRequest,
    responses: { 201: { schema: PostAdminCommunityAdminCirclesAnswer201 } },
  },
  putAdminCommunityAdminCirclesByCircleIdVisibility: {
    method: 'PUT',
    path: '/api/admin/community-admin/circles/:circle_id/visibility',
    summary: "Community admin: set a circle's visibility (query visibility)",
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PutAdminCommunityAdminCirclesByCircleIdVisibilityAnswer),
    query: { type: 'object', required: ['visibility'], properties: { visibility: { enum: [...VISIBILITIES] }, community_id: { type: 'string' } } },
  },
  postAdminCommunityAdminCirclesByCircleIdMembers: {
    method: 'POST',
    path: '/api/admin/community-admin/circles/:circle_id/members',
    summary: 'Community admin: add a member to a circle',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostAdminCommunityAdminCirclesByCircleIdMembersAnswer),
    body: AddCircleMemberRequest,
    query: queryOf('community_id'),
  },
  getAdminCommunityAdminCircleRequests: {
    method: 'GET',
    path: '/api/admin/community-admin/circle-requests',
    summary: 'Community admin: requests to join circles',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(GetAdminCommunityAdminCircleRequestsAnswer),
    query: {
      type: 'object',
      properties: { status: { enum: ['pending', 'approved', 'rejected'] }, community_id: { type: 'string' }, limit: limitQuery(100, 50) },
    },
  },
  postAdminCommunityAdminCircleRequestsByRequestIdApprove: {
    method: 'POST',
    path: '/api/admin/community-admin/circle-requests/:request_id/approve',
    summary: 'Community admin: approve a circle join request (optional query admin_note)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostAdminCommunityAdminCircleRequestsByRequestIdApproveAnswer),
    query: queryOf('admin_note', 'community_id'),
  },
  postAdminCommunityAdminCircleRequestsByRequestIdReject: {
    method: 'POST',
    path: '/api/admin/community-admin/circle-requests/:request_id/reject',
    summary: 'Community admin: reject a circle join request (optional query admin_note)',
    tags: ['communities'],
    auth: 'bearer',
    responses: ok(PostAdminCommunityAdminCircleRequestsByRequestIdRejectAnswer),
    query: queryOf('admin_note', 'community_id'),
  },
});

/** Super admins: communities and their admins (shared DECISIONS "Communities and circles"). */
function communityRoutes(router: Router, s: Services): void {
  const admin = new Router({ prefix: '/api/admin/communities' });
  mount(admin, communityAdminOperations.postAdminCommunities, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    const body = input.body;
    const r = await createCommunity(
      s.bus,
      { name: body.name.trim(), description: body.description?.trim() ?? '', open: body.open ?? true, created_by: adminId },
      commandContext(s, ctx, adminId),
    );
    await settled(s, r.position);
    const c = await getCommunity(s.store, r.community_id);
    if (!c) throw notFound('Community', 'community_not_found');
    ctx.status = 201;
    ctx.body = { ...communityView(c), circles: (await circlesOf(s.store, r.community_id)).map((x) => circleView(x)) };
  });
  mount(admin, communityAdminOperations.postAdminCommunitiesByCommunityIdAdmins, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    const body = input.body;
    const r = await nameCommunityAdmin(s.bus, ctx.params.community_id, body.user_id, adminId, commandContext(s, ctx, adminId));
    await settled(s, r.position);
    const c = await getCommunity(s.store, ctx.params.community_id);
    if (!c) throw notFound('Community', 'community_not_found');
    ctx.body = communityView(c);
  });
  router.use(admin.routes());

  const join = new Router({ prefix: '/api/communities' });
  mount(join, communityAdminOperations.postCommunitiesJoin, async (ctx, input) => {
    const { userId } = requireUser(ctx);
    const body = input.body;
    ctx.body = await joinByCode(s, ctx, userId, body.code);
  });
  router.use(join.routes());
}

/**
 * Communities (super admins), joining with a code, and `/api/admin/community-admin/*`: community
 * admins on their own communities, super admins on any.
 */
export function communityAdminRoutes(router: Router, s: Services): void {
  communityRoutes(router, s);
  const r = new Router({ prefix: '/api/admin/community-admin' });
  /**
   * The caller of a community-admin route: a signed-in admin of some community, or a super admin.
   * Anyone else gets 403 before the request's body, query or path is looked at (authorisation
   * before validation); the community the request names is checked after, by `adminScope`.
   */
  const adminCaller = async (ctx: Context): Promise<Caller> => {
    const caller = callerOf(ctx);
    await adminScope(s.store, caller);
    return caller;
  };

  mount(r, communityAdminOperations.getAdminCommunityAdminDashboard, async (ctx) => {
    const caller = await adminCaller(ctx);
    const scope = await adminScope(s.store, caller, str(ctx.query.community_id));
    const communities = [];
    for (const c of scope) communities.push({ ...communityView(c), stats: await communityStats(s.store, c._id) });
    ctx.body = { communities, super_admin: isSuper(caller) };
  });

  mount(r, communityAdminOperations.getAdminCommunityAdminMembers, async (ctx) => {
    const caller = await adminCaller(ctx);
    const scope = await adminScope(s.store, caller, str(ctx.query.community_id));
    const { limit, page, skip } = paging(ctx.query, { limit: 20, max: 100 });
    const circleId = str(ctx.query.circle_filter);
    const search = str(ctx.query.search)?.trim();
    const after = afterCursor(ctx.query);
    const res = await communityMembers(s.store, { communityIds: scope.map((c) => c._id), circleId, search, skip, limit, after });
    ctx.body = { members: res.docs.map(memberView), total: res.total, page, limit, has_more: res.has_more, next_cursor: res.next_cursor };
  });

  mount(r, communityAdminOperations.deleteAdminCommunityAdminMembersByMemberId, async (ctx) => {
    const caller = await adminCaller(ctx);
    ctx.body = await removeMember(s, ctx, caller, ctx.params.member_id, str(ctx.query.community_id));
  });

  mount(r, communityAdminOperations.postAdminCommunityAdminCodes, async (ctx, input) => {
    const caller = await adminCaller(ctx);
    const body = input.body;
    ctx.status = 201;
    ctx.body = await createCode(s, ctx, caller, body);
  });

  mount(r, communityAdminOperations.putAdminCommunityAdminCodesByCodeId, async (ctx, input) => {
    const caller = await adminCaller(ctx);
    const body = input.body;
    ctx.body = await setCodeStatus(s, ctx, caller, ctx.params.code_id, body.status);
  });

  mount(r, communityAdminOperations.getAdminCommunityAdminCodeQrByCode, async (ctx) => {
    const caller = await adminCaller(ctx);
    const code = await codeByValue(s.store, ctx.params.code);
    if (!code) {
      await adminScope(s.store, caller);
      throw notFound('Invite code', 'invite_code_not_found');
    }
    await adminScope(s.store, caller, String(code.community_id));
    const format = oneOf(['png', 'svg'] as const, ctx.query.format, 'format', false) ?? 'png';
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.type = format === 'svg' ? 'image/svg+xml' : 'image/png';
    ctx.body = await inviteQr(s, String(code.code), format);
  });

  mount(r, communityAdminOperations.getAdminCommunityAdminInviteAnalyticsByCommunityId, async (ctx) => {
    const caller = await adminCaller(ctx);
    const [community] = await adminScope(s.store, caller, ctx.params.community_id);
    ctx.body = await inviteAnalytics(s.store, community._id);
  });

  mount(r, communityAdminOperations.postAdminCommunityAdminCircles, async (ctx, input) => {
    const caller = await adminCaller(ctx);
    const body = input.body;
    const [community] = await adminScope(s.store, caller, body.community_id);
    const res = await createCircle(
      s.bus,
      community._id,
      { actor: actorOf(caller), name: body.name.trim(), description: body.description?.trim() ?? '', visibility: body.visibility ?? 'community' },
      commandContext(s, ctx, caller.userId),
    );
    await settled(s, res.position);
    const circle = await getCircle(s.store, res.circle_id);
    if (!circle) throw notFound('Circle', 'circle_not_found');
    ctx.status = 201;
    ctx.body = circleView(circle);
  });

  /** The circle named in the path, for an admin of its community (404 before 403 only for admins). */
  const adminCircle = (ctx: Context, caller: Caller) => circleToAdminister(s, caller, ctx.params.circle_id, str(ctx.query.community_id));

  mount(r, communityAdminOperations.putAdminCommunityAdminCirclesByCircleIdVisibility, async (ctx) => {
    const caller = await adminCaller(ctx);
    const visibility = oneOf(VISIBILITIES, ctx.query.visibility, 'visibility', true) ?? 'community';
    ctx.body = await setVisibility(s, ctx, caller, ctx.params.circle_id, visibility, str(ctx.query.community_id));
  });

  mount(r, communityAdminOperations.postAdminCommunityAdminCirclesByCircleIdMembers, async (ctx, input) => {
    const caller = await adminCaller(ctx);
    const body = input.body;
    const circle = await adminCircle(ctx, caller);
    const res = await addCircleMember(
      s.bus,
      String(circle.community_id),
      { actor: actorOf(caller), circle_id: circle._id, user_id: body.user_id },
      commandContext(s, ctx, caller.userId),
    );
    await settled(s, res.position);
    ctx.body = { circle_id: circle._id, user_id: body.user_id, member: true };
  });

  mount(r, communityAdminOperations.getAdminCommunityAdminCircleRequests, async (ctx) => {
    const caller = await adminCaller(ctx);
    const status = oneOf(['pending', 'approved', 'rejected'] as const, ctx.query.status, 'status', false);
    const scope = await adminScope(s.store, caller, str(ctx.query.community_id));
    const { limit } = paging(ctx.query, { limit: 50, max: 100 });
    const docs = await joinRequests(
      s.store,
      scope.map((c) => c._id),
      status,
      limit,
    );
    ctx.body = { requests: docs.map(requestView), count: docs.length };
  });

  const decide = (approve: boolean) => async (ctx: Context) => {
    const caller = await adminCaller(ctx);
    const note = typeof ctx.query.admin_note === 'string' ? ctx.query.admin_note : '';
    ctx.body = await decideRequest(s, ctx, caller, ctx.params.request_id, approve, note, 'query');
  };
  mount(r, communityAdminOperations.postAdminCommunityAdminCircleRequestsByRequestIdApprove, decide(true));
  mount(r, communityAdminOperations.postAdminCommunityAdminCircleRequestsByRequestIdReject, decide(false));

  router.use(r.routes());
}
