import { searchTerms } from '../../events/marketplace.ts';
import type { Collection } from '../store/port.ts';
import { defineProjection, type DataOf } from '../types.ts';

/** A listing; `_id` is its intent id. */
export type ListingDoc = Omit<DataOf<'ListingCreated'>, 'charge'> & {
  _id: string;
  _pos: number;
  status: 'open' | 'closed' | 'deleted';
  response_count: number;
  closed_at: string | null;
  deleted_at?: string;
  seq: number;
  /** The listing's log position (contracts record it). */
  position: number;
  /** Search terms of the title, description and category. */
  terms: string[];
  /** `<status>:<term>` per term while listed (empty once deleted). */
  search_keys: string[];
};

/** Listings per status, category, pricing and term (the list totals); `_id` is a countKeys key. */
export type ListingCountDoc = {
  _id: string;
  _pos: number;
  n: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    listings: ListingDoc;
    listing_counts: ListingCountDoc;
  }
}

/** The search keys of a listing: its terms under its status, so a search of open listings is one index range. */
export const searchKeys = (status: string, terms: readonly string[]) => terms.map((t) => `${status}:${t}`);

/**
 * The counter documents a listing counts in (`listing_counts`): its status, with its category, its
 * pricing type, both, and each of its terms. The list's `total` reads one of them instead of
 * counting documents.
 */
export function countKeys(status: string, category: string, pricing: string, terms: readonly string[]): string[] {
  return [`s:${status}`, `c:${status}:${category}`, `p:${status}:${pricing}`, `cp:${status}:${category}:${pricing}`, ...terms.map((t) => `t:${status}:${t}`)];
}

async function count(
  counts: Collection<ListingCountDoc>,
  d: Pick<ListingDoc, 'terms' | 'category' | 'pricing_type'>,
  status: string,
  by: number,
  position: number,
): Promise<void> {
  const terms = d.terms ?? [];
  for (const key of countKeys(status, d.category, d.pricing_type, terms)) await counts.applyAt(key, position, { $inc: { n: by } });
}

/**
 * Marketplace listings, one document per listing (`_id` the intent id): what the list, the search
 * (`search_keys`, multikey) and the detail read; `status` open, closed or deleted (a deleted listing
 * stays for its contracts' evidence, out of every read). `listing_counts` keeps the list totals.
 */
export const listingsProjection = defineProjection({
  name: 'listings',
  collections: [
    {
      name: 'listings',
      indexes: [
        { name: 'by_status', keys: { status: 1, seq: -1 } },
        { name: 'by_category', keys: { status: 1, category: 1, seq: -1 } },
        { name: 'by_pricing', keys: { status: 1, pricing_type: 1, seq: -1 } },
        { name: 'by_category_pricing', keys: { status: 1, category: 1, pricing_type: 1, seq: -1 } },
        { name: 'by_term', keys: { search_keys: 1, seq: -1 } },
        { name: 'by_owner', keys: { agent_id: 1, seq: -1 } },
      ],
    },
    { name: 'listing_counts', indexes: [] },
  ],
  handles: ['ListingCreated', 'ListingResponded', 'ListingClosed', 'ListingDeleted'],
  async apply(event, ctx) {
    const listings = ctx.collection('listings');
    const counts = ctx.collection('listing_counts');
    switch (event.type) {
      case 'ListingCreated': {
        const { charge: _charge, ...d } = event.data;
        const terms = searchTerms(`${d.title} ${d.description} ${d.category}`);
        const doc = Object.assign({}, d, { status: 'open' as const, response_count: 0, closed_at: null, seq: event.position, position: event.position, terms });
        if (await listings.applyAt(d.intent_id, event.position, { $set: Object.assign({}, doc, { search_keys: searchKeys('open', terms) }) }))
          await count(counts, doc, 'open', 1, event.position);
        return;
      }
      case 'ListingResponded':
        await listings.applyAt(event.data.intent_id, event.position, { $inc: { response_count: 1 } });
        return;
      case 'ListingClosed':
      case 'ListingDeleted': {
        const d = event.data;
        const before = await listings.findOne({ _id: d.intent_id });
        if (!before || (typeof before._pos === 'number' && before._pos >= event.position)) return;
        const status = event.type === 'ListingClosed' ? ('closed' as const) : ('deleted' as const);
        const set =
          event.type === 'ListingClosed'
            ? { status, closed_at: event.data.closed_at, search_keys: searchKeys('closed', before.terms ?? []) }
            : // Out of the term index and the counts as well: a deleted listing is never listed again.
              { status, deleted_at: event.data.deleted_at, search_keys: [] };
        await listings.applyAt(d.intent_id, event.position, { $set: set });
        if (before.status !== 'deleted') await count(counts, before, before.status, -1, event.position);
        if (status === 'closed') await count(counts, before, 'closed', 1, event.position);
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
