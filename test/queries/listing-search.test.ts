import { expect } from 'chai';
import { listingsProjection } from '../../projections/marketplace/listings.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Collection, Filter, FindOptions } from '../../projections/store/port.ts';
import { decodeCursor } from '../../queries/cursor.ts';
import { searchListings, TOTAL_CAP } from '../../queries/marketplace/marketplace.ts';
import { listingCreated } from '../fixtures/events.ts';
import { applyAll, recorded } from '../helpers/projection-spec.ts';

/**
 * The listing search reads the term index: one word's range, or for several words the
 * intersection of their ranges (`search_keys: { $all }`), so only listings holding every word are
 * fetched, even when each word alone is common; its capped total stops counting at TOTAL_CAP + 1.
 */
describe('queries: listing search', () => {
  const id = (i: number) => `lst_${String(i).padStart(20, '0')}`;
  let store: MemoryReadStore;
  /** The documents each find and count of `listings` examined (explain of the same filter and options). */
  let examined: number[];

  before(async () => {
    store = new MemoryReadStore();
    const events = Array.from({ length: 1_500 }, (_, i) =>
      listingCreated({
        intent_id: id(i),
        title: i % 500 === 7 ? `Common rare task ${i}` : `Common task ${i}`,
        description: i % 2 === 0 ? 'plain alpha words' : 'plain beta words',
      }),
    );
    await applyAll(store, [listingsProjection], recorded(events));
    const real = store.collection.bind(store);
    (store as { collection: (name: string) => Collection }).collection = (name: string): Collection => {
      const c = real(name);
      if (name !== 'listings') return c;
      const spy = Object.create(c) as Collection;
      spy.find = async (filter: Filter, options?: FindOptions) => {
        examined.push((await c.explain(filter, options)).examined);
        return c.find(filter, options);
      };
      spy.count = async (filter?: Filter, options?: { hint?: string; limit?: number }) => {
        examined.push((await c.explain(filter ?? {}, { hint: options?.hint, limit: options?.limit })).examined);
        return c.count(filter, options);
      };
      return spy;
    };
  });
  beforeEach(() => (examined = []));

  const base = { status: 'open' as const, skip: 0, cursor: null, limit: 20 };

  it('finds the listings holding every word, in either order, fetching only those', async () => {
    for (const q of ['common rare', 'rare common']) {
      examined = [];
      const r = await searchListings(store, { ...base, q });
      expect(r.docs.map((d) => d._id)).to.deep.equal([id(1007), id(507), id(7)]);
      expect(r).to.include({ total: 3, total_capped: false, has_more: false });
      expect(Math.max(...examined), q).to.be.at.most(3);
    }
  });

  it('fetches no listing for two common words no listing holds both of (the index ranges intersected)', async () => {
    for (const q of ['alpha beta', 'beta alpha', 'common alpha beta']) {
      examined = [];
      const r = await searchListings(store, { ...base, q });
      expect(r, q).to.deep.include({ docs: [], total: 0, total_capped: false, has_more: false, next_cursor: null });
      expect(examined, q).to.have.length.above(0);
      expect(
        examined.every((n) => n === 0),
        q,
      ).to.equal(true);
    }
    const plan = await store
      .collection('listings')
      .explain({ search_keys: { $all: ['open:alpha', 'open:beta'] } }, { sort: { seq: -1 }, limit: 21, hint: 'by_term' });
    expect(plan).to.deep.include({ index: 'by_term', examined: 0, stage: 'AND_SORTED' });
    // Each word is in 750 listings: the walk reads both ranges' entries, and fetches none of them.
    expect(plan.keysExamined).to.be.at.most(1_500);
  });

  it('finds the listings holding two common words, newest first, with a cursor, fetching only the page', async () => {
    const r = await searchListings(store, { ...base, q: 'alpha task', limit: 5 });
    expect(r.docs.map((d) => d._id)).to.deep.equal([id(1498), id(1496), id(1494), id(1492), id(1490)]);
    expect(r).to.include({ total: 750, total_capped: false, has_more: true });
    expect(Math.max(...examined)).to.be.at.most(750);
    examined = [];
    const next = await searchListings(store, { ...base, q: 'alpha task', limit: 5, cursor: decodeCursor(r.next_cursor as string) });
    expect(next.docs.map((d) => d._id)).to.deep.equal([id(1488), id(1486), id(1484), id(1482), id(1480)]);
    expect(examined[0]).to.equal(6);
  });

  it('answers a word no listing holds at once: nothing found, nothing scanned', async () => {
    const r = await searchListings(store, { ...base, q: 'common unheardof' });
    expect(r).to.deep.include({ docs: [], total: 0, total_capped: false, has_more: false, next_cursor: null });
    expect(examined).to.deep.equal([]);
  });

  it('caps the count of a many-word search at TOTAL_CAP and says so', async () => {
    const r = await searchListings(store, { ...base, q: 'common task' });
    expect(r.docs).to.have.length(20);
    expect(r).to.include({ total: TOTAL_CAP, total_capped: true, has_more: true });
    expect(Math.max(...examined)).to.be.at.most(TOTAL_CAP + 1);
  });
});
