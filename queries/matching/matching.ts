import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

/** Candidates examined per matching run or scout signal at most (index-served, never a scan). */
export const MATCH_CANDIDATES_MAX = 5_000;

/**
 * An agent's standing offers and needs (read model `match_profiles`). The command side has its own
 * StandingProfile (commands/matching/matching.ts): layers do not import each other's types.
 */
export interface StandingProfileView {
  agent_id: string;
  name: string;
  capabilities: string[];
  offers: string[];
  needs: string[];
  last_run_at: string | null;
  hidden: boolean;
}

function view(d: ReadModel<'match_profiles'>): StandingProfileView {
  return {
    agent_id: d._id,
    name: String(d.name ?? ''),
    capabilities: d.capabilities ?? [],
    offers: d.offers ?? [],
    needs: d.needs ?? [],
    last_run_at: d.last_run_at ?? null,
    hidden: d.hidden === true,
  };
}

export async function standingProfile(store: ReadStore, agentId: string): Promise<StandingProfileView | null> {
  const d = await store.collection('match_profiles').findOne({ _id: agentId });
  return d ? view(d) : null;
}

/** Several profiles by id (for rendering matches). */
export async function standingProfiles(store: ReadStore, agentIds: string[]): Promise<Map<string, StandingProfileView>> {
  if (agentIds.length === 0) return new Map();
  const docs = await store.collection('match_profiles').find({ _id: { $in: agentIds } });
  return new Map(docs.map((d) => [d._id, view(d)]));
}

/**
 * Visible agents whose standing needs include at least one of `terms` (served by the multikey
 * index on `needs`), other than `exclude`.
 */
export async function agentsNeeding(store: ReadStore, terms: string[], exclude: string): Promise<StandingProfileView[]> {
  if (terms.length === 0) return [];
  const docs = await store.collection('match_profiles').find({ needs: terms.length === 1 ? terms[0] : { $in: terms } }, { limit: MATCH_CANDIDATES_MAX });
  return docs.map(view).filter((p) => !p.hidden && p.agent_id !== exclude);
}

/** Whether any visible agent other than `exclude` has a standing need among `terms` (index-served, at most 2 read). */
export async function anyAgentNeeding(store: ReadStore, terms: string[], exclude: string): Promise<boolean> {
  if (terms.length === 0) return false;
  const docs = await store
    .collection('match_profiles')
    .find({ needs: terms.length === 1 ? terms[0] : { $in: terms }, hidden: { $ne: true } }, { limit: 2, projection: { _id: 1 } });
  return docs.some((d) => d._id !== exclude);
}

/** True when either agent blocks the other (read model `blocks`, by `<blocker>:<blocked>`). */
export async function blockedEitherWay(store: ReadStore, a: string, b: string): Promise<boolean> {
  const blocks = store.collection('blocks');
  const [ab, ba] = await Promise.all([blocks.findOne({ _id: `${a}:${b}` }), blocks.findOne({ _id: `${b}:${a}` })]);
  return Boolean((ab && ab.agent_id) || (ba && ba.agent_id));
}

/** Agents registered at or after `since`, newest first, with the event that registered them (scout resume). */
export async function registeredSince(store: ReadStore, since: string, limit: number) {
  const docs = await store.collection('match_profiles').find({ registered_at: { $gte: since } }, { sort: { registered_at: -1 }, limit });
  return docs.map((d) => ({ agent_id: d._id, event_id: String(d.registered_event_id), position: Number(d.registered_position ?? 0) }));
}

/**
 * The user an agent is linked to (a full claim or the in-app agent), when the agent is active (not
 * deactivated, banned or ghosted) and the user is a discoverable member; else null.
 */
export async function memberOwnerOf(store: ReadStore, agentId: string): Promise<string | null> {
  const agent = await store.collection('agents').findOne({ _id: agentId }, { projection: { owner_user_id: 1, deactivated: 1, ghosted: 1 } });
  const owner = agent?.owner_user_id;
  if (typeof owner !== 'string' || agent?.deactivated === true || agent?.ghosted === true) return null;
  const member = await store.collection('members').findOne({ _id: owner }, { projection: { dir_listed: 1 } });
  return member?.dir_listed === true ? owner : null;
}
