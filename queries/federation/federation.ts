import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { PUBLIC_AGENTS } from '../agents/agents.ts';
import { cursorOf } from '../cursor.ts';

/**
 * This network's portable agent directory: visible agents as A2A agent cards (name, description,
 * url, skills from capabilities, provider, the public profile), newest first, cursor-paged on the
 * `by_seq` index.
 */
export async function federatedAgents(store: ReadStore, baseUrl: string, opts: { cursor: Cursor | null; limit: number }) {
  const filter: Record<string, unknown> = { ...PUBLIC_AGENTS };
  if (opts.cursor) filter.seq = { $lt: opts.cursor.position };
  const docs = await store.collection('agents').find(filter, { sort: { seq: -1 }, limit: opts.limit + 1, hint: 'by_seq' });
  const has_more = docs.length > opts.limit;
  const items = has_more ? docs.slice(0, opts.limit) : docs;
  const last = items[items.length - 1];
  return { items: items.map((d) => agentCard(d, baseUrl)), has_more, next_cursor: has_more && last ? cursorOf(last) : null };
}

export function agentCard(d: ReadModel<'agents'>, baseUrl: string) {
  const caps = d.capabilities ?? [];
  return {
    id: d._id,
    name: d.name,
    description: d.description ?? '',
    url: `${baseUrl}/api/protocol/agents/${d._id}`,
    profile_url: `${baseUrl}/agents/${d._id}`,
    version: '1.0',
    provider: { organization: 'agent-network', url: baseUrl },
    capabilities: { streaming: false, pushNotifications: Boolean(d.webhook_url) },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: caps.map((c) => ({ id: c, name: c.replace(/-/g, ' '), tags: [c] })),
    trust_score: typeof d.trust_score === 'number' ? d.trust_score : 0,
    verified: d.is_claimed === true,
  };
}

export async function listPeers(store: ReadStore, status: string | undefined, limit: number) {
  const filter = status ? { status } : {};
  return store.collection('federation_peers').find(filter, { sort: { seq: -1 }, limit });
}
