import type { Doc, Filter, ReadStore } from '../../projections/store/port.ts';

/** One inbox entry as the spec shows it: `{event, payload, created_at, delivered_via}`. */
export function inboxView(d: Doc) {
  return { id: d._id, event: d.event, payload: d.payload, created_at: d.created_at, delivered_via: (d.delivered_via as string | undefined) ?? 'inbox' };
}

/**
 * Events addressed to an agent (index-served by agent, or agent and event name). Without `since`
 * newest first; with `since`, the entries after it oldest first, so a poller can page forward by
 * passing the last `created_at` it saw.
 */
export async function inboxFor(store: ReadStore, agentId: string, opts: { since?: string; limit: number; event?: string }) {
  const filter: Filter = { agent_id: agentId };
  if (opts.event) filter.event = opts.event;
  if (opts.since) filter.created_at = { $gt: opts.since };
  const docs = await store.collection('inbox_events').find(filter, { sort: { seq: opts.since ? 1 : -1 }, limit: opts.limit });
  return docs.map(inboxView);
}

export async function blocksOf(store: ReadStore, agentId: string, opts: { skip: number; limit: number }) {
  const blocks = store.collection('blocks');
  const [items, total] = await Promise.all([
    blocks.find({ agent_id: agentId }, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit }),
    blocks.count({ agent_id: agentId }),
  ]);
  return { items: items.map((b) => ({ agent_id: b.blocked_agent_id, blocked_at: b.blocked_at })), total };
}

/** A member (human user) by id, from the humans area's `users` read model. */
export function getUser(store: ReadStore, userId: string) {
  return store.collection('users').findOne({ _id: userId });
}

/** One event name of an agent's inbox, newest first, paged (index-served by agent and event). */
export async function inboxPage(store: ReadStore, agentId: string, event: string, opts: { skip: number; limit: number }) {
  const inbox = store.collection('inbox_events');
  const filter = { agent_id: agentId, event };
  const [items, total] = await Promise.all([inbox.find(filter, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit }), inbox.count(filter)]);
  return { items, total };
}

/** A member's DMs: inbound ones by user id and by address (newest first), and their replies as linked agents. */
export async function memberDms(store: ReadStore, user: { user_id: string; emails: string[] }, limit = 1000) {
  const dms = store.collection('member_dms');
  const lists = await Promise.all([
    dms.find({ to_user_id: user.user_id }, { sort: { seq: -1 }, limit }),
    ...user.emails.map((e) => dms.find({ to_email: e }, { sort: { seq: -1 }, limit })),
    dms.find({ owner_user_id: user.user_id }, { sort: { seq: -1 }, limit }),
  ]);
  const byId = new Map<string, Doc>();
  for (const list of lists) for (const d of list) byId.set(d._id, d);
  return [...byId.values()].sort((a, b) => (b.seq as number) - (a.seq as number));
}
