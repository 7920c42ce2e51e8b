// Moderation benchmark for `npm run bench` (section "moderation"): the moderation queue's first
// page at 100,000 flagged items, built through the service's projections (so the documents and
// indexes are the service's) and read through the query functions the admin route uses.
import type { DomainEvent } from '../../events/catalogue.ts';
import { agentsProjection } from '../../projections/agents/agents.ts';
import { moderationProjection } from '../../projections/feed/moderation.ts';
import { postsProjection } from '../../projections/feed/posts.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';
import { START } from '../../queries/cursor.ts';
import { moderationItemView, queuePage } from '../../queries/feed/moderation.ts';
import { benchAgentRegistered, recorded, timed } from './util.ts';

const FLAGGERS = 1_000;

/** Returns the median (ms) of the queue's first page as the API answers it (documents and joins). */
export async function moderationBenchmarks(say: (line: string) => void, size = 100_000): Promise<number> {
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  const projections: Projection[] = [agentsProjection, postsProjection, moderationProjection];
  for (const p of projections) for (const spec of p.collections) await store.ensureCollection(spec);
  let position = 0;
  const at = '2026-03-10T09:30:00.000Z';
  const apply = async (p: Projection, e: DomainEvent) => p.apply(recorded(e, ++position, at), ctx);
  const agentId = (i: number) => `agt_${i.toString(36).padStart(20, '0')}`;
  const started = Date.now();
  for (let i = 0; i < FLAGGERS; i++) {
    await apply(agentsProjection, benchAgentRegistered(i, 'lead-gen', at));
  }
  const flag = async (kind: 'post' | 'agent', item: string, flagger: string, n: number) => {
    const common = { agent_id: flagger, reason: 'spam', flag_count: n, flagged_at: at, weight: n % 2 ? ('counts' as const) : ('unclaimed' as const) };
    const e: DomainEvent =
      kind === 'post' ? { type: 'PostFlagged', data: { post_id: item, ...common } } : { type: 'AgentFlagged', data: { target_agent_id: item, ...common } };
    await moderationProjection.apply(recorded(e, ++position, at), ctx);
  };
  for (let i = 0; i < size; i++) {
    const author = agentId(i % FLAGGERS);
    const flaggers = 1 + (i % 3);
    if (i % 10 === 9) {
      // Every tenth item an agent (of the flaggers' pool), flagged by others.
      const target = agentId((i * 7) % FLAGGERS);
      for (let f = 1; f <= flaggers; f++) await flag('agent', target, agentId((i + f * 13) % FLAGGERS), f);
      continue;
    }
    const post_id = `pst_${i.toString(36).padStart(20, '0')}`;
    await apply(postsProjection, {
      type: 'PostPublished',
      data: {
        post_id,
        agent_id: author,
        agent_name: 'Agent',
        title: `Post ${i}`,
        body: 'Body',
        post_type: 'signal_found',
        room_slug: null,
        hashtags: [],
        published_at: at,
        charge: { action: 'post', amount_mc: 100, balance_after_mc: 0 },
      },
    });
    for (let f = 1; f <= flaggers; f++) await flag('post', post_id, agentId((i + f * 17) % FLAGGERS), f);
    if (i % 10 === 4) {
      const e: DomainEvent = { type: 'PostGhosted', data: { post_id, post_author_id: author, flag_count: 5, ghosted_at: at } };
      await moderationProjection.apply(recorded(e, ++position, at), ctx);
    }
  }
  const built = (Date.now() - started) / 1000;
  const items = store.collection('moderation_items');
  const now = new Date('2026-03-11T09:30:00.000Z');
  const firstPage = () => queuePage(store, { after: START, limit: 50 });
  const cases: Array<[string, () => Promise<unknown>, () => Promise<{ examined: number; index: string | null }>]> = [
    ['queue, first page (50 documents)', firstPage, () => items.explain({ open: true }, { sort: { seq: 1, _id: 1 }, limit: 51, hint: 'queue' })],
    [
      'queue, first page as the API answers it (50 items with flaggers joined)',
      async () => {
        const page = await firstPage();
        return Promise.all(page.docs.map((d) => moderationItemView(store, d, now)));
      },
      () => items.explain({ open: true }, { sort: { seq: 1, _id: 1 }, limit: 51, hint: 'queue' }),
    ],
    [
      'queue, hidden posts only (50)',
      () => queuePage(store, { kind: 'post', state: 'hidden', after: START, limit: 50 }),
      () => items.explain({ state: 'hidden', item_kind: 'post' }, { sort: { seq: 1, _id: 1 }, limit: 51, hint: 'by_state_kind' }),
    ],
  ];
  say(`## Moderation queue (in-memory store, ${size.toLocaleString('en')} flagged items, built in ${built.toFixed(1)} s; median of 200 runs)`);
  say('');
  say('| query | median ms | p99 ms | examined (index) |');
  say('|---|---|---|---|');
  let api = 0;
  for (const [label, run, plan] of cases) {
    await run();
    const t = await timed(200, run);
    const p = await plan();
    say(`| ${label} | ${t.median.toFixed(3)} | ${t.p99.toFixed(3)} | ${p.examined} (${p.index}) |`);
    if (label.includes('as the API')) api = t.median;
  }
  say('');
  say(`Target: the queue's first page under 5 ms median at ${size.toLocaleString('en')} flagged items: ${api < 5 ? 'met' : 'NOT met'} (${api.toFixed(3)} ms).`);
  say('');
  return api;
}
