import type { ListingCategory, PricingType } from '../../events/marketplace.ts';
import { searchTerms } from '../../events/marketplace.ts';
import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { cursorOf } from '../cursor.ts';

/** A search no counter answers (several words, or a word and a filter) counts at most this many matches; past it, `total_capped` says so. */
export const TOTAL_CAP = 1000;

export interface ListingSearch {
  category?: ListingCategory;
  pricing_type?: PricingType;
  q?: string;
  status: 'open' | 'closed';
  /** Newest first: either a page (`skip`) or the cursor of the last item seen. */
  skip: number;
  cursor: Cursor | null;
  limit: number;
}

/** A `listing_counts` counter (0 when it was never counted). */
async function counterValue(store: ReadStore, id: string): Promise<number> {
  const d = await store.collection('listing_counts').findOne({ _id: id });
  return typeof d?.n === 'number' ? d.n : 0;
}

/**
 * The listing list and search, newest first. With `q`, the term index: one word's range, or for
 * several words the intersection of their ranges (`search_keys: { $all: [...] }`; the memory
 * store walks the ranges side by side and fetches only the listings in every one, MongoDB plans
 * `$all` on the multikey index itself), category and pricing tested on those listings; a word no
 * listing holds (its counter) answers at once. Without `q`, the status index with the category
 * and pricing filters. `total` is read from the `listing_counts` counters when one counts exactly this filter
 * (no `q`, or one word alone); a search combining several words or a word and a filter counts up
 * to TOTAL_CAP matches.
 */
export async function searchListings(store: ReadStore, s: ListingSearch) {
  const listings = store.collection('listings');
  const words = s.q ? searchTerms(s.q, 8) : [];
  const filter: Filter = {};
  let hint: string;
  let total: number | null = null;
  if (words.length) {
    const counts = await Promise.all(words.map((w) => counterValue(store, `t:${s.status}:${w}`)));
    // A word no listing holds: nothing matches, and nothing needs scanning.
    if (Math.min(...counts) === 0) return { docs: [], total: 0, total_capped: false, has_more: false, next_cursor: null };
    // Several words: their ranges of the term index intersected (the store walks them side by
    // side and reads only the listings in each); one word: its range.
    filter.search_keys = words.length === 1 ? `${s.status}:${words[0]}` : { $all: words.map((w) => `${s.status}:${w}`) };
    hint = 'by_term';
    if (words.length === 1 && !s.category && !s.pricing_type) total = counts[0];
  } else {
    filter.status = s.status;
    hint = s.category && s.pricing_type ? 'by_category_pricing' : s.category ? 'by_category' : s.pricing_type ? 'by_pricing' : 'by_status';
  }
  if (s.category) filter.category = s.category;
  if (s.pricing_type) filter.pricing_type = s.pricing_type;
  const counter = words.length
    ? null
    : s.category && s.pricing_type
      ? `cp:${s.status}:${s.category}:${s.pricing_type}`
      : s.category
        ? `c:${s.status}:${s.category}`
        : s.pricing_type
          ? `p:${s.status}:${s.pricing_type}`
          : `s:${s.status}`;
  const page: Filter = s.cursor ? { ...filter, seq: { $lt: s.cursor.position } } : filter;
  const skip = s.cursor ? 0 : s.skip;
  const pageOf = () => listings.find(page, { sort: { seq: -1 }, skip, limit: s.limit + 1, hint });
  let docs: Array<ReadModel<'listings'>>;
  let counted: number;
  if (total !== null) {
    [docs, counted] = await Promise.all([pageOf(), total]);
  } else if (counter !== null) {
    [docs, counted] = await Promise.all([pageOf(), counterValue(store, counter)]);
  } else {
    // A capped count: a first page that is not full already holds every match (after `skip`), so
    // its length gives the total without a second pass (for a search few listings match, the
    // commonest one that is not full, this halves the work).
    docs = await pageOf();
    counted =
      !s.cursor && docs.length <= s.limit && (docs.length > 0 || skip === 0)
        ? skip + docs.length
        : await listings.count(filter, { hint, limit: TOTAL_CAP + 1 });
  }
  const has_more = docs.length > s.limit;
  if (has_more) docs.length = s.limit;
  const last = docs[docs.length - 1];
  const capped = counted > TOTAL_CAP;
  return { docs, total: capped ? TOTAL_CAP : counted, total_capped: capped, has_more, next_cursor: has_more && last ? cursorOf(last) : null };
}

