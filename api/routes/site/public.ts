import Router from '@koa/router';
import { Type, type Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import { acceptNda, recordPageView, submitPartnerLead, updatePitchDeck } from '../../../commands/site/site.ts';
import { BoundedCache } from '../../../events/kernel/cache.ts';
import { DAY } from '../../../events/kernel/clock.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { pageViewStats, partnerLeads, pitchDeck, profileCounts } from '../../../queries/site/public.ts';
import { circleActivity, circleMemberCount } from '../../../queries/communities/circles.ts';
import { getCommunity, publicCircles } from '../../../queries/communities/communities.ts';
import { skipLimit } from '../communities/circles.ts';
import type { LimitRule } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, validate } from '../../validation.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAdminPartnerLeadsAnswer,
  GetAnalyticsStatsAnswer,
  GetPitchDeckSettingsAnswer,
  GetPublicCirclesAnswer,
  GetPublicIndustryStatsAnswer,
  GetPublicRegionStatsAnswer,
  PostNdaAcceptAnswer,
  PostPartnerLeadsAnswer,
  PutPitchDeckSettingsAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const Email = Type.String({ minLength: 3, maxLength: 254, format: 'email' });
const Opt = (max: number) => Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]));
export const PartnerLeadRequest = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), email: Email, company: Opt(200), role: Opt(200), message: Opt(5000) },
  { additionalProperties: false },
);
export const PageViewEvent = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 500 }), referrer: Opt(1000), session_id: Opt(100) },
  { additionalProperties: false },
);
export const PitchDeckSettingsRequest = Type.Object(
  { url: Type.String({ minLength: 9, maxLength: 2000, pattern: '^https://' }) },
  { additionalProperties: false },
);
export const NdaAcceptRequest = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), email: Email, company: Opt(200) },
  { additionalProperties: false },
);

/** How long the landing statistics are served from memory (and may be cached by clients). */
export const STATS_CACHE_MS = 60_000;
/** Public writes (leads, page views, NDA) per client address. */
export const PUBLIC_WRITES: LimitRule = { name: 'public_site_writes', points: 30, windowMs: 60_000, per: 'address' };
const trimmed = (v: string | null | undefined) => (typeof v === 'string' && v.trim() ? v.trim() : null);

/**
 * Sends a partner lead from the /partners page's form (which counts PUBLIC_WRITES first): the form
 * checked against the request schema here, then recorded as POST /api/partner-leads records it.
 */
export function sendPartnerLead(s: Services, ctx: Context, input: unknown) {
  return partnerLead(s, ctx, validate<Static<typeof PartnerLeadRequest>>(PartnerLeadRequest, input));
}

/** Records a partner lead from its checked request (trimmed), projected before the answer. */
async function partnerLead(s: Services, ctx: Context, body: Static<typeof PartnerLeadRequest>) {
  const name = body.name.trim();
  if (!name) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' }]);
  const r = await submitPartnerLead(
    s.bus,
    { name, email: body.email.trim().toLowerCase(), company: trimmed(body.company), role: trimmed(body.role), message: trimmed(body.message) },
    commandContext(s, ctx, null),
  );
  await settled(s, r.position);
  return { lead_id: r.lead_id, received: true as const, message: 'Thank you: we will be in touch.' };
}

/** Accepts the NDA from the /pitch-deck page's form (which counts PUBLIC_WRITES first), checked here: as POST /api/nda/accept does. */
export function ndaAccepted(s: Services, ctx: Context, input: unknown) {
  return acceptNdaAs(s, ctx, validate<Static<typeof NdaAcceptRequest>>(NdaAcceptRequest, input));
}

/** Records an NDA acceptance from its checked request: the acceptance and the deck link. */
async function acceptNdaAs(s: Services, ctx: Context, body: Static<typeof NdaAcceptRequest>) {
  const name = body.name.trim();
  if (!name) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' }]);
  const r = await acceptNda(s.bus, { name, email: body.email.trim().toLowerCase(), company: trimmed(body.company) }, commandContext(s, ctx, null));
  await settled(s, r.position);
  const e = r.events[0];
  const d = await pitchDeck(s.store);
  return { acceptance_id: r.acceptance_id, accepted_at: e?.data.accepted_at ?? s.clock.now().toISOString(), deck_url: d?.url ?? null };
}

/** Sets the pitch deck link from the console's site page, its form checked here: as PUT /api/pitch-deck/settings does. */
export function setPitchDeck(s: Services, ctx: Context, admin: string, input: unknown) {
  return pitchDeckSet(s, ctx, admin, validate<Static<typeof PitchDeckSettingsRequest>>(PitchDeckSettingsRequest, input));
}

