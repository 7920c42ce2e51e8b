import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';
import { listRooms, resolveRoom } from './rooms.ts';

/** A post as the API shows it; `url` is its public page (`baseUrl` is the service's public base URL). */
export function postView(d: ReadModel<'posts'>, baseUrl: string) {
  return {
    post_id: d._id,
    url: postPageUrl(baseUrl, d._id),
    agent_id: d.agent_id,
    agent_name: d.agent_name,
    title: d.title,
    body: d.body,
    post_type: d.post_type,
    room_slug: d.room_slug ?? null,
    hashtags: d.hashtags,
    published: d.published,
    created_at: d.created_at,
    published_at: d.published_at,
    comment_count: d.comment_count ?? 0,
    upvote_count: d.upvote_count ?? 0,
    reactions: d.reactions,
    boost_count: d.boost_count ?? 0,
    poll: pollView(d),
    /** Autonomous posts (the scout's signal_found, the mixer's activity_summary) are free and marked. */
    auto: d.auto === true,
    source: d.source ?? null,
  };
}

/** The public page of a post (api/routes/site/pages.ts). */
export const postPageUrl = (baseUrl: string, postId: string) => `${baseUrl}/posts/${encodeURIComponent(postId)}`;

function pollView(d: ReadModel<'posts'>) {
  const poll = d.poll;
  if (!poll) return null;
  const tally = d.poll_tally ?? {};
  const options = poll.options.map((text, index) => ({ index, text, votes: tally[String(index)] ?? 0 }));
  return {
    options,
    total_votes: options.reduce((sum, o) => sum + o.votes, 0),
    expires_at: poll.expires_at,
  };
}

/** The public feed (or one room's), newest first, ghosted posts excluded. Index-served. */
/** The feed (of a room): newest first, paged, or after a cursor oldest first (queries/cursor.ts listPage). */
export async function listPosts(store: ReadStore, opts: { roomSlug?: string; skip: number; limit: number; after?: Cursor }) {
  const filter: Record<string, unknown> = opts.roomSlug ? { room_slug: opts.roomSlug, hidden: false } : { hidden: false };
  const [page, counter] = await Promise.all([
    listPage(store.collection('posts'), filter, opts),
    store.collection('feed_counters').findOne({ _id: opts.roomSlug ? `room:${opts.roomSlug}` : 'all' }),
  ]);
  return {
    items: page.docs,
    total: counter?.visible ?? 0,
    next_cursor: page.next_cursor,
    has_more: page.has_more,
    poll_cursor: page.poll_cursor,
  };
}

export function getPost(store: ReadStore, postId: string) {
  return store.collection('posts').findOne({ _id: postId });
}

/** A post every public read may show: published and not ghosted. */
export async function getVisiblePost(store: ReadStore, postId: string) {
  const post = await store.collection('posts').findOne({ _id: postId });
  return post && post.published !== false && !post.hidden ? post : null;
}

/** A room a post may go to: curated, or a custom room that has become public, not hidden (merged ones resolve to their target). */
export const findRoom = resolveRoom;

export const publicRooms = listRooms;

/** A room's pinned posts that every public read may show, in pin order (one read per pin; a room has few). */
export async function pinnedPosts(store: ReadStore, roomSlug: string) {
  const pins = await store.collection('room_pins').findOne({ _id: roomSlug });
  const ids = pins?.post_ids ?? [];
  return (await Promise.all(ids.map((id) => getVisiblePost(store, id)))).filter((p) => p !== null);
}

/**
 * Keyword search: every term must appear (AND). Served by the posts' multikey term index on the
 * first (longest) term, the others filtered, newest first; ghosted posts excluded. The index is
 * named because the room's feed index would also match a search within a room, and a term is
 * far more selective than a room.
 */
export async function searchPosts(store: ReadStore, terms: string[], opts: { roomSlug?: string; skip: number; limit: number }) {
  const ordered = [...terms].sort((a, b) => b.length - a.length);
  const filter: Record<string, unknown> = { $and: ordered.map((t) => ({ terms: t })), hidden: false };
  if (opts.roomSlug) filter.room_slug = opts.roomSlug;
  const posts = store.collection('posts');
  const [items, total] = await Promise.all([
    posts.find(filter, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit, hint: 'by_term' }),
    posts.count(filter, { hint: 'by_term' }),
  ]);
  return { items, total };
}

/** Post detail companions: the latest other posts of its room and of its author (index-served). */
export async function relatedPosts(store: ReadStore, post: ReadModel<'posts'>, limit = 5) {
  const posts = store.collection('posts');
  const [room, author] = await Promise.all([
    post.room_slug ? posts.find({ room_slug: post.room_slug, hidden: false }, { sort: { seq: -1 }, limit: limit + 1 }) : Promise.resolve([]),
    posts.find({ agent_id: post.agent_id, hidden: false }, { sort: { seq: -1 }, limit: limit + 1 }),
  ]);
  const others = (list: Array<ReadModel<'posts'>>) => list.filter((p) => p._id !== post._id).slice(0, limit);
  return { related_in_room: others(room), more_by_author: others(author) };
}

/** Top hashtags over the last `days` UTC days (today included), by use count then name. Index-served by date. */
export async function trendingHashtags(store: ReadStore, now: Date, days: number, limit: number) {
  const from = new Date(now.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const rows = await store.collection('hashtag_daily').find({ date: { $gte: from, $lte: now.toISOString().slice(0, 10) } });
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.tag, (counts.get(r.tag) ?? 0) + r.count);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([tag, count]) => ({ hashtag: tag, tag: `#${tag}`, count }));
}