/** A listing that was not deleted, or null. */
export async function getListing(store: ReadStore, intentId: string) {
  const doc = await store.collection('listings').findOne({ _id: intentId });
  return doc && doc.status !== 'deleted' ? doc : null;
}

/** A listing as stored (deleted ones too): what the commands' facts and the evidence need. */
export async function getListingDoc(store: ReadStore, intentId: string) {
  return store.collection('listings').findOne({ _id: intentId });
}

export async function responsesTo(store: ReadStore, intentId: string, skip: number, limit: number) {
  const responses = store.collection('listing_responses');
  const [docs, total] = await Promise.all([
    responses.find({ intent_id: intentId }, { sort: { seq: -1 }, skip, limit, hint: 'by_listing' }),
    responses.count({ intent_id: intentId }, { hint: 'by_listing' }),
  ]);
  return { docs, total };
}

export async function getResponse(store: ReadStore, responseId: string) {
  return store.collection('listing_responses').findOne({ _id: responseId });
}

export async function hasResponded(store: ReadStore, intentId: string, agentId: string): Promise<boolean> {
  return (await store.collection('listing_responses').count({ intent_id: intentId, agent_id: agentId }, { hint: 'by_listing_agent' })) > 0;
}

export async function getContract(store: ReadStore, contractId: string) {
  return store.collection('contracts').findOne({ _id: contractId });
}

/** The fields a contract's API view shows (api/routes/marketplace/views.ts contractView). */
const CONTRACT_VIEW_FIELDS = {
  intent_id: 1,
  response_id: 1,
  title: 1,
  status: 1,
  requester_id: 1,
  provider_id: 1,
  price: 1,
  pricing_type: 1,
  proposed_price: 1,
  rating: 1,
  opened_at: 1,
  updated_at: 1,
  disputed_at: 1,
  outcome: 1,
} as const;

/** A contract with only the fields its view shows (what a transition answers). */
export async function contractForView(store: ReadStore, contractId: string) {
  return store.collection('contracts').findOne({ _id: contractId }, { projection: CONTRACT_VIEW_FIELDS });
}

/** An agent's contracts, newest first: as requester, as provider, or both. */
export async function contractsOf(
  store: ReadStore,
  agentId: string,
  role: 'requester' | 'provider' | null,
  status: string | null,
  skip: number,
  limit: number,
) {
  const contracts = store.collection('contracts');
  const extra: Filter = status ? { status } : {};
  const side = async (field: 'requester_id' | 'provider_id') =>
    contracts.find({ [field]: agentId, ...extra }, { sort: { seq: -1 }, limit: skip + limit, hint: field === 'requester_id' ? 'by_requester' : 'by_provider' });
  const docs =
    role === 'requester'
      ? await side('requester_id')
      : role === 'provider'
        ? await side('provider_id')
        : [...(await side('requester_id')), ...(await side('provider_id'))];
  docs.sort((a, b) => b.seq - a.seq);
  const count = async (field: 'requester_id' | 'provider_id') => contracts.count({ [field]: agentId, ...extra });
  const total =
    role === 'requester'
      ? await count('requester_id')
      : role === 'provider'
        ? await count('provider_id')
        : (await count('requester_id')) + (await count('provider_id'));
  return { docs: docs.slice(skip, skip + limit), total };
}

