import { notFound } from '../../events/kernel/errors.ts';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Caller } from './communities.ts';
import { communityAdmins, getCircle, isCircleMember, isCommunityMember, isSuper } from './communities.ts';

export interface CircleAccess {
  circle: ReadModel<'circles'>;
  member: boolean;
  community_member: boolean;
  admin: boolean;
}

/**
 * The circle as the caller may see it (shared DECISIONS): public to anyone, community to the
 * community's members, private to the circle's members; community admins and super admins see
 * every circle of their communities. Anything else is 404, never 403, so a private circle's
 * existence does not leak. `caller` null: an anonymous reader (public circles only).
 */
export async function visibleCircle(store: ReadStore, circleId: string, caller: Caller | null): Promise<CircleAccess> {
  const circle = await getCircle(store, circleId);
  if (!circle) throw notFound('Circle', 'circle_not_found');
  if (!caller) {
    if (circle.visibility !== 'public') throw notFound('Circle', 'circle_not_found');
    return { circle, member: false, community_member: false, admin: false };
  }
  const communityId = String(circle.community_id);
  const [member, communityMember, admins] = await Promise.all([
    isCircleMember(store, circleId, caller.userId),
    isCommunityMember(store, communityId, caller.userId),
    communityAdmins(store, communityId),
  ]);
  const admin = isSuper(caller) || (admins ?? []).includes(caller.userId);
  const visible = admin || member || circle.visibility === 'public' || (circle.visibility === 'community' && communityMember);
  if (!visible) throw notFound('Circle', 'circle_not_found');
  return { circle, member, community_member: communityMember, admin };
}

/** A circle's posts, newest first (skip/limit), optionally of one hashtag: one index range. */
export function circlePosts(store: ReadStore, circleId: string, opts: { skip: number; limit: number; tag?: string }) {
  const col = store.collection('circle_posts');
  if (opts.tag) return col.find({ tag_keys: `${circleId}|${opts.tag}` }, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit, hint: 'by_tag' });
  return col.find({ live_circle: circleId }, { sort: { live_circle: 1, seq: -1 }, skip: opts.skip, limit: opts.limit, hint: 'by_circle' });
}

export async function getCirclePost(store: ReadStore, postId: string) {
  const p = await store.collection('circle_posts').findOne({ _id: postId });
  return p && typeof p.live_circle === 'string' ? p : null;
}

export const getCircleReply = (store: ReadStore, replyId: string) => store.collection('circle_replies').findOne({ _id: replyId });

/** Posts published after `since` (index `by_circle_time`), newest first, at most `limit`. */
export async function postsSince(store: ReadStore, circleId: string, since: string, limit = 50) {
  const col = store.collection('circle_posts');
  const filter = { live_circle: circleId, published_at: { $gt: since } };
  const [count, latest] = await Promise.all([
    col.count(filter, { hint: 'by_circle_time' }),
    col.find(filter, { sort: { live_circle: 1, published_at: -1 }, limit, hint: 'by_circle_time' }),
  ]);
  return { count, latest };
}

/** Top hashtags of a circle over the days from `sinceDay` (inclusive): per-day counts summed. */
export async function trendingTags(store: ReadStore, circleId: string, sinceDay: string, limit = 10) {
  const days = await store.collection('circle_tag_days').find({ circle_id: circleId, day: { $gte: sinceDay } }, { hint: 'by_circle_day' });
  const totals = new Map<string, number>();
  for (const d of days) totals.set(String(d.tag), (totals.get(String(d.tag)) ?? 0) + Number(d.count ?? 0));
  return [...totals]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([tag, count]) => ({ tag, count }));
}

export function postReplies(store: ReadStore, postId: string, opts: { skip: number; limit: number }) {
  // A reply a community admin hid is left out (docs/MODERATION.md).
  return store
    .collection('circle_replies')
    .find({ post_id: postId, hidden: { $ne: true } }, { sort: { post_id: 1, seq: 1 }, skip: opts.skip, limit: opts.limit, hint: 'by_post' });
}

