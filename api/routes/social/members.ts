import Router from '@koa/router';
import type { Context } from 'koa';
import { runIntentMatch } from '../../../commands/matching/intent-match.ts';
import { answerIntro, requestIntro } from '../../../commands/social/intros.ts';
import type { MemberProfile } from '../../../commands/social/members.ts';
import { updateMemberProfile } from '../../../commands/social/members.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../../events/capabilities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { INDUSTRIES } from '../../../events/social.ts';
import { getAgent, isPublicAgent, publicAgent } from '../../../queries/agents/agents.ts';
import { agentsOf } from '../../../queries/humans/users.ts';
import {
  bilateralMembers,
  getIntro,
  getListedMember,
  getMember,
  hasPendingIntro,
  introView,
  listBuilders,
  matchSearch,
  memberView,
  pendingIntros,
  searchMembers,
} from '../../../queries/social/members.ts';
import { researchPerson, whyMeet } from '../../../queries/social/texts.ts';
import { requireAgent, requireApiKey } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { isOneOf } from '../../guards.ts';
import { afterCursor, paging, typed } from '../../validation.ts';
import { requireUser } from '../humans/auth.ts';
import { commandContext, settled, writer } from '../util.ts';
import { cursorPaging } from './paging.ts';
import { LIMITS } from '../../rate-limit.ts';
import { idParam, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetMembersAnswer,
  GetMembersByUserIdResearchAnswer,
  GetMembersByUserIdWhyMeetAnswer,
  GetProtocolBuildersAnswer,
  GetProtocolBuildersByUserIdAnswer,
  GetSvcIntrosAnswer,
  PatchAuthMeAnswer,
  PostAgentIntrosAnswer,
  PostMembersMatchAnswer,
  PostProtocolMatchSearchAnswer,
  PostSvcIntrosByIntroIdApproveAnswer,
  PostSvcIntrosByIntroIdDeclineAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const slugs = { type: 'array', maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 60 } };
/** The changes PATCH /api/auth/me takes (and the site's profile page sends). */
export type ProfileChanges = Partial<MemberProfile> & { region?: string | null };
export const profileSchema = typed<ProfileChanges>({
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    full_name: { type: 'string', minLength: 1, maxLength: 100 },
    headline: { type: ['string', 'null'], maxLength: 120 },
    bio: { type: ['string', 'null'], maxLength: 1000 },
    industry: { anyOf: [{ type: 'null' }, { type: 'string', enum: [...INDUSTRIES] }] },
    region: { anyOf: [{ type: 'null' }, { type: 'string', pattern: '^[A-Za-z]{2}$' }] },
    gives: slugs,
    asks: slugs,
    discoverable: { type: 'boolean' },
  },
});
export const searchSchema = typed<{ query: string; limit?: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 500, description: 'What you look for, in plain words (e.g. "fintech founders in Berlin").' },
    limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many members to answer, 1 to 50.' },
  },
});
export const bilateralSchema = typed<{ gives?: string[]; asks?: string[]; limit?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: {
    gives: { ...slugs, description: 'What you give, as capability slugs (default: your capabilities).' },
    asks: { ...slugs, description: "What you ask for, as capability slugs (default: your owner's asks)." },
    limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many members to answer, 1 to 50.' },
  },
});
export const introSchema = typed<{ member_id: string; reason: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['member_id', 'reason'],
  properties: {
    member_id: { type: 'string', minLength: 1, maxLength: 64, description: 'The user_id of the member of the directory to ask.' },
    reason: { type: 'string', minLength: 1, maxLength: 1000, description: 'Why you ask for the introduction; the member reads it.' },
  },
});

/** Gives and asks are normalised like capabilities; one that is not a valid slug afterwards is 422. */
function normaliseSlugs(raw: string[] | undefined, field: string): string[] | undefined {
  if (raw === undefined) return undefined;
  const out = [...new Set(raw.map(normaliseCapability))];
  const bad = out.findIndex((s) => !SLUG_PATTERN.test(s));
  if (bad >= 0)
    throw new ValidationFailed([{ loc: ['body', field, bad], msg: 'must be 3 to 40 characters of a-z, 0-9 and - once normalised', type: 'value_error.slug' }]);
  return out;
}

