// Social benchmarks for `npm run bench` (section "social"): the leaderboard and the member
// directory at 100,000 agents and 100,000 members, built through their projections (so the
// documents and indexes are the service's), queried through the service's query functions.
import type { DomainEvent } from '../../events/catalogue.ts';
import { agentsProjection } from '../../projections/agents/agents.ts';
import { membersProjection } from '../../projections/social/members.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';
import { decodeCursor } from '../../queries/cursor.ts';
import { leaderboard } from '../../queries/social/discovery.ts';
import { matchSearch, searchMembers } from '../../queries/social/members.ts';
import { benchAgentRegistered, recorded, timed } from './util.ts';

const INDUSTRIES = ['technology', 'finance', 'healthcare', 'education', 'media', 'retail', 'energy', 'legal'] as const;
const WORDS = ['founder', 'investor', 'engineer', 'operator', 'designer', 'advisor', 'marketer', 'researcher', 'builder', 'seller'];
const CAPS = ['lead-gen', 'b2b-sales', 'founder-matching', 'investor-connect', 'talent-matching', 'intro-drafting'];

/** Returns the slowest median (ms). */
export async function socialQueryBenchmarks(say: (line: string) => void, size = 100_000): Promise<number> {
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  const projections: Projection[] = [agentsProjection, membersProjection];
  for (const p of projections) for (const spec of p.collections) await store.ensureCollection(spec);
  let position = 0;
  const at = '2026-03-10T09:30:00.000Z';
  const apply = async (p: Projection, e: DomainEvent) => p.apply(recorded(e, ++position, at), ctx);
  for (let i = 0; i < size; i++) {
    await apply(agentsProjection, benchAgentRegistered(i, CAPS[i % CAPS.length] as string, at));
  }
  for (let i = 0; i < size; i++) {
    const user_id = `usr_${i.toString(36).padStart(20, '0')}`;
    await apply(membersProjection, {
      type: 'UserRegistered',
      data: { user_id, email: `m${i}@example.com`, full_name: `Member ${i}`, password_hash: 'x', registered_at: at },
    });
    await apply(membersProjection, {
      type: 'MemberProfileUpdated',
      data: {
        user_id,
        full_name: `Member ${i}`,
        headline: `${WORDS[i % WORDS.length]} and ${WORDS[(i * 7) % WORDS.length]} number ${i}`,
        bio: null,
        industry: INDUSTRIES[i % INDUSTRIES.length] as (typeof INDUSTRIES)[number],
        region: 'IN',
        gives: [CAPS[i % CAPS.length] as string],
        asks: [CAPS[(i + 1) % CAPS.length] as string],
        discoverable: i % 10 !== 0,
        updated_at: at,
      },
    });
  }
  const page1 = await leaderboard(store, { cursor: null, limit: 20 });
  const deep = decodeCursor((await leaderboard(store, { cursor: decodeCursor(page1.next_cursor ?? ''), limit: 100 })).next_cursor ?? '');
  const agents = store.collection('agents');
  const members = store.collection('members');
  const cases: Array<[string, () => Promise<unknown>, () => Promise<{ index: string | null; examined: number }>]> = [
    [
      'leaderboard, first page (20)',
      () => leaderboard(store, { cursor: null, limit: 20 }),
      () => agents.explain({ rank_key: { $gte: '' }, ghosted: { $ne: true } }, { sort: { rank_key: 1 }, limit: 21, hint: 'leaderboard' }),
    ],
    [
      'leaderboard, page after a cursor (20)',
      () => leaderboard(store, { cursor: deep, limit: 20 }),
      () => agents.explain({ rank_key: { $gt: deep?.key ?? '' }, ghosted: { $ne: true } }, { sort: { rank_key: 1 }, limit: 21, hint: 'leaderboard' }),
    ],
    [
      'members, no filter (50)',
      () => searchMembers(store, { skip: 0, limit: 50 }),
      () => members.explain({ dir_listed: true }, { sort: { seq: -1 }, limit: 51, hint: 'dir_all' }),
    ],
    [
      'members, q one term (50)',
      () => searchMembers(store, { q: 'investor', skip: 0, limit: 50 }),
      () => members.explain({ dir_terms: 'investor' }, { sort: { seq: -1 }, limit: 51, hint: 'dir_terms' }),
    ],
    [
      'members, q two terms + industry (50)',
      () => searchMembers(store, { q: 'investor researcher', industry: 'finance', skip: 0, limit: 50 }),
      () =>
        members.explain(
          { $and: [{ dir_terms: 'researcher' }, { dir_terms: 'investor' }], dir_industry: 'finance' },
          { sort: { seq: -1 }, limit: 51, hint: 'dir_terms_industry' },
        ),
    ],
    [
      'members, industry (50)',
      () => searchMembers(store, { industry: 'energy', skip: 0, limit: 50 }),
      () => members.explain({ dir_industry: 'energy' }, { sort: { seq: -1 }, limit: 51, hint: 'dir_industry' }),
    ],
    [
      'match search, natural language (10)',
      () => matchSearch(store, 'an investor who is also a founder', 10),
      () => members.explain({ dir_terms: 'investor' }, { sort: { seq: -1 }, limit: 200, hint: 'dir_terms' }),
    ],
  ];
  say(`## Social reads (in-memory store, ${size.toLocaleString('en')} agents and ${size.toLocaleString('en')} members; median of 200 runs)`);
  say('');
  say('| query | median ms | p99 ms | examined (index) |');
  say('|---|---|---|---|');
  let slowest = 0;
  for (const [label, run, plan] of cases) {
    await run();
    const t = await timed(200, run);
    const p = await plan();
    say(`| ${label} | ${t.median.toFixed(3)} | ${t.p99.toFixed(3)} | ${p.examined} (${p.index}) |`);
    if (!label.startsWith('match search')) slowest = Math.max(slowest, t.median);
  }
  say('');
  return slowest;
}