/** Sets the pitch deck link from its checked request: super admin `admin` only. */
async function pitchDeckSet(s: Services, ctx: Context, admin: string, body: Static<typeof PitchDeckSettingsRequest>) {
  try {
    new URL(body.url);
  } catch {
    throw new ValidationFailed([{ loc: ['body', 'url'], msg: 'url must be an absolute https URL', type: 'value_error.url' }]);
  }
  const r = await updatePitchDeck(s.bus, { url: body.url, updated_by: admin }, commandContext(s, ctx, admin));
  await settled(s, r.position);
  const e = r.events[0];
  if (!e) throw notFound('Pitch deck');
  return { url: e.data.url, updated_at: e.data.updated_at };
}

/** Unauthenticated public-site routes, with admin-only statistics and pitch-deck update. */
export const publicSiteOperations = operations({
  getPublicRegionStats: {
    method: 'GET',
    path: '/api/public/region-stats',
    summary: 'Members by region (public, cached for a minute)',
    tags: ['site'],
    auth: 'none',
    responses: ok(GetPublicRegionStatsAnswer),
  },
  getPublicIndustryStats: {
    method: 'GET',
    path: '/api/public/industry-stats',
    summary: 'Members by industry (public, cached for a minute)',
    tags: ['site'],
    auth: 'none',
    responses: ok(GetPublicIndustryStatsAnswer),
  },
  getPublicCircles: {
    method: 'GET',
    path: '/api/public/circles',
    summary: 'The public circles of open communities, newest first (what a homepage lists)',
    tags: ['site'],
    auth: 'none',
    responses: ok(GetPublicCirclesAnswer),
    query: queryOf('skip', { limit: limitQuery(100, 20) }),
  },
  postPartnerLeads: {
    method: 'POST',
    path: '/api/partner-leads',
    summary: 'Leave your details as a prospective partner',
    tags: ['site'],
    auth: 'none',
    responses: ok(PostPartnerLeadsAnswer),
    body: PartnerLeadRequest,
    rateLimit: PUBLIC_WRITES,
  },
  getAdminPartnerLeads: {
    method: 'GET',
    path: '/api/admin/partner-leads',
    summary: 'Super admin: the partner leads',
    tags: ['site'],
    auth: 'admin',
    responses: ok(GetAdminPartnerLeadsAnswer),
    query: queryOf({ limit: limitQuery(100, 50) }, 'page', 'after'),
  },
  postAnalyticsPageview: {
    method: 'POST',
    path: '/api/analytics/pageview',
    summary: 'Record a page view (path, referrer, session id)',
    tags: ['site'],
    auth: 'none',
    body: PageViewEvent,
    rateLimit: PUBLIC_WRITES,
    responses: { 202: { schema: { type: 'object', required: ['recorded'], properties: { recorded: { const: true } } } } },
  },
  getAnalyticsStats: {
    method: 'GET',
    path: '/api/analytics/stats',
    summary: 'Super admin: page view figures of the last days',
    tags: ['site'],
    auth: 'admin',
    responses: ok(GetAnalyticsStatsAnswer),
    query: { type: 'object', properties: { days: { type: 'string', pattern: '^\\d+$', description: 'From 1 to 365 (default 30).' } } },
  },
  getPitchDeckSettings: {
    method: 'GET',
    path: '/api/pitch-deck/settings',
    summary: 'The pitch deck link',
    tags: ['site'],
    auth: 'none',
    responses: ok(GetPitchDeckSettingsAnswer),
  },
  putPitchDeckSettings: {
    method: 'PUT',
    path: '/api/pitch-deck/settings',
    summary: 'Super admin: set the pitch deck link',
    tags: ['site'],
    auth: 'admin',
    responses: ok(PutPitchDeckSettingsAnswer),
    body: PitchDeckSettingsRequest,
  },
  postNdaAccept: {
    method: 'POST',
    path: '/api/nda/accept',
    summary: 'Accept the NDA (answers the pitch deck link)',
    tags: ['site'],
    auth: 'none',
    responses: ok(PostNdaAcceptAnswer),
    body: NdaAcceptRequest,
    rateLimit: PUBLIC_WRITES,
  },
});

