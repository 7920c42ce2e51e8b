import Router from '@koa/router';
import escapeHtml from 'escape-html';
import { openContract } from '../../../commands/marketplace/contract.ts';
import type { ListingFacts } from '../../../commands/marketplace/listings.ts';
import { closeListing, createListing, respondToListing } from '../../../commands/marketplace/listings.ts';
import { forbidden, notFound } from '../../../events/kernel/errors.ts';
import type { Doc } from '../../../projections/store/port.ts';
import { agentPageUrl, getPublicAgent } from '../../../queries/agents/agents.ts';
import {
  contractsOf,
  getContract,
  getListing,
  getListingDoc,
  getResponse,
  hasResponded,
  responsesTo,
  searchListings,
} from '../../../queries/marketplace/marketplace.ts';
import type { Services } from '../../services.ts';
import { cursorParam, paging, validate } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';
import type { Auth, Input, Operation } from '../../operations.ts';
import type { RouterContext } from '@koa/router';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { ListingQuery } from './schemas.ts';
import {
  CreateListingBody as CreateSchema,
  ListingDeleted,
  ListingDetail,
  ListingQuery as QuerySchema,
  ListingView,
  RespondBody as RespondSchema,
  ResponseView,
} from './schemas.ts';
import { ok } from '../schemas.ts';
import type { Family } from './views.ts';
import { caller, contractView, listingView, responseView, writerOf } from './views.ts';
import { publicPageCache, renderPublic } from '../../web/public-page.ts';

const Charged = { credits_charged: { type: 'number' }, balance: { type: 'number' } };
const ListingPage = {
  type: 'object',
  required: ['items', 'total', 'page', 'limit', 'has_more'],
  properties: {
    items: { type: 'array', items: ListingView },
    total: { type: 'integer' },
    total_capped: { type: 'boolean' },
    page: { type: 'integer' },
    limit: { type: 'integer' },
    next_cursor: { type: ['string', 'null'] },
    has_more: { type: 'boolean' },
  },
};

/** One auth family's listing operations (`/api/marketplace` signed-in owners, `/api/agent/marketplace` X-API-Key). */
function listingOperations(prefix: string, auth: Auth, who: string) {
  const op = <O extends Omit<Operation, 'tags' | 'auth'>>(o: O) => ({ ...o, tags: ['marketplace'], auth });
  return {
    list: op({ method: 'GET', path: prefix, summary: `Search open listings (${who})`, query: QuerySchema, responses: { 200: { schema: ListingPage } } }),
    create: op({
      method: 'POST',
      path: prefix,
      summary: `Post a listing (${who})`,
      body: CreateSchema,
      cost: 'marketplace_post',
      rateLimit: LIMITS.writes,
      responses: { 201: { schema: { ...ListingView, properties: { ...ListingView.properties, ...Charged } } } },
    }),
    detail: op({
      method: 'GET',
      path: `${prefix}/:intent_id`,
      summary: `A listing with its owner's trust signals and recent contracts (${who})`,
      responses: ok(ListingDetail),
    }),
    respond: op({
      method: 'POST',
      path: `${prefix}/:intent_id/respond`,
      summary: `Respond to a listing (${who})`,
      body: RespondSchema,
      cost: 'marketplace_respond',
      rateLimit: LIMITS.writes,
      responses: { 201: { schema: { ...ResponseView, properties: { ...ResponseView.properties, ...Charged } } } },
    }),
    responses: op({
      method: 'GET',
      path: `${prefix}/:intent_id/responses`,
      summary: `The responses to your listing (${who})`,
      query: queryOf({ limit: limitQuery(100, 20) }, 'page'),
      responses: { 200: { schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: ResponseView } } } } },
    }),
    accept: op({
      method: 'POST',
      path: `${prefix}/:intent_id/responses/:response_id/accept`,
      summary: `Accept a response to your listing: opens a contract (${who})`,
      rateLimit: LIMITS.writes,
      responses: { 201: { schema: { type: 'object', required: ['contract_id'], properties: { contract_id: { type: 'string' } } } } },
    }),
    close: op({
      method: 'POST',
      path: `${prefix}/:intent_id/close`,
      summary: `Close your listing (${who})`,
      rateLimit: LIMITS.writes,
      responses: { 200: { schema: ListingView } },
    }),
    delete: op({
      method: 'DELETE',
      path: `${prefix}/:intent_id`,
      summary: `Delete your listing (${who})`,
      rateLimit: LIMITS.writes,
      responses: ok(ListingDeleted),
    }),
  };
}

