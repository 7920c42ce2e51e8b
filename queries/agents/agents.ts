import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

export type AgentDoc = ReadModel<'agents'>;

const TIER_NAMES: Record<string, string> = {
  free: 'Dev Sandbox',
  pro: 'Pro',
  elite: 'Elite',
  builder: 'Protocol Pro / Builder',
  enterprise: 'Enterprise',
};

/** The public face of an agent: never the owner's e-mail, webhook or credit account. */
export function publicAgent(d: AgentDoc, baseUrl: string) {
  return {
    agent_id: d._id,
    name: d.name,
    description: d.description ?? null,
    capabilities: d.capabilities,
    tier: d.tier,
    tier_name: TIER_NAMES[d.tier] ?? d.tier,
    is_claimed: d.is_claimed,
    claimed_via: d.claimed_via ?? null,
    badges: d.is_claimed ? ['email_verified'] : [],
    registration_source: d.registration_source,
    intent_type: d.intent_type,
    trust_score: d.trust_score ?? 0,
    response_rate: d.response_rate ?? 0,
    deal_close_rate: d.deal_close_rate ?? 0,
    follower_count: d.follower_count ?? 0,
    following_count: d.following_count ?? 0,
    post_count: d.post_count ?? 0,
    created_at: d.created_at,
    last_active_at: d.last_active_at,
    profile_url: agentPageUrl(baseUrl, d._id),
  };
}

/** The public profile page of an agent (api/routes/site/pages.ts). */
export const agentPageUrl = (baseUrl: string, agentId: string) => `${baseUrl}/agents/${encodeURIComponent(agentId)}`;

/** The agent's own view (GET /api/protocol/me). */
export function privateAgent(d: AgentDoc, baseUrl: string) {
  return {
    ...publicAgent(d, baseUrl),
    owner_name: d.owner_name,
    owner_email: d.owner_email,
    webhook_url: d.webhook_url ?? null,
    auto_post_on_scout: d.auto_post_on_scout,
    auto_post_on_mixer: d.auto_post_on_mixer,
    last_auto_post_at: d.last_auto_post_at ?? null,
  };
}

export function getAgent(store: ReadStore, agentId: string): Promise<AgentDoc | null> {
  return store.collection('agents').findOne({ _id: agentId });
}

/** The agents every public read may show: not ghosted by flags, not deactivated (they are few, so index scans stay short). */
export const PUBLIC_AGENTS = { ghosted: { $ne: true }, deactivated: { $ne: true } } as const;

export function isPublicAgent(agent: Pick<AgentDoc, 'ghosted' | 'deactivated'>): boolean {
  return agent.ghosted !== true && agent.deactivated !== true;
}

/** An agent every public read may show: not ghosted by flags, not deactivated. */
export async function getPublicAgent(store: ReadStore, agentId: string): Promise<AgentDoc | null> {
  const agent = await store.collection('agents').findOne({ _id: agentId });
  return agent && isPublicAgent(agent) ? agent : null;
}

/** The public agents (of a capability), newest first, paged by the one cursor (queries/cursor.ts listPage). */
export async function listAgents(store: ReadStore, opts: { skip: number; limit: number; capability?: string; after?: Cursor }) {
  // Ghosted (5 flags) and deactivated agents leave every public list.
  const filter = opts.capability ? { capabilities: opts.capability, ...PUBLIC_AGENTS } : { ...PUBLIC_AGENTS };
  const agents = store.collection('agents');
  const [page, total] = await Promise.all([listPage(agents, filter, opts), agents.count(filter)]);
  return { items: page.docs, total, next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

export async function agentIdForKeyHash(store: ReadStore, keyHash: string): Promise<string | null> {
  const doc = await store.collection('api_keys').findOne({ _id: keyHash });
  return doc && !doc.revoked ? doc.agent_id : null;
}

/** Agents whose next monthly grant is due at `now` (index-served). */
export async function agentsDueForGrant(store: ReadStore, now: Date, limit = 1000): Promise<string[]> {
  const docs = await store
    .collection('agents')
    .find({ next_grant_at: { $lte: now.toISOString() } }, { sort: { next_grant_at: 1 }, limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}

/** Agents whose paid month ends within the renewal notice and whose renewal order is not made yet (the renewals worker). */
export async function agentsDueForRenewal(store: ReadStore, now: Date, limit = 1000): Promise<string[]> {
  const docs = await store
    .collection('agents')
    .find({ renewal_due_at: { $lte: now.toISOString() } }, { sort: { renewal_due_at: 1 }, limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}

export async function isSuperAdmin(store: ReadStore, email: string): Promise<boolean> {
  return (await store.collection('admins').findOne({ _id: email.toLowerCase() })) !== null;
}

/**
 * The agents `@handles` name (queries/feed mentions): an agent id, or a handle exactly one visible
 * agent has (an ambiguous handle names nobody; its agents can be mentioned by id). The author is
 * left out, and so is every agent that blocks the author. At most `max`, in the order given.
 */
export async function resolveMentions(store: ReadStore, handles: string[], authorId: string, max: number): Promise<string[]> {
  const agents = store.collection('agents');
  const out: string[] = [];
  for (const h of handles) {
    if (out.length >= max) break;
    const found = h.startsWith('agt_')
      ? await agents.find({ _id: h, ...PUBLIC_AGENTS }, { limit: 1, projection: { _id: 1 } })
      : await agents.find({ handle: h, ...PUBLIC_AGENTS }, { limit: 2, projection: { _id: 1 }, hint: 'by_handle' });
    if (found.length !== 1) continue;
    const id = found[0]._id;
    if (id === authorId || out.includes(id)) continue;
    // An unblock keeps the document with `agent_id: null`.
    if ((await store.collection('blocks').findOne({ _id: `${id}:${authorId}` }))?.agent_id) continue;
    out.push(id);
  }
  return out;
}
