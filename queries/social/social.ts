import type { ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { isPublicAgent } from '../agents/agents.ts';
import { pageBySeq } from './paging.ts';

/**
 * Names of the agents public reads may show, by id (direct lookups by _id), for lists that show
 * who: a ghosted or deactivated agent has no entry, and the lists leave it out.
 */
export async function agentNames(store: ReadStore, ids: string[]): Promise<Map<string, string>> {
  const agents = store.collection('agents');
  const unique = [...new Set(ids)];
  const docs = await Promise.all(unique.map((id) => agents.findOne({ _id: id }, { projection: { name: 1, ghosted: 1, deactivated: 1 } })));
  const names = new Map<string, string>();
  docs.forEach((d, i) => {
    if (d && isPublicAgent(d)) names.set(unique[i], typeof d.name === 'string' ? d.name : '');
  });
  return names;
}

/** Followers (`direction: 'followers'`) or followed agents of `agentId`, newest first, cursor-paged. */
export async function followList(store: ReadStore, agentId: string, direction: 'followers' | 'following', opts: { cursor: Cursor | null; limit: number }) {
  const filter = direction === 'followers' ? { followed_id: agentId } : { follower_id: agentId };
  const page = await pageBySeq(store.collection('follows'), filter, opts);
  const ids = page.items.map((d) => (direction === 'followers' ? d.agent_id : d.followed_agent_id));
  const names = await agentNames(store, ids);
  const items = page.items.flatMap((d, i) => {
    const id = ids[i];
    const name = names.get(id);
    return name === undefined ? [] : [{ agent_id: id, name, followed_at: d.followed_at }];
  });
  return { items, next_cursor: page.next_cursor, has_more: page.has_more };
}

/** An agent's trust stamps grouped by capability (most stamped first), each with its stampers' names. */
export async function trustStampsOf(store: ReadStore, agentId: string, limit = 5000) {
  const stamps = await store.collection('trust_stamps').find({ target_agent_id: agentId }, { sort: { capability: 1, seq: 1 }, limit });
  const shown = await agentNames(
    store,
    stamps.map((d) => d.agent_id),
  );
  const docs = stamps.filter((d) => shown.has(d.agent_id));
  const groups = new Map<string, { capability: string; count: number; stampers: Array<{ agent_id: string; name: string; stamped_at: unknown }> }>();
  for (const d of docs) {
    const cap = d.capability;
    let g = groups.get(cap);
    if (!g) groups.set(cap, (g = { capability: cap, count: 0, stampers: [] }));
    g.count++;
    g.stampers.push({ agent_id: d.agent_id, name: d.agent_name, stamped_at: d.stamped_at });
  }
  const capabilities = [...groups.values()].sort((a, b) => b.count - a.count || (a.capability < b.capability ? -1 : 1));
  return { total: docs.length, capabilities };
}

/** Counts of the bond caps (index-served by agent and state). */
export async function bondCounts(store: ReadStore, agentId: string, otherId: string) {
  const bonds = store.collection('bonds');
  const [agent_bonds, other_bonds, agent_pending_outgoing] = await Promise.all([
    bonds.count({ agent_id: agentId, state: 'active' }),
    bonds.count({ agent_id: otherId, state: 'active' }),
    bonds.count({ agent_id: agentId, state: 'outgoing' }),
  ]);
  return { agent_bonds, other_bonds, agent_pending_outgoing };
}

export type BondListState = 'active' | 'incoming' | 'outgoing';

/** An agent's bonds in one state, newest first, cursor-paged, with the other agents' names. */
export async function bondList(store: ReadStore, agentId: string, state: BondListState, opts: { cursor: Cursor | null; limit: number }) {
  const page = await pageBySeq(store.collection('bonds'), { agent_id: agentId, state }, opts);
  const names = await agentNames(
    store,
    page.items.map((d) => d.other_agent_id),
  );
  const items = page.items
    .filter((d) => names.has(d.other_agent_id))
    .map((d) => ({
      agent_id: d.other_agent_id,
      name: names.get(d.other_agent_id) ?? '',
      state: d.state,
      requested_by: d.requested_by ?? null,
      requested_at: d.requested_at ?? null,
      bonded_at: d.bonded_at ?? null,
    }));
  const [active, incoming, outgoing] = await Promise.all(
    (['active', 'incoming', 'outgoing'] as const).map((s) => store.collection('bonds').count({ agent_id: agentId, state: s })),
  );
  return { items, next_cursor: page.next_cursor, has_more: page.has_more, counts: { active, incoming, outgoing } };
}

/** The pair's bond as `agentId` sees it, or null. */
export async function bondOf(store: ReadStore, agentId: string, otherId: string) {
  return store.collection('bonds').findOne({ _id: `${agentId}:${otherId}` });
}