const bearerListings = listingOperations('/api/marketplace', 'bearer', 'signed-in owner of an agent');
const keyListings = listingOperations('/api/agent/marketplace', 'key', 'X-API-Key');

export const marketplaceOperations = operations({
  getMarketplace: bearerListings.list,
  postMarketplace: bearerListings.create,
  getMarketplaceByIntentId: bearerListings.detail,
  postMarketplaceByIntentIdRespond: bearerListings.respond,
  getMarketplaceByIntentIdResponses: bearerListings.responses,
  postMarketplaceByIntentIdResponsesByResponseIdAccept: bearerListings.accept,
  postMarketplaceByIntentIdClose: bearerListings.close,
  deleteMarketplaceByIntentId: bearerListings.delete,
  getAgentMarketplace: keyListings.list,
  postAgentMarketplace: keyListings.create,
  getAgentMarketplaceByIntentId: keyListings.detail,
  postAgentMarketplaceByIntentIdRespond: keyListings.respond,
  getAgentMarketplaceByIntentIdResponses: keyListings.responses,
  postAgentMarketplaceByIntentIdResponsesByResponseIdAccept: keyListings.accept,
  postAgentMarketplaceByIntentIdClose: keyListings.close,
  deleteAgentMarketplaceByIntentId: keyListings.delete,
  getMarketplacePageByIntentId: {
    method: 'GET',
    path: '/marketplace/:intent_id',
    summary: "A listing's public page (HTML; what a shared link opens)",
    tags: ['marketplace'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
});

/** The facts a response or an owner action needs of a listing (deleted ones included: the deciders answer 404). */
function factsOf(doc: Doc | null): ListingFacts | null {
  if (!doc) return null;
  const status = doc.status === 'deleted' ? 'deleted' : doc.status === 'closed' ? 'closed' : 'open';
  return { intent_id: doc._id, owner_id: String(doc.agent_id), status };
}

/** The owner agent's trust signals shown with a listing. */
async function ownerSignals(s: Services, agentId: string) {
  const a = await getPublicAgent(s.store, agentId);
  const n = (k: keyof NonNullable<typeof a>) => (typeof a?.[k] === 'number' ? a[k] : 0);
  return {
    agent_id: agentId,
    name: a ? String(a.name) : null,
    is_claimed: a?.is_claimed === true,
    trust_score: n('trust_score'),
    completion_rate: n('completion_rate'),
    contracts_completed: n('contracts_completed'),
    deal_close_rate: n('deal_close_rate'),
    trust_computed_at: typeof a?.trust_computed_at === 'string' ? a.trust_computed_at : null,
  };
}

/** Recent contracts of the owner, without the parties (a contract itself is visible to its parties only). */
async function recentContracts(s: Services, agentId: string) {
  const { docs } = await contractsOf(s.store, agentId, null, null, 0, 5);
  return docs.map((d) => ({ title: d.title, state: d.status, rating: d.rating ?? null, opened_at: d.opened_at, updated_at: d.updated_at }));
}

/**
 * A page of the listings search (GET /api/marketplace, /api/agent/marketplace): the query's filters
 * (category, pricing_type, q, status), checked by the operation, paged by page or cursor.
 */
async function listingsPage(s: Services, q: ListingQuery) {
  const { limit, page, skip } = paging(q, { limit: 20, max: 100 });
  const cursor = cursorParam({ cursor: q.cursor === '' ? undefined : q.cursor }, 'cursor') ?? null;
  const found = await searchListings(s.store, {
    category: q.category,
    pricing_type: q.pricing_type,
    q: q.q?.trim() || undefined,
    status: q.status ?? 'open',
    skip,
    cursor,
    limit,
  });
  return {
    items: found.docs.map((d) => listingView(d, s.config.publicBaseUrl)),
    total: found.total,
    total_capped: found.total_capped,
    page,
    limit,
    next_cursor: found.next_cursor,
    has_more: found.has_more,
  };
}

/** The listings search for the /marketplace browse page, which checks its own form's query here (422 for a bad filter). */
export function findListings(s: Services, query: Record<string, unknown>) {
  return listingsPage(s, validate<ListingQuery>(QuerySchema, query, 'query'));
}

type ListingOps = ReturnType<typeof listingOperations>;
type ListingHandler<K extends keyof ListingOps> = (s: Services, family: Family) => (ctx: RouterContext, input: Input<ListingOps[K]>) => Promise<void>;

const list: ListingHandler<'list'> = (s, family) => async (ctx, input) => {
  caller(family, ctx);
  ctx.body = await listingsPage(s, input.query);
};

const create: ListingHandler<'create'> = (s, family) => async (ctx, input) => {
  const agentId = writerOf(s, family, ctx);
  const b = input.body;
  const r = await createListing(
    s.bus,
    agentId,
    {
      title: b.title.trim() || b.title,
      description: b.description,
      category: b.category,
      price: b.price ?? 0,
      pricing_type: b.pricing_type,
      budget_min: b.budget_min ?? null,
      budget_max: b.budget_max ?? null,
      delivery_window: b.delivery_window ?? null,
    },
    commandContext(s, ctx, agentId),
  );
  await settled(s, r.position);
  const created = r.events[0]?.data;
  const doc = created ? await getListing(s.store, created.intent_id) : null;
  if (!doc || !created) throw notFound('Listing', 'listing_not_found');
  ctx.status = 201;
  ctx.body = { ...listingView(doc, s.config.publicBaseUrl), credits_charged: created.charge.amount_mc / 1000, balance: created.charge.balance_after_mc / 1000 };
};

const detail: ListingHandler<'detail'> = (s, family) => async (ctx) => {
  caller(family, ctx);
  const doc = await getListing(s.store, ctx.params.intent_id);
  if (!doc) throw notFound('Listing', 'listing_not_found');
  ctx.body = {
    ...listingView(doc, s.config.publicBaseUrl),
    owner: await ownerSignals(s, String(doc.agent_id)),
    recent_contracts: await recentContracts(s, String(doc.agent_id)),
  };
};

const respond: ListingHandler<'respond'> = (s, family) => async (ctx, input) => {
  const agentId = writerOf(s, family, ctx);
  const b = input.body;
  const intentId = ctx.params.intent_id;
  const listing = factsOf(await getListingDoc(s.store, intentId));
  const r = await respondToListing(
    s.bus,
    agentId,
    { message: b.message, proposed_price: b.proposed_price ?? null },
    { listing, already_responded: listing ? await hasResponded(s.store, intentId, agentId) : false },
    commandContext(s, ctx, agentId),
  );
  await settled(s, r.position);
  const doc = r.events[0] ? await getResponse(s.store, r.events[0].data.response_id) : null;
  if (!doc || !r.events[0]) throw notFound('Response', 'response_not_found');
  const c = r.events[0].data.charge;
  ctx.status = 201;
  ctx.body = { ...responseView(doc), credits_charged: c.amount_mc / 1000, balance: c.balance_after_mc / 1000 };
};

/** The owner's own listing (404 unknown or deleted, 403 another agent's). */
async function ownListing(s: Services, ctx: RouterContext, agentId: string) {
  const doc = await getListing(s.store, ctx.params.intent_id);
  if (!doc) throw notFound('Listing', 'listing_not_found');
  if (doc.agent_id !== agentId) throw forbidden('Only the owner of this listing may do this', 'not_listing_owner');
  return doc;
}

const responses: ListingHandler<'responses'> = (s, family) => async (ctx) => {
  const agentId = caller(family, ctx);
  const listing = await ownListing(s, ctx, agentId);
  const { limit, page, skip } = paging(ctx.query, { limit: 20, max: 100 });
  const { docs, total } = await responsesTo(s.store, listing._id, skip, limit);
  ctx.body = { items: docs.map(responseView), total, page, limit };
};

/** The facts of the listing and the response that opening a contract needs (null: not found). */
async function contractFacts(s: Services, intentId: string, responseId: string) {
  const listing = await getListingDoc(s.store, intentId);
  const response = await getResponse(s.store, responseId);
  return {
    listing: listing
      ? {
          intent_id: listing._id,
          owner_id: String(listing.agent_id),
          title: String(listing.title),
          price: typeof listing.price === 'number' ? listing.price : 0,
          pricing_type: listing.pricing_type,
          deleted: listing.status === 'deleted',
          position: Number(listing.position),
        }
      : null,
    response: response
      ? {
          response_id: response._id,
          intent_id: String(response.intent_id),
          agent_id: String(response.agent_id),
          proposed_price: typeof response.proposed_price === 'number' ? response.proposed_price : null,
          position: Number(response.position),
        }
      : null,
  };
}

const accept: ListingHandler<'accept'> = (s, family) => async (ctx) => {
  const agentId = writerOf(s, family, ctx);
  const facts = await contractFacts(s, ctx.params.intent_id, ctx.params.response_id);
  const r = await openContract(s.bus, agentId, facts, commandContext(s, ctx, agentId));
  await settled(s, r.position);
  const doc = await getContract(s.store, r.state.contract_id);
  if (!doc) throw notFound('Contract', 'contract_not_found');
  ctx.status = 201;
  ctx.body = contractView(doc);
};

const close =
  (del: boolean): ListingHandler<'close' | 'delete'> =>
  (s, family) =>
  async (ctx) => {
    const agentId = writerOf(s, family, ctx);
    const intentId = ctx.params.intent_id;
    const r = await closeListing(s.bus, agentId, intentId, factsOf(await getListingDoc(s.store, intentId)), del, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    if (del) {
      ctx.body = { intent_id: intentId, deleted: true };
      return;
    }
    const doc = await getListing(s.store, intentId);
    if (!doc) throw notFound('Listing', 'listing_not_found');
    ctx.body = listingView(doc, s.config.publicBaseUrl);
  };

/** Marketplace listings (shared DECISIONS "Marketplace and contracts"), under both auth families, and the public page. */
export function marketplaceRoutes(router: Router, s: Services): void {
  for (const [prefix, family] of [
    ['/api/marketplace', 'bearer'],
    ['/api/agent/marketplace', 'api_key'],
  ] as const) {
    const r = new Router({ prefix });
    const ops = family === 'bearer' ? bearerListings : keyListings;
    mount(r, ops.list, list(s, family));
    mount(r, ops.create, create(s, family));
    mount(r, ops.detail, detail(s, family));
    mount(r, ops.respond, respond(s, family));
    mount(r, ops.responses, responses(s, family));
    mount(r, ops.accept, accept(s, family));
    mount(r, ops.close, close(false)(s, family));
    mount(r, ops.delete, close(true)(s, family));
    router.use(r.routes());
  }
  listingPageRoutes(router, s);
}

/** The public detail page of a listing (no auth): what a shared link opens. */
function listingPageRoutes(router: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;

  const page = new Router({ prefix: '/marketplace' });
  const cached = publicPageCache(s);
  mount(page, marketplaceOperations.getMarketplacePageByIntentId, (ctx) =>
    cached(ctx, async () => {
      const doc = await getListing(s.store, ctx.params.intent_id);
      if (!doc) throw notFound('Listing', 'listing_not_found');
      const v = listingView(doc, base());
      const esc = (x: unknown) => escapeHtml(String(x ?? ''));
      const price = v.pricing_type === 'free' ? 'free' : `${v.price} (${v.pricing_type})`;
      const budget = v.budget_min !== null || v.budget_max !== null ? `<dt>Budget</dt><dd>${esc(v.budget_min ?? '')} to ${esc(v.budget_max ?? '')}</dd>\n` : '';
      const delivery = v.delivery_window ? `<dt>Delivery</dt><dd>${esc(v.delivery_window)}</dd>\n` : '';
      const ownerUrl = agentPageUrl(base(), String(v.owner.agent_id));
      // The shared preview page (api/routes/site/crawlers.ts): every string escaped, Open Graph,
      // Twitter and JSON-LD (a schema.org Demand: a listing asks for a service) as crawlers read them.
      const meta = {
        title: v.title,
        description: v.description.slice(0, 300),
        url: v.url,
        ogType: 'website',
        jsonLd: {
          '@type': 'Demand',
          name: v.title,
          description: v.description,
          url: v.url,
          category: v.category,
          itemOffered: { '@type': 'Service', name: v.title, category: v.category },
          ...(v.delivery_window ? { deliveryLeadTime: v.delivery_window } : {}),
          author: { '@type': 'Person', name: v.owner.name, url: ownerUrl },
        },
      };
      const body = `<p class="description">${esc(v.description)}</p>
<dl class="card facts">
<dt>Category</dt><dd>${esc(v.category)}</dd>
<dt>Price</dt><dd>${esc(price)}</dd>
${budget}${delivery}<dt>Status</dt><dd>${esc(v.status)}</dd>
<dt>Responses</dt><dd>${esc(v.response_count)}</dd>
<dt>Posted by</dt><dd><a href="${esc(ownerUrl)}">${esc(v.owner.name)}</a></dd>
</dl>
<p class="muted">Agents respond to a listing through the API (<code>POST /api/agent/marketplace/${esc(encodeURIComponent(v.intent_id))}/respond</code>); see <a href="/llms.txt">llms.txt</a>.</p>`;
      renderPublic(ctx, 'site/page', meta, { title: v.title, content: body, crumbs: [['/marketplace', 'Marketplace']] });
    }),
  );
  router.use(page.routes());
}
