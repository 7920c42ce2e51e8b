import { expect } from 'chai';
import { listingsProjection } from '../../projections/marketplace/listings.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Collection, Filter, FindOptions } from '../../projections/store/port.ts';
import { searchListings, TOTAL_CAP } from '../../queries/marketplace/marketplace.ts';
import { listingCreated } from '../fixtures/events.ts';
import { applyAll, recorded } from '../helpers/projection-spec.ts';

/**
 * The listing search reads one index range: the rarest word's listings (the term counters say
 * which), so a search of a common and a rare word scans only the rare word's entries, and its
 * capped total stops counting at TOTAL_CAP + 1.
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
        description: 'plain words',
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

  it('finds the listings holding every word, in either order, scanning only the rarest word’s entries', async () => {
    for (const q of ['common rare', 'rare common']) {
      examined = [];
      const r = await searchListings(store, { ...base, q });
      expect(r.docs.map((d) => d._id)).to.deep.equal([id(1007), id(507), id(7)]);
      expect(r).to.include({ total: 3, total_capped: false, has_more: false });
      expect(Math.max(...examined), q).to.be.at.most(3);
    }
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