/** The admins' dispute queue: disputed contracts, longest waiting first. */
export async function disputeQueue(store: ReadStore, skip: number, limit: number) {
  const contracts = store.collection('contracts');
  const [docs, total] = await Promise.all([
    contracts.find({ status: 'disputed' }, { sort: { disputed_at: 1 }, skip, limit, hint: 'dispute_queue' }),
    contracts.count({ status: 'disputed' }, { hint: 'dispute_queue' }),
  ]);
  return { docs, total };
}

/** A page of the contracts changed at or after `since` (an ISO time), oldest first: the contract-mail reactor's resume at start. */
export async function recentlyUpdatedContracts(store: ReadStore, since: string, skip: number, limit: number) {
  return store.collection('contracts').find({ updated_at: { $gte: since } }, { sort: { updated_at: 1, _id: 1 }, skip, limit, hint: 'by_updated' });
}

/** Every agent's record as provider (the trust job's input). */
export async function providerRecords(store: ReadStore) {
  return store.collection('contract_stats').find({}, { sort: { _id: 1 } });
}

/** The latest completed nightly run, or null. */
export async function latestNightlyRun(store: ReadStore) {
  const [run] = await store.collection('trust_runs').find({ night: { $ne: null } }, { sort: { night: -1 }, limit: 1, hint: 'by_night' });
  return run ?? null;
}

const count = (v: unknown) => (typeof v === 'number' ? v : 0);

/**
 * What a trust recomputation decides on: every agent with a record as provider or responder, and
 * the scores its profile shows now (null when never computed). The shape of commands/marketplace/trust.ts.
 */
export async function trustInputs(store: ReadStore) {
  const agents = store.collection('agents');
  const inputs = [];
  for (const d of await providerRecords(store)) {
    const profile = await agents.findOne({ _id: d._id });
    if (!profile) continue;
    const current =
      typeof profile.trust_computed_at === 'string'
        ? {
            trust_score: count(profile.trust_score),
            completion_rate: count(profile.completion_rate),
            average_rating: count(profile.average_rating),
            contracts_rated: count(profile.contracts_rated),
            contracts_completed: count(profile.contracts_completed),
            contracts_ended: count(profile.contracts_ended),
            marketplace_responses: count(profile.marketplace_responses),
            deal_close_rate: count(profile.deal_close_rate),
          }
        : null;
    inputs.push({
      record: {
        agent_id: d._id,
        completed: count(d.completed),
        ended: count(d.ended),
        rating_sum: count(d.rating_sum),
        rating_count: count(d.rating_count),
        responses: count(d.responses),
      },
      current,
    });
  }
  return inputs;
}

/**
 * Open listings for an intent radar (`GET /api/agent/intent-radar`): those whose category is one of
 * `capabilities`, or whose title, description or category hold every word of one (the term index:
 * `lead-gen` is the words lead and gen), the agent's own left out; newest first, at most `limit`.
 * Each capability is one index range (at most `limit` + own listings read per capability).
 */
export async function listingsMatching(
  store: ReadStore,
  capabilities: string[],
  exclude: string,
  limit: number,
): Promise<Array<{ doc: ReadModel<'listings'>; matched: string }>> {
  const listings = store.collection('listings');
  const found = new Map<string, { doc: ReadModel<'listings'>; matched: string }>();
  for (const cap of capabilities.slice(0, 20)) {
    const words = searchTerms(cap.replace(/-/g, ' '), 8);
    if (words.length === 0) continue;
    const filter: Filter = words.length === 1 ? { search_keys: `open:${words[0]}` } : { search_keys: { $all: words.map((w) => `open:${w}`) } };
    const docs = await listings.find(filter, { sort: { seq: -1 }, limit: limit * 2, hint: 'by_term' });
    for (const d of docs) if (d.agent_id !== exclude && !found.has(d._id)) found.set(d._id, { doc: d, matched: cap });
  }
  return [...found.values()].sort((a, b) => Number(b.doc.seq) - Number(a.doc.seq)).slice(0, limit);
}
