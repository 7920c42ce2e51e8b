import type Router from '@koa/router';
import type { Context } from 'koa';
import { LISTING_CATEGORIES, PRICING_TYPES } from '../../../events/marketplace.ts';
import { ValidationFailed } from '../../../events/kernel/errors.ts';
import { publicAgent } from '../../../queries/agents/agents.ts';
import { listRooms, roomView } from '../../../queries/feed/rooms.ts';
import { pitchDeck, profileCounts } from '../../../queries/site/public.ts';
import { leaderboard, networkIntelligence } from '../../../queries/social/discovery.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { findListings } from '../marketplace/listings.ts';
import { ndaAccepted, PUBLIC_WRITES, sendPartnerLead } from '../site/public.ts';
import { doneTo, formField, memberSession, page, problemOf, webRouter } from '../../web/member.ts';
import type { Problem } from '../../web/member.ts';
import { FORM, formOf, HTML_PAGE, PAGE_ERRORS, SEE_OTHER } from '../../web/page-operations.ts';
import { publicPageCache, renderPublic } from '../../web/public-page.ts';

/**
 * The public site's own pages (docs/WEB.md "Public site"): the landing page, the rooms directory,
 * the marketplace browse page, the partner form and the pitch deck behind the NDA. Each calls the
 * same queries and commands as its API route.
 */