export function circleMembers(store: ReadStore, circleId: string, opts: { skip: number; limit: number }) {
  return store
    .collection('circle_members')
    .find({ live_circle: circleId }, { sort: { live_circle: 1, seq: 1 }, skip: opts.skip, limit: opts.limit, hint: 'by_circle' });
}
export const circleMemberCount = (store: ReadStore, circleId: string) =>
  store.collection('circle_members').count({ live_circle: circleId }, { hint: 'by_circle' });

/** Mention autocomplete: members of the circle whose name starts with `q` (index range on the lower-cased name). */
export function searchCircleMembers(store: ReadStore, circleId: string, q: string, limit: number) {
  const prefix = q.toLowerCase();
  const filter = prefix ? { live_circle: circleId, name_lower: { $gte: prefix, $lt: `${prefix}\uffff` } } : { live_circle: circleId };
  return store.collection('circle_members').find(filter, { sort: { live_circle: 1, name_lower: 1 }, limit, hint: 'by_circle_name' });
}
/** Every member of the circle, for resolving `@name` mentions (bounded). */
export const mentionCandidates = (store: ReadStore, circleId: string, names: string[]) =>
  Promise.all(names.map((n) => searchCircleMembers(store, circleId, n, 20))).then((lists) => lists.flat());

export async function userCircles(store: ReadStore, userId: string) {
  return store.collection('circle_members').find({ live_user: userId }, { sort: { live_user: 1, seq: -1 }, limit: 200, hint: 'by_user' });
}
export const circleActivity = (store: ReadStore, circleId: string) => store.collection('circle_activity').findOne({ _id: circleId });
export const unreadInCircle = (store: ReadStore, userId: string, circleId: string) =>
  store.collection('circle_notifications').count({ user_id: userId, circle_id: circleId, read: false }, { hint: 'unread_by_circle' });

export async function circleNotifications(store: ReadStore, userId: string, opts: { skip: number; limit: number }) {
  const col = store.collection('circle_notifications');
  const [items, unread] = await Promise.all([
    col.find({ user_id: userId }, { sort: { user_id: 1, seq: -1 }, skip: opts.skip, limit: opts.limit, hint: 'by_user' }),
    col.count({ user_id: userId, read: false }, { hint: 'unread' }),
  ]);
  return { items, unread };
}
export const unreadCount = (store: ReadStore, userId: string) =>
  store.collection('circle_notifications').count({ user_id: userId, read: false }, { hint: 'unread' });

/** A circle post as responses show it (a just-published post has no stored fields beyond its event's yet). */
export function postView(
  p: Omit<ReadModel<'circle_posts'>, '_pos' | 'live_circle' | 'tag_keys' | 'seq' | 'edited_at' | 'reactions'> &
    Partial<Pick<ReadModel<'circle_posts'>, 'edited_at' | 'reactions'>>,
) {
  return {
    post_id: p._id,
    circle_id: p.circle_id,
    community_id: p.community_id,
    author_id: p.author_id,
    author_name: p.author_name,
    content: p.content,
    intent: p.intent,
    link_url: p.link_url ?? null,
    hashtags: p.hashtags ?? [],
    mentions: p.mentions ?? [],
    reply_count: p.reply_count ?? 0,
    reactions: p.reactions ?? {},
    published_at: p.published_at,
    edited_at: p.edited_at ?? null,
  };
}
export function replyView(r: ReadModel<'circle_replies'>) {
  return {
    reply_id: r._id,
    post_id: r.post_id,
    parent_reply_id: r.parent_reply_id ?? null,
    author_id: r.author_id,
    author_name: r.author_name,
    content: r.content,
    mentions: r.mentions ?? [],
    reactions: r.reactions ?? {},
    replied_at: r.replied_at,
  };
}
export function notificationView(n: ReadModel<'circle_notifications'>) {
  return {
    notification_id: n._id,
    kind: n.kind,
    circle_id: n.circle_id ?? null,
    post_id: n.post_id ?? null,
    reply_id: n.reply_id ?? null,
    request_id: n.request_id ?? null,
    actor_id: n.actor_id ?? null,
    actor_name: n.actor_name ?? null,
    admin_note: n.admin_note ?? null,
    text: n.text ?? '',
    read: n.read === true,
    created_at: n.created_at,
  };
}
