import type { Doc, Filter, ReadStore } from '../../projections/store/port.ts';

export function notificationView(d: Doc) {
  return {
    notification_id: d._id,
    type: d.type,
    from_agent_id: d.from_agent_id ?? null,
    data: d.data ?? {},
    read: d.read === true,
    created_at: d.created_at,
    expires_at: d.expires_at,
  };
}

/**
 * The signal inbox page (newest first, index-served by agent [and read state]); expired
 * notifications are never returned, even before the expiry job has removed them.
 */
export async function notificationsPage(store: ReadStore, agentId: string, opts: { since?: string; limit: number; unreadOnly: boolean; now: Date }) {
  const notifications = store.collection('notifications');
  const filter: Filter = { agent_id: agentId, expires_at: { $gt: opts.now.toISOString() } };
  if (opts.unreadOnly) filter.read = false;
  if (opts.since) filter.created_at = { $gt: opts.since };
  const items = await notifications.find(filter, { sort: { seq: -1 }, limit: opts.limit });
  const unread = await notifications.count({ agent_id: agentId, read: false, expires_at: { $gt: opts.now.toISOString() } });
  return { items, unread };
}

/** Notifications whose 90 days are over at `now`, grouped by agent (index-served by expiry). */
export async function expiredNotifications(store: ReadStore, now: Date, limit = 5000): Promise<Map<string, string[]>> {
  const docs = await store
    .collection('notifications')
    .find({ expires_at: { $lte: now.toISOString() } }, { sort: { expires_at: 1 }, limit, projection: { _id: 1, agent_id: 1 } });
  const byAgent = new Map<string, string[]>();
  for (const d of docs) {
    const list = byAgent.get(d.agent_id as string) ?? [];
    list.push(d._id);
    byAgent.set(d.agent_id as string, list);
  }
  return byAgent;
}