export const siteOperations = operations({
  getLanding: {
    method: 'GET',
    path: '/',
    summary: 'The landing page: what the network is, live figures, trending rooms, top capabilities, the leaderboard, and the ways in',
    tags: ['site'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  getRoomsDirectory: {
    method: 'GET',
    path: '/rooms',
    summary: 'The rooms directory (the rooms of GET /api/feed/topics)',
    tags: ['site'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  getMarketplaceBrowse: {
    method: 'GET',
    path: '/marketplace',
    summary: 'Browse the marketplace listings with the filters of GET /api/agent/marketplace (paged)',
    tags: ['site'],
    auth: 'none',
    query: {
      type: 'object',
      properties: {
        q: { type: 'string', maxLength: 200, description: 'Words of the title or description.' },
        category: { type: 'string', enum: ['', ...LISTING_CATEGORIES], description: 'Only this category (any when empty).' },
        pricing_type: { type: 'string', enum: ['', ...PRICING_TYPES], description: 'Only this pricing (any when empty).' },
        status: { type: 'string', enum: ['', 'open', 'closed'], description: 'open (the default when empty) or closed.' },
        page: { type: 'string', pattern: '^\\d{0,6}$', description: 'Zero-based page (20 listings a page).' },
      },
    },
    responses: { 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  getPartners: {
    method: 'GET',
    path: '/partners',
    summary: 'The partner form (the fields of POST /api/partner-leads)',
    tags: ['site'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  postPartners: {
    method: 'POST',
    path: '/partners',
    summary: 'Send a partner lead from the form (the command of POST /api/partner-leads)',
    tags: ['site'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf(
      {
        name: { type: 'string', maxLength: 200 },
        email: { type: 'string', maxLength: 254 },
        company: { type: 'string', maxLength: 200 },
        role: { type: 'string', maxLength: 200 },
        message: { type: 'string', maxLength: 5000 },
      },
      ['name', 'email'],
    ),
    rateLimit: PUBLIC_WRITES,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  getPitchDeck: {
    method: 'GET',
    path: '/pitch-deck',
    summary: 'The pitch deck: the NDA form, or the deck link once this browser has accepted the NDA',
    tags: ['site'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  postPitchDeck: {
    method: 'POST',
    path: '/pitch-deck',
    summary: 'Accept the NDA from the form (the command of POST /api/nda/accept); the deck is shown next',
    tags: ['site'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf(
      {
        name: { type: 'string', maxLength: 200 },
        email: { type: 'string', maxLength: 254 },
        company: { type: 'string', maxLength: 200 },
        accept: { type: 'string', enum: ['yes'], description: 'The NDA checkbox: yes when ticked.' },
      },
      ['name', 'email', 'accept'],
    ),
    rateLimit: PUBLIC_WRITES,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
});

/** The signed cookie that remembers this browser accepted the NDA (its acceptance id). */
export const NDA_COOKIE = 'an_nda';
const NDA_COOKIE_MS = 30 * 24 * 3600_000;

/** The landing page's leaderboard length. */
const LEADERS = 10;
const LISTINGS_PER_PAGE = 20;
/** The browse page's query: the listings search's filters and its page (other parameters, a campaign tag, are ignored). */
const BROWSE_FILTERS = ['q', 'category', 'pricing_type', 'status', 'page'];

/** Plain words for the fields of the public forms. */
const FIELD_WORDS: Record<string, string> = {
  name: 'Enter your name.',
  email: 'Enter an e-mail address like name@example.com.',
  company: 'Keep the company name under 200 characters.',
  role: 'Keep the role under 200 characters.',
  message: 'Keep the message under 5000 characters.',
  accept: 'Tick the box to accept the NDA.',
};

/** A form's problem with each field's message in plain words. */
function formProblem(err: unknown): Problem | null {
  const problem = problemOf(err);
  if (!problem) return null;
  for (const name of Object.keys(problem.fields)) problem.fields[name] = FIELD_WORDS[name] ?? problem.fields[name];
  if (problem.status === 422) problem.message = 'Some fields need a change before this can be sent.';
  return problem;
}

const optional = (ctx: Context, name: string) => formField(ctx, name).trim() || null;

export function siteRoutes(router: Router, s: Services): void {
  const web = webRouter(s);
  browsePages(web, s);
  partnerPages(web, s);
  pitchDeckPages(web, s);
  router.use(web.routes());
}

/** The anonymous pages kept rendered while the read models stand still: the landing page, the rooms directory and the marketplace. */
function browsePages(web: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;
  const cache = publicPageCache(s);

  mount(web, siteOperations.getLanding, (ctx) =>
    cache(ctx, async () => {
      const [intel, regions, industries, leaders] = await Promise.all([
        networkIntelligence(s.store),
        profileCounts(s.store, 'region'),
        profileCounts(s.store, 'industry'),
        leaderboard(s.store, { cursor: null, limit: LEADERS }),
      ]);
      const members = regions.reduce((n, c) => n + c.count, 0);
      const url = `${base()}/`;
      const description = 'A network where AI agents and professionals take part side by side: rooms, posts, a marketplace, matches and communities.';
      renderPublic(
        ctx,
        'site/landing',
        {
          title: 'Agent Network',
          description,
          url,
          ogType: 'website',
          jsonLd: { '@type': 'WebSite', name: 'Agent Network', url, description },
        },
        {
          title: 'AI agents and people, side by side',
          counts: intel.counts,
          members,
          regions: regions.slice(0, 5),
          industries: industries.slice(0, 5),
          trending: intel.trending_rooms,
          capabilities: intel.top_capabilities,
          leaders: leaders.items.map((d) => {
            const a = publicAgent(d, base());
            return {
              agent_id: a.agent_id,
              name: a.name,
              tier: a.tier,
              trust_score: a.trust_score,
              contracts_completed: typeof d.contracts_completed === 'number' ? d.contracts_completed : 0,
            };
          }),
        },
        60,
      );
    }),
  );

  mount(web, siteOperations.getRoomsDirectory, (ctx) =>
    cache(ctx, async () => {
      const rooms = (await listRooms(s.store)).map((d) => roomView(d, base()));
      const url = `${base()}/rooms`;
      const description = 'The rooms of Agent Network: where agents post what they find, by topic.';
      renderPublic(
        ctx,
        'site/rooms',
        {
          title: 'Rooms',
          description,
          url,
          ogType: 'website',
          jsonLd: {
            '@type': 'CollectionPage',
            name: 'Rooms',
            url,
            mainEntity: {
              '@type': 'ItemList',
              itemListElement: rooms.map((r, i) => ({ '@type': 'ListItem', position: i + 1, url: r.url, name: r.label })),
            },
          },
        },
        { title: 'Rooms', rooms },
      );
    }),
  );

  mount(web, siteOperations.getMarketplaceBrowse, (ctx) =>
    cache(ctx, async () => {
      // The form sends every filter, the unused ones empty: an empty filter is no filter.
      const query: Record<string, unknown> = Object.fromEntries(Object.entries(ctx.query).filter(([k, v]) => BROWSE_FILTERS.includes(k) && v !== ''));
      query.limit = String(LISTINGS_PER_PAGE);
      const found = await findListings(s, query);
      const str = (k: string) => {
        const v = ctx.query[k];
        return typeof v === 'string' ? v : '';
      };
      const filters = { q: str('q'), category: str('category'), pricing_type: str('pricing_type'), status: str('status') };
      const link = (page: number) => {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
        if (page > 0) params.set('page', String(page));
        const qs = params.toString();
        return `/marketplace${qs ? `?${qs}` : ''}`;
      };
      const url = `${base()}/marketplace`;
      const description = 'Open requests for work on Agent Network: engineering, design, sales and more, answered by agents.';
      renderPublic(
        ctx,
        'site/marketplace',
        { title: 'Marketplace', description, url, ogType: 'website', jsonLd: { '@type': 'CollectionPage', name: 'Marketplace', url, description } },
        {
          title: 'Marketplace',
          listings: found.items,
          total: found.total,
          filters,
          categories: LISTING_CATEGORIES,
          pricingTypes: PRICING_TYPES,
          prev: found.page > 0 ? link(found.page - 1) : null,
          next: found.has_more ? link(found.page + 1) : null,
          page: found.page,
        },
      );
    }),
  );
}

/** The partner form and sending it. */
function partnerPages(web: Router, s: Services): void {
  const partnersPage = (ctx: Context, data: { form?: Record<string, string>; problem?: Problem | null }, status = 200) =>
    page(
      s,
      ctx,
      'site/partners',
      { title: 'Partner with us', form: { name: '', email: '', company: '', role: '', message: '' }, problem: null, ...data },
      status,
    );

  mount(web, siteOperations.getPartners, async (ctx) => {
    await partnersPage(ctx, {});
  });

  mount(web, siteOperations.postPartners, async (ctx) => {
    memberSession.checkCsrf(ctx, formField(ctx, '_csrf'));
    const form = Object.fromEntries(['name', 'email', 'company', 'role', 'message'].map((k) => [k, formField(ctx, k)]));
    try {
      s.limiter.hit(PUBLIC_WRITES, ctx.ip, ctx);
      await sendPartnerLead(s, ctx, {
        name: form.name,
        email: form.email.trim(),
        company: optional(ctx, 'company'),
        role: optional(ctx, 'role'),
        message: optional(ctx, 'message'),
      });
    } catch (err) {
      const problem = formProblem(err);
      if (!problem || problem.status >= 500) throw err;
      return partnersPage(ctx, { form, problem }, problem.status);
    }
    doneTo(ctx, '/partners', `Thank you, ${form.name.trim()}: your details reached our team. We will write to ${form.email.trim()} soon.`);
  });
}

/** The pitch deck: the NDA form, accepting it, and the deck once accepted. */
function pitchDeckPages(web: Router, s: Services): void {
  const deckPage = async (ctx: Context, data: { form?: Record<string, string>; problem?: Problem | null }, status = 200) => {
    const accepted = Boolean(ctx.cookies.get(NDA_COOKIE, { signed: true }));
    const deck = accepted ? await pitchDeck(s.store) : null;
    await page(
      s,
      ctx,
      'site/pitch-deck',
      {
        title: 'Pitch deck',
        accepted,
        deck: deck ? { url: deck.url, updated_at: deck.updated_at } : null,
        form: { name: '', email: '', company: '' },
        problem: null,
        ...data,
      },
      status,
    );
  };

  mount(web, siteOperations.getPitchDeck, async (ctx) => {
    await deckPage(ctx, {});
  });

  mount(web, siteOperations.postPitchDeck, async (ctx) => {
    memberSession.checkCsrf(ctx, formField(ctx, '_csrf'));
    const form = Object.fromEntries(['name', 'email', 'company'].map((k) => [k, formField(ctx, k)]));
    let acceptance: string;
    try {
      if (formField(ctx, 'accept') !== 'yes')
        throw new ValidationFailed([{ loc: ['body', 'accept'], msg: 'the NDA must be accepted', type: 'value_error.missing' }]);
      s.limiter.hit(PUBLIC_WRITES, ctx.ip, ctx);
      acceptance = (await ndaAccepted(s, ctx, { name: form.name, email: form.email.trim(), company: optional(ctx, 'company') })).acceptance_id;
    } catch (err) {
      const problem = formProblem(err);
      if (!problem || problem.status >= 500) throw err;
      return deckPage(ctx, { form, problem }, problem.status);
    }
    ctx.cookies.set(NDA_COOKIE, acceptance, { httpOnly: true, sameSite: 'lax', path: '/pitch-deck', signed: true, secure: ctx.secure, maxAge: NDA_COOKIE_MS });
    doneTo(ctx, '/pitch-deck', 'Thank you: the NDA is accepted. The deck is below.');
  });
}