/** Members (profiles, directory, natural-language and bilateral search), introductions, builder profiles and the generated briefs. */
export const memberOperations = operations({
  patchAuthMe: {
    method: 'PATCH',
    path: '/api/auth/me',
    summary: "Update the signed-in member's profile",
    tags: ['social'],
    auth: 'bearer',
    responses: ok(PatchAuthMeAnswer),
    body: profileSchema,
  },
  getMembers: {
    method: 'GET',
    path: '/api/members',
    summary: 'Browse members (search, industry)',
    tags: ['social'],
    auth: 'key',
    responses: ok(GetMembersAnswer),
    query: queryOf(
      {
        q: { type: 'string', description: 'Keywords: members whose profile holds every word.' },
        // The handler takes an empty value as no filter.
        industry: { type: 'string', enum: [...INDUSTRIES, ''], description: 'Only members of this industry (any when left out or empty).' },
      },
      'page',
      'after',
      { limit: limitQuery(50, 20) },
    ),
  },
  postMembersMatch: {
    method: 'POST',
    path: '/api/members/match',
    summary: 'Find members whose gives and asks match yours (a matching run: 1 credit)',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostMembersMatchAnswer),
    body: bilateralSchema,
    rateLimit: LIMITS.writes,
    cost: 'matching_run',
  },
  getMembersByUserIdResearch: {
    method: 'GET',
    path: '/api/members/:user_id/research',
    summary: 'Research a member',
    params: { user_id: idParam('The member (user_id).') },
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetMembersByUserIdResearchAnswer),
  },
  getMembersByUserIdWhyMeet: {
    method: 'GET',
    path: '/api/members/:user_id/why-meet',
    summary: 'Why you and a member should meet',
    params: { user_id: idParam('The member (user_id).') },
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetMembersByUserIdWhyMeetAnswer),
  },
  postProtocolMatchSearch: {
    method: 'POST',
    path: '/api/protocol/match/search',
    summary: 'Search members by intent',
    tags: ['social'],
    auth: 'key',
    responses: ok(PostProtocolMatchSearchAnswer),
    body: searchSchema,
  },
  postAgentIntros: {
    method: 'POST',
    path: '/api/agent/intros',
    summary: 'Request an introduction to a member',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentIntrosAnswer),
    body: introSchema,
    rateLimit: LIMITS.writes,
    cost: 'intro_request',
  },
  getSvcIntros: {
    method: 'GET',
    path: '/api/svc/intros',
    summary: 'Introductions waiting for your approval',
    tags: ['social'],
    auth: 'bearer',
    responses: ok(GetSvcIntrosAnswer),
  },
  postSvcIntrosByIntroIdApprove: {
    method: 'POST',
    path: '/api/svc/intros/:intro_id/approve',
    summary: 'Approve an introduction',
    tags: ['social'],
    auth: 'bearer',
    responses: ok(PostSvcIntrosByIntroIdApproveAnswer),
  },
  postSvcIntrosByIntroIdDecline: {
    method: 'POST',
    path: '/api/svc/intros/:intro_id/decline',
    summary: 'Decline an introduction',
    tags: ['social'],
    auth: 'bearer',
    responses: ok(PostSvcIntrosByIntroIdDeclineAnswer),
  },
  getProtocolBuilders: {
    method: 'GET',
    path: '/api/protocol/builders',
    summary: 'Builder profiles (filter by capability, industry)',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolBuildersAnswer),
    query: queryOf(
      {
        capability: { type: 'string', description: 'Only builders with an agent of this capability (normalised as capabilities are).' },
        // Not an enum: the handler filters by any value (one that is no industry matches no builder).
        industry: { type: 'string', description: 'Only builders of this industry.', examples: [...INDUSTRIES] },
      },
      'cursor',
      { limit: limitQuery(100, 20) },
    ),
  },
  getProtocolBuildersByUserId: {
    method: 'GET',
    path: '/api/protocol/builders/:user_id',
    summary: 'A builder profile',
    params: { user_id: idParam('The builder (a member, user_id).') },
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolBuildersByUserIdAnswer),
  },
});

/** The member approves or declines an introduction to them (the command checks it is theirs and still pending). */
export async function answerIntroduction(s: Services, ctx: Context, userId: string, introId: string, approve: boolean) {
  const doc = await getIntro(s.store, introId);
  const request = doc
    ? {
        intro_id: doc._id,
        agent_id: doc.agent_id,
        owner_user_id: doc.owner_user_id,
        member_id: doc.member_id,
        expires_at: doc.expires_at,
      }
    : null;
  const r = await answerIntro(s.bus, userId, request, approve, commandContext(s, ctx, userId));
  await settled(s, r.position);
  return r;
}

