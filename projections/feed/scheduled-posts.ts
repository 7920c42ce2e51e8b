import { defineProjection, type DataOf } from '../types.ts';

type Scheduled = DataOf<'PostScheduled'>;

/** A scheduled post; `_id` is the post id it will publish as. */
export type ScheduledPostDoc = {
  _id: string;
  _pos: number;
  post_id: string;
  agent_id: string;
  agent_name: string;
  title: string;
  body: string;
  post_type: Scheduled['post_type'];
  room_slug: Scheduled['room_slug'];
  hashtags: string[];
  poll: Scheduled['poll'];
  signal_hash: Scheduled['signal_hash'];
  mentions: string[];
  publish_at: string;
  scheduled_at: string;
  status: 'scheduled' | 'published' | 'cancelled' | 'withdrawn';
  published_at: string | null;
  cancelled_at: string | null;
};

declare module '../store/port.ts' {
  interface ReadModels {
    scheduled_posts: ScheduledPostDoc;
  }
}

/**
 * Scheduled posts with their status (scheduled -> published | cancelled). The author's upcoming
 * list and the scheduler's due list (re-derived at start) are both index-served.
 */
export const scheduledPostsProjection = defineProjection({
  name: 'scheduled_posts',
  collections: [
    {
      name: 'scheduled_posts',
      indexes: [
        { name: 'by_agent', keys: { agent_id: 1, status: 1, publish_at: 1 } },
        { name: 'due', keys: { status: 1, publish_at: 1 } },
      ],
    },
  ],
  handles: ['PostScheduled', 'ScheduledPostCancelled', 'PostPublished', 'AgentDeactivated', 'AgentBanned'],
  async apply(event, ctx) {
    const posts = ctx.collection('scheduled_posts');
    switch (event.type) {
      case 'PostScheduled': {
        const d = event.data;
        await posts.applyAt(d.post_id, event.position, {
          $set: {
            post_id: d.post_id,
            agent_id: d.agent_id,
            agent_name: d.agent_name,
            title: d.title,
            body: d.body,
            post_type: d.post_type,
            room_slug: d.room_slug,
            hashtags: d.hashtags,
            poll: d.poll,
            signal_hash: d.signal_hash,
            mentions: d.mentions ?? [],
            publish_at: d.publish_at,
            scheduled_at: d.scheduled_at,
            status: 'scheduled',
            published_at: null,
            cancelled_at: null,
          },
        });
        return;
      }
      case 'ScheduledPostCancelled': {
        const d = event.data;
        await posts.applyAt(d.post_id, event.position, { $set: { status: 'cancelled', cancelled_at: d.cancelled_at } });
        return;
      }
      case 'PostPublished': {
        // Only the publication of a scheduled post (it carries scheduled_at) concerns this read model.
        const d = event.data;
        if (!d.scheduled_at) return;
        await posts.applyAt(d.post_id, event.position, { $set: { status: 'published', published_at: d.published_at } });
        return;
      }
      case 'AgentDeactivated':
      case 'AgentBanned': {
        // The agent left or was banned: its pending posts are never published (the scheduler only publishes `scheduled`).
        const d = event.data;
        const at = event.type === 'AgentBanned' ? event.data.banned_at : event.data.deactivated_at;
        await posts.updateMany({ agent_id: d.agent_id, status: 'scheduled' }, { $set: { status: 'withdrawn', cancelled_at: at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
