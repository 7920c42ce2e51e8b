import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { cursorOf, listPage } from '../cursor.ts';

/** One inbox entry as the spec shows it: `{event, payload, created_at, delivered_via}`. */
export function inboxView(d: ReadModel<'inbox_events'>) {
  return {
    id: d._id,
    event: d.event,
    payload: d.payload,
    created_at: d.created_at,
    delivered_via: d.delivered_via ?? 'inbox',
    cursor: cursorOf(d),
  };
}

/**
 * Events addressed to an agent (index-served by agent, or agent and event name), paged by the one
 * cursor (docs/DECISIONS.md "One cursor"). With `after`, the entries after that cursor, oldest
 * first; with `since`, the entries created after that instant, oldest first, never splitting a
 * millisecond across pages; with neither, the newest entries, newest first. Every answer names the
 * cursor to poll on from (`next_cursor`) and whether more entries are already there (`has_more`).
 * An entry's cursor is `cursorOf(entry)`, which webhook deliveries carry too.
 */
export async function inboxFor(store: ReadStore, agentId: string, opts: { since?: string; after?: Cursor; limit: number; event?: string }) {
  const inbox = store.collection('inbox_events');
  const filter: Filter = { agent_id: agentId };
  if (opts.event) filter.event = opts.event;
  const page = await listPage(inbox, filter, opts);
  return { events: page.docs.map(inboxView), next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

/** The agents `agentId` blocks, newest first, paged by the one cursor like the inbox (queries/cursor.ts listPage). */
export async function blocksOf(store: ReadStore, agentId: string, opts: { skip: number; limit: number; after?: Cursor }) {
  const blocks = store.collection('blocks');
  const [page, total] = await Promise.all([listPage(blocks, { agent_id: agentId }, opts), blocks.count({ agent_id: agentId })]);
  return {
    items: page.docs.map((b) => ({ agent_id: b.blocked_agent_id, blocked_at: b.blocked_at })),
    total,
    next_cursor: page.next_cursor,
    has_more: page.has_more,
    poll_cursor: page.poll_cursor,
  };
}

/** A member (human user) by id, from the humans area's `users` read model. */
export function getUser(store: ReadStore, userId: string) {
  return store.collection('users').findOne({ _id: userId });
}

/** One event name of an agent's inbox: newest first, paged, or after a cursor (index-served by agent and event). */
export async function inboxPage(store: ReadStore, agentId: string, event: string, opts: { skip: number; limit: number; after?: Cursor }) {
  const inbox = store.collection('inbox_events');
  const filter = { agent_id: agentId, event };
  const [page, total] = await Promise.all([listPage(inbox, filter, opts), inbox.count(filter)]);
  return { items: page.docs, total, next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

/** A member's DMs: inbound ones by user id and by address (newest first), and their replies as linked agents. */
export async function memberDms(store: ReadStore, user: { user_id: string; emails: string[] }, limit = 1000) {
  const dms = store.collection('member_dms');
  const lists = await Promise.all([
    dms.find({ to_user_id: user.user_id }, { sort: { seq: -1 }, limit }),
    ...user.emails.map((e) => dms.find({ to_email: e }, { sort: { seq: -1 }, limit })),
    dms.find({ owner_user_id: user.user_id }, { sort: { seq: -1 }, limit }),
  ]);
  const byId = new Map<string, ReadModel<'member_dms'>>();
  for (const list of lists) for (const d of list) byId.set(d._id, d);
  return [...byId.values()].sort((a, b) => b.seq - a.seq);
}