/**
 * The signed-in member's changes to their own profile (PATCH /api/auth/me and the site's profile
 * page), checked against `profileSchema`: gives and asks normalised; answers the profile.
 */
export async function updateOwnProfile(s: Services, ctx: Context, userId: string, body: ProfileChanges) {
  const changes: Partial<MemberProfile> = { ...body };
  if (typeof body.region === 'string') changes.region = body.region.toUpperCase();
  if (typeof body.headline === 'string') changes.headline = body.headline.trim() || null;
  if (typeof body.bio === 'string') changes.bio = body.bio.trim() || null;
  const gives = normaliseSlugs(body.gives, 'gives');
  const asks = normaliseSlugs(body.asks, 'asks');
  if (gives) changes.gives = gives;
  if (asks) changes.asks = asks;
  const r = await updateMemberProfile(s.bus, userId, changes, commandContext(s, ctx, userId));
  await settled(s, r.position);
  const member = await getMember(s.store, userId);
  if (!member) throw notFound('User', 'user_not_found');
  return { ...memberView(member), discoverable: member.discoverable === true };
}

export function memberRoutes(router: Router, s: Services): void {
  const auth = new Router({ prefix: '/api/auth' });
  mount(auth, memberOperations.patchAuthMe, async (ctx, input) => {
    const { userId } = requireUser(ctx);
    ctx.body = await updateOwnProfile(s, ctx, userId, input.body);
  });
  router.use(auth.routes());

  const members = new Router({ prefix: '/api/members' });
  mount(members, memberOperations.getMembers, async (ctx) => {
    requireApiKey(ctx);
    const { limit, page, skip } = paging(ctx.query, { limit: 20, max: 50 });
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const industry = typeof ctx.query.industry === 'string' && ctx.query.industry ? ctx.query.industry : undefined;
    if (industry && !isOneOf(INDUSTRIES, industry))
      throw new ValidationFailed([{ loc: ['query', 'industry'], msg: `value must be one of: ${INDUSTRIES.join(', ')}`, type: 'type_error.enum' }]);
    const r = await searchMembers(s.store, { q: q || undefined, industry, skip, limit, after: afterCursor(ctx.query) });
    ctx.body = { members: r.items, page, limit, has_more: r.has_more, next_cursor: r.next_cursor, q: q || null, industry: industry ?? null };
  });
  mount(members, memberOperations.postMembersMatch, async (ctx, input) => {
    // A matching run (the spec's cost table): charged 1 credit, with the cost headers and dry runs of every charged write.
    const agentId = writer(s, ctx);
    const body = input.body;
    let gives = normaliseSlugs(body.gives, 'gives');
    let asks = normaliseSlugs(body.asks, 'asks');
    if (!gives && !asks) {
      // Default: the agent's capabilities are what it gives; its owner's asks what it seeks.
      const agent = await getAgent(s.store, agentId);
      const owner = typeof agent?.owner_user_id === 'string' ? await getMember(s.store, agent.owner_user_id) : null;
      gives = agent?.capabilities ?? [];
      asks = owner?.asks ?? [];
    }
    const agent = await getAgent(s.store, agentId);
    const exclude = typeof agent?.owner_user_id === 'string' ? agent.owner_user_id : undefined;
    const limit = body.limit ?? 10;
    const matches = await bilateralMembers(s.store, { gives: gives ?? [], asks: asks ?? [], exclude }, limit);
    const run = { agent_id: agentId, gives: gives ?? [], asks: asks ?? [], limit, member_ids: matches.map((m) => m.member.user_id) };
    const r = await runIntentMatch(s.bus, run, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    const recorded = r.events[0]?.data;
    ctx.body = {
      run_id: recorded?.run_id ?? null,
      gives: run.gives,
      asks: run.asks,
      matches,
      credits_charged: toCredits(recorded?.charge.amount_mc ?? 0),
      balance: toCredits(recorded?.charge.balance_after_mc ?? r.state.balance_mc),
    };
  });
  const brief = (kind: 'research' | 'why-meet') => async (ctx: Context) => {
    const agentId = requireAgent(ctx);
    const member = await getListedMember(s.store, ctx.params.user_id);
    if (!member) throw notFound('Member', 'member_not_found');
    if (kind === 'research') {
      const agents = await agentsOf(s.store, member.agent_ids ?? []);
      ctx.body = researchPerson(member, agents);
      return;
    }
    const agent = await getAgent(s.store, agentId);
    const owner = typeof agent?.owner_user_id === 'string' ? await getMember(s.store, agent.owner_user_id) : null;
    const me = {
      name: typeof agent?.name === 'string' ? agent.name : 'your agent',
      gives: [...new Set([...(agent?.capabilities ?? []), ...(owner?.gives ?? [])])],
      asks: owner?.asks ?? [],
      industry: typeof owner?.industry === 'string' ? owner.industry : null,
    };
    ctx.body = { agent_id: agentId, ...whyMeet(me, member) };
  };
  mount(members, memberOperations.getMembersByUserIdResearch, brief('research'));
  mount(members, memberOperations.getMembersByUserIdWhyMeet, brief('why-meet'));
  router.use(members.routes());

  const match = new Router({ prefix: '/api/protocol/match' });
  mount(match, memberOperations.postProtocolMatchSearch, async (ctx, input) => {
    requireApiKey(ctx);
    const body = input.body;
    const r = await matchSearch(s.store, body.query, body.limit ?? 10);
    ctx.body = { query: body.query, terms: r.terms, results: r.results, count: r.results.length };
  });
  router.use(match.routes());

  const intros = new Router({ prefix: '/api/agent/intros' });
  mount(intros, memberOperations.postAgentIntros, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const body = input.body;
    const reason = body.reason.trim();
    if (!reason) throw new ValidationFailed([{ loc: ['body', 'reason'], msg: 'reason must not be blank', type: 'value_error.blank' }]);
    const now = s.clock.now();
    const [member, pending] = await Promise.all([getListedMember(s.store, body.member_id), hasPendingIntro(s.store, agentId, body.member_id, now)]);
    const r = await requestIntro(s.bus, agentId, { member_id: body.member_id, reason }, commandContext(s, ctx, agentId), {
      member_listed: member !== null,
      pending_exists: pending,
    });
    await settled(s, r.position);
    const e = r.events[0];
    if (!e) throw notFound('Introduction', 'intro_not_found');
    const d = e.data;
    ctx.body = {
      intro_id: d.intro_id,
      member_id: d.member_id,
      status: 'pending',
      reason: d.reason,
      requested_at: d.requested_at,
      expires_at: d.expires_at,
      credits_charged: toCredits(d.charge.amount_mc),
      balance: toCredits(d.charge.balance_after_mc),
    };
  });
  router.use(intros.routes());

  const svc = new Router({ prefix: '/api/svc/intros' });
  mount(svc, memberOperations.getSvcIntros, async (ctx) => {
    const { userId } = requireUser(ctx);
    const items = await pendingIntros(s.store, userId, s.clock.now());
    ctx.body = { intros: items.map(introView), count: items.length };
  });
  const answer = (approve: boolean) => async (ctx: Context) => {
    const { userId } = requireUser(ctx);
    const r = await answerIntroduction(s, ctx, userId, ctx.params.intro_id, approve);
    ctx.body = { intro_id: ctx.params.intro_id, status: r.status, match_id: r.match_id };
  };
  mount(svc, memberOperations.postSvcIntrosByIntroIdApprove, answer(true));
  mount(svc, memberOperations.postSvcIntrosByIntroIdDecline, answer(false));
  router.use(svc.routes());

  const builders = new Router({ prefix: '/api/protocol/builders' });
  mount(builders, memberOperations.getProtocolBuilders, async (ctx) => {
    const capability = typeof ctx.query.capability === 'string' && ctx.query.capability ? normaliseCapability(ctx.query.capability) : undefined;
    const industry = typeof ctx.query.industry === 'string' && ctx.query.industry ? ctx.query.industry : undefined;
    const page = await listBuilders(s.store, { capability, industry, ...cursorPaging(ctx.query, { limit: 20, max: 100 }) });
    ctx.body = { builders: page.items.map(memberView), next_cursor: page.next_cursor, has_more: page.has_more };
  });
  mount(builders, memberOperations.getProtocolBuildersByUserId, async (ctx) => {
    const member = await getListedMember(s.store, ctx.params.user_id);
    if (!member || member.builder_listed !== true) throw notFound('Builder', 'builder_not_found');
    const agents = (await agentsOf(s.store, member.agent_ids ?? [])).filter(isPublicAgent);
    const trust = agents.map((a) => (typeof a.trust_score === 'number' ? a.trust_score : 0));
    ctx.body = {
      ...memberView(member),
      agents: agents.map((a) => publicAgent(a, s.config.publicBaseUrl)),
      average_trust: trust.length ? Math.round((trust.reduce((x, y) => x + y, 0) / trust.length) * 10) / 10 : 0,
    };
  });
  router.use(builders.routes());
}
