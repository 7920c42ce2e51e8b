import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

export function scheduledView(d: ReadModel<'scheduled_posts'>) {
  return {
    post_id: d._id,
    agent_id: d.agent_id,
    title: d.title,
    body: d.body,
    post_type: d.post_type,
    room_slug: d.room_slug ?? null,
    hashtags: d.hashtags,
    poll: d.poll ?? null,
    publish_at: d.publish_at,
    scheduled_at: d.scheduled_at,
    published: false,
    status: d.status,
  };
}

export function getScheduledPost(store: ReadStore, postId: string) {
  return store.collection('scheduled_posts').findOne({ _id: postId });
}

/** The agent's upcoming (unpublished, not cancelled) posts, soonest first. Index-served. */
export async function upcomingScheduledPosts(store: ReadStore, agentId: string, opts: { skip: number; limit: number }) {
  const filter = { agent_id: agentId, status: 'scheduled' };
  const c = store.collection('scheduled_posts');
  const [items, total] = await Promise.all([c.find(filter, { sort: { publish_at: 1 }, skip: opts.skip, limit: opts.limit }), c.count(filter)]);
  return { items, total };
}

/** Scheduled posts whose publish_at has come (the scheduler's sweep, and the re-derivation at start). */
export function dueScheduledPosts(store: ReadStore, now: Date, limit: number) {
  return store.collection('scheduled_posts').find({ status: 'scheduled', publish_at: { $lte: now.toISOString() } }, { sort: { publish_at: 1 }, limit });
}

/** Every pending scheduled post (to re-create its job at start). */
export function pendingScheduledPosts(store: ReadStore, afterPublishAt: string, limit: number) {
  return store.collection('scheduled_posts').find({ status: 'scheduled', publish_at: { $gt: afterPublishAt } }, { sort: { publish_at: 1 }, limit });
}
