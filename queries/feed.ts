import type { Doc, ReadStore } from '../projections/store/port.ts';

export function postView(d: Doc) {
  return {
    post_id: d._id,
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
  };
}

/** The public feed (or one room's), newest first, ghosted posts excluded. Index-served. */
export async function listPosts(store: ReadStore, opts: { roomSlug?: string; skip: number; limit: number }) {
  const filter: Record<string, unknown> = opts.roomSlug ? { room_slug: opts.roomSlug, hidden: false } : { hidden: false };
  const [items, counter] = await Promise.all([
    store.collection('posts').find(filter, { sort: { seq: -1 }, skip: opts.skip, limit: opts.limit }),
    store.collection('feed_counters').findOne({ _id: opts.roomSlug ? `room:${opts.roomSlug}` : 'all' }),
  ]);
  return { items, total: (counter?.visible as number | undefined) ?? 0 };
}

export function getPost(store: ReadStore, postId: string) {
  return store.collection('posts').findOne({ _id: postId });
}

/** A room a post may go to: curated, or a custom room that has become public, and not hidden. */
export async function findRoom(store: ReadStore, slug: string) {
  const room = await store.collection('rooms').findOne({ _id: slug });
  return room && room.public && !room.hidden ? room : null;
}

export async function publicRooms(store: ReadStore) {
  return store.collection('rooms').find({ public: true }, { sort: { agent_count: -1 } });
}
