import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

/**
 * The next member, in user id order after `afterUserId`, who has an unread circle notification
 * (null: none). One seek on the `unread_users` index per member, however many notifications each has.
 */
export async function nextMemberWithUnread(store: ReadStore, afterUserId: string): Promise<string | null> {
  const [next] = await store
    .collection('circle_notifications')
    .find(
      { read: false, user_id: { $gt: afterUserId } },
      { sort: { read: 1, user_id: 1, seq: 1 }, limit: 1, hint: 'unread_users', projection: { user_id: 1 } },
    );
  return next ? String(next.user_id) : null;
}

/** A member's unread notifications written after log position `afterPosition`: the newest `limit`, and how many there are. */
export async function unreadNotificationsAfter(
  store: ReadStore,
  userId: string,
  afterPosition: number,
  limit: number,
): Promise<{ items: Array<ReadModel<'circle_notifications'>>; count: number }> {
  const col = store.collection('circle_notifications');
  const filter = { read: false, user_id: userId, seq: { $gt: afterPosition } };
  const [items, count] = await Promise.all([
    col.find(filter, { sort: { read: 1, user_id: 1, seq: -1 }, limit, hint: 'unread_users' }),
    col.count(filter, { hint: 'unread_users' }),
  ]);
  return { items, count };
}

/** Circle names by id (for the digest mail). */
export async function circleNames(store: ReadStore, circleIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(circleIds)];
  const docs = await Promise.all(ids.map((id) => store.collection('circles').findOne({ _id: id }, { projection: { name: 1 } })));
  return new Map(docs.filter((d) => d !== null).map((d) => [d._id, String(d.name)]));
}