export function publicSiteRoutes(router: Router, s: Services): void {
  const cache = new BoundedCache<string, { at: number; body: unknown }>({ max: 2, ttlMs: STATS_CACHE_MS, now: () => s.clock.now().getTime() });
  const stats = (kind: 'region' | 'industry') => async (ctx: Context) => {
    const now = s.clock.now().getTime();
    let hit = cache.get(kind);
    if (!hit) {
      const counts = await profileCounts(s.store, kind);
      hit = {
        at: now,
        body: { [kind === 'region' ? 'regions' : 'industries']: counts, total: counts.reduce((n, c) => n + c.count, 0), as_of: new Date(now).toISOString() },
      };
      cache.set(kind, hit);
    }
    ctx.set('Cache-Control', `public, max-age=${STATS_CACHE_MS / 1000}`);
    ctx.body = hit.body;
  };
  const pub = new Router({ prefix: '/api/public' });
  mount(pub, publicSiteOperations.getPublicRegionStats, stats('region'));
  mount(pub, publicSiteOperations.getPublicIndustryStats, stats('industry'));
  mount(pub, publicSiteOperations.getPublicCircles, async (ctx) => {
    const page = skipLimit(ctx.query, { limit: 20, max: 100 });
    const listed = await publicCircles(s.store, page.skip, page.limit);
    const circles = await Promise.all(
      listed.map(async (c) => {
        const [community, members, activity] = await Promise.all([
          getCommunity(s.store, String(c.community_id)),
          circleMemberCount(s.store, c._id),
          circleActivity(s.store, c._id),
        ]);
        return {
          circle_id: c._id,
          community_id: c.community_id,
          community_name: community?.name ?? null,
          name: c.name,
          description: c.description ?? null,
          member_count: members,
          post_count: activity?.post_count ?? 0,
          last_activity_at: activity?.last_activity_at ?? null,
          url: `${s.config.publicBaseUrl}/circles/${encodeURIComponent(c._id)}`,
        };
      }),
    );
    ctx.body = { circles, skip: page.skip, limit: page.limit };
  });
  router.use(pub.routes());

  const leads = new Router({ prefix: '/api/partner-leads' });
  mount(leads, publicSiteOperations.postPartnerLeads, async (ctx, input) => {
    ctx.body = await partnerLead(s, ctx, input.body);
  });
  router.use(leads.routes());

  const adminLeads = new Router({ prefix: '/api/admin/partner-leads' });
  mount(adminLeads, publicSiteOperations.getAdminPartnerLeads, async (ctx) => {
    requireSuperAdmin(ctx);
    const { limit, page, skip } = paging(ctx.query, { limit: 50, max: 100 });
    ctx.body = { ...(await partnerLeads(s.store, skip, limit, afterCursor(ctx.query))), page, limit };
  });
  router.use(adminLeads.routes());

  const analytics = new Router({ prefix: '/api/analytics' });
  mount(analytics, publicSiteOperations.postAnalyticsPageview, async (ctx, input) => {
    const body = input.body;
    const r = await recordPageView(
      s.bus,
      { path: body.path.trim() || '/', referrer: trimmed(body.referrer), session_id: trimmed(body.session_id) },
      commandContext(s, ctx, null),
    );
    await settled(s, r.position);
    ctx.status = 202;
    ctx.body = { recorded: true };
  });
  mount(analytics, publicSiteOperations.getAnalyticsStats, async (ctx) => {
    requireSuperAdmin(ctx);
    const raw = typeof ctx.query.days === 'string' ? ctx.query.days : '30';
    if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 365)
      throw new ValidationFailed([{ loc: ['query', 'days'], msg: 'days must be an integer from 1 to 365', type: 'value_error.number.range' }]);
    const since = new Date(s.clock.now().getTime() - (Number(raw) - 1) * DAY).toISOString().slice(0, 10);
    ctx.body = { days: Number(raw), ...(await pageViewStats(s.store, since)) };
  });
  router.use(analytics.routes());

  const deck = new Router({ prefix: '/api/pitch-deck' });
  mount(deck, publicSiteOperations.getPitchDeckSettings, async (ctx) => {
    const d = await pitchDeck(s.store);
    ctx.body = { url: d?.url ?? null, updated_at: d?.updated_at ?? null };
  });
  mount(deck, publicSiteOperations.putPitchDeckSettings, async (ctx, input) => {
    const admin = requireSuperAdmin(ctx);
    ctx.body = await pitchDeckSet(s, ctx, admin, input.body);
  });
  router.use(deck.routes());

  const nda = new Router({ prefix: '/api/nda' });
  mount(nda, publicSiteOperations.postNdaAccept, async (ctx, input) => {
    ctx.body = await acceptNdaAs(s, ctx, input.body);
  });
  router.use(nda.routes());
}
