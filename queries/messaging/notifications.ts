import type { Filter, ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { cursorOf, listPage } from '../cursor.ts';

export function notificationView(d: ReadModel<'notifications'>) {
  return {
    notification_id: d._id,
    type: d.type,
    from_agent_id: d.from_agent_id ?? null,
    data: d.data ?? {},
    read: d.read === true,
    created_at: d.created_at,
    expires_at: d.expires_at,
    cursor: cursorOf(d),
  };
}

/**
 * The signal inbox page (index-served by agent [and read state]), paged by the one cursor like
 * the inbox (`queries/cursor.ts` listPage: newest first, or oldest first after a cursor or an
 * instant, tie-safe); expired notifications are never returned, even before the expiry job has
 * removed them.
 */
export async function notificationsPage(
  store: ReadStore,
  agentId: string,
  opts: { since?: string; after?: Cursor; limit: number; unreadOnly: boolean; now: Date },
) {
  const notifications = store.collection('notifications');
  const filter: Filter = { agent_id: agentId, expires_at: { $gt: opts.now.toISOString() } };
  if (opts.unreadOnly) filter.read = false;
  const page = await listPage(notifications, filter, opts);
  const unread = await notifications.count({ agent_id: agentId, read: false, expires_at: { $gt: opts.now.toISOString() } });
  return { items: page.docs, unread, next_cursor: page.next_cursor, has_more: page.has_more, poll_cursor: page.poll_cursor };
}

/** Notifications whose 90 days are over at `now`, grouped by agent (index-served by expiry). */
export async function expiredNotifications(store: ReadStore, now: Date, limit = 5000): Promise<Map<string, string[]>> {
  const docs = await store
    .collection('notifications')
    .find({ expires_at: { $lte: now.toISOString() } }, { sort: { expires_at: 1 }, limit, projection: { _id: 1, agent_id: 1 } });
  const byAgent = new Map<string, string[]>();
  for (const d of docs) {
    const list = byAgent.get(d.agent_id) ?? [];
    list.push(d._id);
    byAgent.set(d.agent_id, list);
  }
  return byAgent;
}
