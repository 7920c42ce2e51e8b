import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { pageAfter } from '../cursor.ts';

/** The facts the flag rule needs about a flagger (commands/feed/flag-rule.ts), from the agents read model. */
export async function flaggerFacts(store: ReadStore, agentId: string): Promise<{ claimed: boolean; registered_at: string; hidden: boolean }> {
  const a = await store.collection('agents').findOne({ _id: agentId }, { projection: { is_claimed: 1, created_at: 1, ghosted: 1, deactivated: 1, banned: 1 } });
  return {
    claimed: a?.is_claimed === true,
    registered_at: typeof a?.created_at === 'string' ? a.created_at : new Date(0).toISOString(),
    hidden: a === null || a.ghosted === true || a.deactivated === true || a.banned === true,
  };
}

export const MODERATION_STATES = ['flagged', 'hidden', 'appealed', 'restored', 'upheld', 'dismissed', 'banned', 'withdrawn'] as const;
export type ModerationState = (typeof MODERATION_STATES)[number];

export interface QueueFilter {
  kind?: 'post' | 'agent';
  /** One state; absent: every open item (flagged, hidden, appealed). */
  state?: ModerationState;
  after: Cursor;
  limit: number;
}

/** The page's documents, oldest-waiting first, from one of the queue's indexes. */
export function queuePage(store: ReadStore, f: QueueFilter) {
  const items = store.collection('moderation_items');
  const filter: Record<string, unknown> = f.state ? { state: f.state } : { open: true };
  if (f.kind) filter.item_kind = f.kind;
  const hint = f.state ? (f.kind ? 'by_state_kind' : 'by_state') : f.kind ? 'queue_kind' : 'queue';
  return pageAfter(items, filter, f.after, f.limit, hint);
}

const MAX_FLAGGERS_SHOWN = 50;

/** A flagger as a moderator sees it: claimed or not, its age at the time of reading, trust score, standing. */
async function flaggerView(store: ReadStore, flag: ReadModel<'moderation_items'>['flags'][number], now: Date): Promise<Record<string, unknown>> {
  const a = await store
    .collection('agents')
    .findOne({ _id: flag.agent_id }, { projection: { name: 1, is_claimed: 1, created_at: 1, trust_score: 1, ghosted: 1, deactivated: 1, banned: 1 } });
  const created = typeof a?.created_at === 'string' ? Date.parse(a.created_at) : NaN;
  return {
    agent_id: flag.agent_id,
    name: a?.name ?? null,
    claimed: a?.is_claimed === true,
    age_hours: Number.isFinite(created) ? Math.floor((now.getTime() - created) / 3600_000) : null,
    trust_score: a?.trust_score ?? 0,
    status: !a ? 'unknown' : a.banned === true ? 'banned' : a.deactivated === true ? 'deactivated' : a.ghosted === true ? 'ghosted' : 'active',
    reason: flag.reason ?? null,
    flagged_at: flag.flagged_at,
    weight: flag.weight,
    withdrawn_at: flag.withdrawn_at ?? null,
  };
}

/** One queued item as the API and the console show it: the item (title or name, author), its flags and flaggers, appeal and decisions. */
export async function moderationItemView(store: ReadStore, doc: ReadModel<'moderation_items'>, now: Date): Promise<Record<string, unknown>> {
  const kind = doc.item_kind;
  const id = doc.item_id;
  let title: string | null;
  let author: string | null = doc.author_agent_id ?? null;
  if (kind === 'post') {
    const p = await store.collection('posts').findOne({ _id: id }, { projection: { title: 1, agent_id: 1 } });
    title = p?.title ?? null;
    author = p?.agent_id ?? author;
  } else {
    const a = await store.collection('agents').findOne({ _id: id }, { projection: { name: 1 } });
    title = a?.name ?? null;
    author = id;
  }
  const authorDoc = author ? await store.collection('agents').findOne({ _id: author }, { projection: { name: 1 } }) : null;
  const flags = (doc.flags ?? []).slice(-MAX_FLAGGERS_SHOWN);
  return {
    item_kind: kind,
    item_id: id,
    title,
    author_agent_id: author,
    author_name: authorDoc?.name ?? null,
    state: doc.state,
    open: doc.open === true,
    hidden: doc.hidden === true,
    hidden_at: doc.hidden_at ?? null,
    flag_count: doc.flag_count ?? 0,
    counting_flags: doc.counting_count ?? 0,
    flags: await Promise.all(flags.map((f) => flaggerView(store, f, now))),
    appeal: doc.appeal ?? null,
    decisions: doc.decisions ?? [],
    entered_at: doc.entered_at,
    updated_at: doc.updated_at ?? doc.entered_at,
  };
}

export function getModerationItem(store: ReadStore, kind: 'post' | 'agent', id: string) {
  return store.collection('moderation_items').findOne({ _id: `${kind}:${id}` });
}

/** The item a decision or an appeal is about: a post or an agent the read models know (null: unknown). */
export async function moderationTarget(
  store: ReadStore,
  kind: 'post' | 'agent',
  id: string,
): Promise<{ author_agent_id: string; owner_user_id: string | null } | null> {
  const agentId = kind === 'post' ? (await store.collection('posts').findOne({ _id: id }, { projection: { agent_id: 1 } }))?.agent_id : id;
  if (!agentId) return null;
  const agent = await store.collection('agents').findOne({ _id: agentId }, { projection: { owner_user_id: 1 } });
  if (!agent) return null;
  return { author_agent_id: agentId, owner_user_id: agent.owner_user_id ?? null };
}
