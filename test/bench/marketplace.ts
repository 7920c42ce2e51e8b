// Marketplace benchmarks for `npm run bench -- marketplace`: the listing search and the admins'
// dispute queue at 100,000 listings and 100,000 contracts, built through their projections (so the
// documents and indexes are the service's) and read through the service's query functions.
import type { DomainEvent } from '../../events/catalogue.ts';
import { LISTING_CATEGORIES, PRICING_TYPES } from '../../events/marketplace.ts';
import { contractsProjection } from '../../projections/marketplace/contracts.ts';
import { listingsProjection } from '../../projections/marketplace/listings.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';
import { disputeQueue, searchListings } from '../../queries/marketplace/marketplace.ts';
import { recorded, timed } from './util.ts';

const WORDS = [
  'pipeline',
  'logo',
  'audit',
  'pitch',
  'deck',
  'scraper',
  'contract',
  'review',
  'campaign',
  'dashboard',
  'model',
  'api',
  'migration',
  'copy',
  'seo',
];

/** Returns the slowest median (ms). */
export async function marketplaceQueryBenchmarks(say: (line: string) => void, size = 100_000): Promise<number> {
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  const projections: Projection[] = [listingsProjection, contractsProjection];
  for (const p of projections) for (const spec of p.collections) await store.ensureCollection(spec);
  let position = 0;
  const at = '2026-03-10T09:30:00.000Z';
  const apply = async (p: Projection, e: DomainEvent) => p.apply(recorded(e, ++position, at), ctx);
  const agent = (i: number) => `agt_${(i % 5000).toString(36).padStart(20, '0')}`;
  for (let i = 0; i < size; i++) {
    const intent = `lst_${i.toString(36).padStart(20, '0')}`;
    const w1 = WORDS[i % WORDS.length] as string;
    const w2 = WORDS[(i * 7 + 3) % WORDS.length] as string;
    await apply(listingsProjection, {
      type: 'ListingCreated',
      data: {
        intent_id: intent,
        agent_id: agent(i),
        agent_name: `Agent ${i % 5000}`,
        title: `${w1} ${w2} number ${i}`,
        description: `We need a ${w1} for our ${w2} launch, delivered with care. Listing ${i}.`,
        category: LISTING_CATEGORIES[i % LISTING_CATEGORIES.length] as 'engineering',
        price: 100 + (i % 900),
        pricing_type: PRICING_TYPES[i % PRICING_TYPES.length] as 'fixed',
        budget_min: null,
        budget_max: null,
        delivery_window: '2 weeks',
        created_at: at,
        charge: { action: 'marketplace_post', amount_mc: 500, balance_after_mc: 1000 },
      },
    });
    if (i % 10 === 0) await apply(listingsProjection, { type: 'ListingClosed', data: { intent_id: intent, agent_id: agent(i), closed_at: at } });
    const contract = `ctr_${i.toString(36).padStart(20, '0')}`;
    const ids = { contract_id: contract, requester_id: agent(i), provider_id: agent(i + 1) };
    await apply(contractsProjection, {
      type: 'ContractOpened',
      data: {
        ...ids,
        intent_id: intent,
        response_id: `rsp_${i.toString(36).padStart(20, '0')}`,
        title: 't',
        price: 1,
        pricing_type: 'fixed',
        proposed_price: null,
        listing_position: 1,
        response_position: 2,
        opened_at: at,
      },
    });
    // One contract in 20 is disputed (5,000 in the queue).
    if (i % 20 === 0)
      await apply(contractsProjection, {
        type: 'ContractTransitioned',
        data: { ...ids, action: 'dispute', from: 'accepted', to: 'disputed', actor_id: agent(i), actor_role: 'requester', note: null, rating: null, at },
      });
  }
  const base = { status: 'open' as const, skip: 0, cursor: null, limit: 20 };
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['listing list, first page (open, newest first, with total)', () => searchListings(store, base)],
    ['listing search q="pipeline" (term index, with total)', () => searchListings(store, { ...base, q: 'pipeline' })],
    ['listing search q="pipeline launch" (two terms)', () => searchListings(store, { ...base, q: 'pipeline launch' })],
    // Two words each in 2/15 of the listings, none holding both: their ranges are walked side by side, no listing fetched.
    ['listing search q="pipeline logo" (two common words, no listing has both)', () => searchListings(store, { ...base, q: 'pipeline logo' })],
    ['listing filter category=design, pricing_type=hourly', () => searchListings(store, { ...base, category: 'design', pricing_type: 'hourly' })],
    ['listing search page 10 (skip 200)', () => searchListings(store, { ...base, q: 'audit', skip: 200 })],
    ['dispute queue, first page (with total)', () => disputeQueue(store, 0, 20)],
  ];
  say(`## Marketplace queries (in-memory store, ${size.toLocaleString('en')} listings and ${size.toLocaleString('en')} contracts; median of 200 runs)`);
  say('');
  say('| query | median ms | p99 ms |');
  say('|---|---|---|');
  let slowest = 0;
  for (const [label, fn] of cases) {
    await timed(20, fn); // warm-up
    const t = await timed(200, fn);
    say(`| ${label} | ${t.median.toFixed(3)} | ${t.p99.toFixed(3)} |`);
    slowest = Math.max(slowest, t.median);
  }
  say('');
  return slowest;
}
