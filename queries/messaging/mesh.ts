import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { cursorOf, encodeCursor, listPage } from '../cursor.ts';

export function getThread(store: ReadStore, threadId: string) {
  return store.collection('mesh_threads').findOne({ _id: threadId });
}

export function threadView(t: ReadModel<'mesh_threads'>) {
  return {
    thread_id: t._id,
    name: t.name ?? null,
    created_by: t.created_by,
    participant_agent_ids: t.participant_agent_ids,
    created_at: t.created_at,
    last_message_at: t.last_message_at,
    last_message_preview: t.last_message_preview ?? null,
    message_count: t.message_count ?? 0,
  };
}

/**
 * The agent's threads by last message, newest first (index-served by membership): `skip` items
 * skipped, or after a cursor of this list (`next_cursor`, keyed by last message time and thread
 * id, so threads that start during a walk do not shift it). The order is by activity: a thread
 * that gets a message moves to the front.
 */
export async function threadsOf(store: ReadStore, agentId: string, opts: { skip: number; limit: number; after?: Cursor }) {
  const members = store.collection('mesh_thread_members');
  const filter: Filter = { agent_id: agentId };
  const cut = opts.after?.older ? opts.after.key.split('|') : null;
  const page: Filter =
    cut && cut.length === 2
      ? { ...filter, last_message_at: { $lte: cut[0] }, $or: [{ last_message_at: { $lt: cut[0] } }, { thread_id: { $lt: cut[1] } }] }
      : filter;
  const [rows, total] = await Promise.all([
    members.find(page, { sort: { last_message_at: -1, thread_id: -1 }, skip: cut ? 0 : opts.skip, limit: opts.limit + 1 }),
    members.count(filter),
  ]);
  const has_more = rows.length > opts.limit;
  if (has_more) rows.length = opts.limit;
  const last = rows[rows.length - 1];
  const next_cursor = last
    ? encodeCursor({ position: 0, key: `${String(last.last_message_at)}|${String(last.thread_id)}`, older: true })
    : opts.after
      ? encodeCursor(opts.after)
      : null;
  const threads = await Promise.all(rows.map((r) => getThread(store, r.thread_id)));
  return { items: threads.filter((t) => t !== null).map(threadView), total, next_cursor, has_more };
}

function messageView(m: ReadModel<'mesh_messages'>) {
  return { message_id: m._id, agent_id: m.agent_id, agent_name: m.agent_name, message: m.message, created_at: m.created_at, cursor: cursorOf(m) };
}

/** The newest messages of a thread, newest first (index-served by thread). */
export async function threadMessages(store: ReadStore, threadId: string, limit: number) {
  const docs = await store.collection('mesh_messages').find({ thread_id: threadId }, { sort: { seq: -1, _id: -1 }, limit });
  return docs.map(messageView);
}

/** A thread's messages by the one cursor: after `after` oldest first, else the newest page (queries/cursor.ts listPage). */
export async function threadMessagePage(store: ReadStore, threadId: string, opts: { after?: Cursor; limit: number; skip?: number }) {
  const page = await listPage(store.collection('mesh_messages'), { thread_id: threadId }, opts);
  return { messages: page.docs.map(messageView), next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

/** Status per shared DECISIONS: a heartbeat holds for 15 min; otherwise activity in 15 min is online, in 24 h degraded, else offline. */
export const HEARTBEAT_TTL_MS = 15 * 60_000;
export const ONLINE_WINDOW_MS = 15 * 60_000;
export const DEGRADED_WINDOW_MS = 24 * 3600_000;

export async function agentStatus(store: ReadStore, agent: ReadModel<'agents'>, now: Date) {
  const presence = await store.collection('agent_presence').findOne({ _id: agent._id });
  const t = now.getTime();
  const heartbeatAt = typeof presence?.heartbeat_at === 'string' ? presence.heartbeat_at : null;
  const lastActive = typeof agent.last_active_at === 'string' ? agent.last_active_at : null;
  const base = {
    agent_id: agent._id,
    last_heartbeat_at: heartbeatAt,
    capacity: presence?.capacity ?? null,
    last_active_at: lastActive,
  };
  if (heartbeatAt && t - Date.parse(heartbeatAt) < HEARTBEAT_TTL_MS) {
    return {
      ...base,
      status: presence?.status,
      source: 'heartbeat',
      valid_until: new Date(Date.parse(heartbeatAt) + HEARTBEAT_TTL_MS).toISOString(),
    };
  }
  const latest = [heartbeatAt, lastActive]
    .filter((x): x is string => x !== null)
    .sort()
    .at(-1);
  const age = latest ? t - Date.parse(latest) : Infinity;
  const status = age < ONLINE_WINDOW_MS ? 'online' : age < DEGRADED_WINDOW_MS ? 'degraded' : 'offline';
  return { ...base, capacity: null, status, source: 'activity', valid_until: null };
}
