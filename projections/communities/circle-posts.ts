import type { CircleReaction } from '../../events/communities.ts';
import type { Collection } from '../store/port.ts';
import { defineProjection, type DataOf } from '../types.ts';

/** A post in a circle; `_id` is the post id. Deleted or hidden: `live_circle` null (out of every list). */
export type CirclePostDoc = DataOf<'CirclePostPublished'> & {
  _id: string;
  _pos: number;
  live_circle: string | null;
  /** `<circle>|<tag>` per hashtag, for the by-tag list. */
  tag_keys: string[];
  reply_count: number;
  reactions: Record<CircleReaction, number>;
  edited_at: string | null;
  deleted_at?: string;
  hidden?: boolean;
  hidden_at?: string | null;
  seq: number;
};

/** A reply to a circle post; `_id` is the reply id. */
export type CircleReplyDoc = DataOf<'CircleReplyAdded'> & {
  _id: string;
  _pos: number;
  reactions: Record<CircleReaction, number>;
  hidden?: boolean;
  seq: number;
};

/** A circle's activity; `_id` is the circle id. */
export type CircleActivityDoc = {
  _id: string;
  _pos: number;
  last_activity_at: string;
  post_count: number;
};

/** A hashtag's uses in a circle on one UTC day; `_id` is `<circle>|<tag>|<day>`. */
export type CircleTagDayDoc = {
  _id: string;
  circle_id: string;
  tag: string;
  day: string;
  count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    circle_posts: CirclePostDoc;
    circle_replies: CircleReplyDoc;
    circle_activity: CircleActivityDoc;
    circle_tag_days: CircleTagDayDoc;
  }
}

const tagKeys = (circleId: string, tags: readonly string[]) => tags.map((t) => `${circleId}|${t}`);
const NO_REACTIONS = { like: 0, insightful: 0, celebrate: 0, support: 0, curious: 0 };

/** Moves a circle's per-day hashtag counters by `by`. */
async function countTags(tagDays: Collection<CircleTagDayDoc>, circleId: string, tags: readonly string[], day: string, by: number): Promise<void> {
  for (const tag of tags)
    await tagDays.updateOne({ _id: `${circleId}|${tag}|${day}` }, { $set: { circle_id: circleId, tag, day }, $inc: { count: by } }, { upsert: true });
}

/**
 * Circle posts and replies as the circle pages list them: a circle's posts newest first (index
 * `by_circle`), by tag (`by_tag`, one key per circle and tag), since a time (`by_circle_time`);
 * reaction counts on each post and reply; the circle's last activity and hashtags per day (for
 * trending over 30 days). A deleted post keeps its document with `live_circle` null.
 */
export const circlePostsProjection = defineProjection({
  name: 'circle-posts',
  collections: [
    {
      name: 'circle_posts',
      indexes: [
        { name: 'by_circle', keys: { live_circle: 1, seq: -1 } },
        { name: 'by_tag', keys: { tag_keys: 1, seq: -1 } },
        { name: 'by_circle_time', keys: { live_circle: 1, published_at: 1 } },
      ],
    },
    { name: 'circle_replies', indexes: [{ name: 'by_post', keys: { post_id: 1, seq: 1 } }] },
    { name: 'circle_activity', indexes: [] },
    { name: 'circle_tag_days', indexes: [{ name: 'by_circle_day', keys: { circle_id: 1, day: 1 } }] },
  ],
  handles: ['CirclePostPublished', 'CirclePostEdited', 'CirclePostDeleted', 'CircleReplyAdded', 'CircleReactionToggled', 'CircleContentModerated'],
  async apply(event, ctx) {
    const posts = ctx.collection('circle_posts');
    const replies = ctx.collection('circle_replies');
    const activity = ctx.collection('circle_activity');
    const tagDays = ctx.collection('circle_tag_days');
    switch (event.type) {
      case 'CirclePostPublished': {
        const d = event.data;
        const fresh = await posts.applyAt(d.post_id, event.position, {
          $set: Object.assign({}, d, {
            live_circle: d.circle_id,
            tag_keys: tagKeys(d.circle_id, d.hashtags),
            reply_count: 0,
            reactions: NO_REACTIONS,
            edited_at: null,
            seq: event.position,
          }),
        });
        if (!fresh) return;
        await countTags(tagDays, d.circle_id, d.hashtags, d.published_at.slice(0, 10), 1);
        await activity.applyAt(d.circle_id, event.position, { $set: { last_activity_at: d.published_at }, $inc: { post_count: 1 } });
        return;
      }
      case 'CirclePostEdited': {
        const d = event.data;
        const before = await posts.findOne({ _id: d.post_id });
        if (!before || before._pos >= event.position) return;
        const day = before.published_at.slice(0, 10);
        await countTags(tagDays, d.circle_id, before.hashtags ?? [], day, -1);
        await countTags(tagDays, d.circle_id, d.hashtags, day, 1);
        await posts.applyAt(d.post_id, event.position, {
          $set: { content: d.content, intent: d.intent, hashtags: d.hashtags, tag_keys: tagKeys(d.circle_id, d.hashtags), edited_at: d.edited_at },
        });
        return;
      }
      case 'CirclePostDeleted': {
        const d = event.data;
        const before = await posts.findOne({ _id: d.post_id });
        if (!before || before._pos >= event.position) return;
        await countTags(tagDays, d.circle_id, before.hashtags ?? [], before.published_at.slice(0, 10), -1);
        await posts.applyAt(d.post_id, event.position, { $set: { live_circle: null, tag_keys: [], deleted_at: d.deleted_at } });
        await activity.applyAt(d.circle_id, event.position, { $inc: { post_count: -1 } });
        return;
      }
      case 'CircleReplyAdded': {
        const d = event.data;
        if (!(await replies.applyAt(d.reply_id, event.position, { $set: Object.assign({}, d, { reactions: NO_REACTIONS, seq: event.position }) }))) return;
        await posts.applyAt(d.post_id, event.position, { $inc: { reply_count: 1 } });
        await activity.applyAt(d.circle_id, event.position, { $set: { last_activity_at: d.replied_at }, $inc: { post_count: 0 } });
        return;
      }
      case 'CircleContentModerated': {
        // A community admin hid or restored a post (it leaves or rejoins the circle's lists, tags
        // and counts, as a deletion does) or a reply (it leaves or rejoins the post's replies).
        const d = event.data;
        const hide = d.action === 'hide';
        if (d.target_type === 'reply') {
          const reply = await replies.findOne({ _id: d.target_id });
          if (!reply || reply._pos >= event.position) return;
          await replies.applyAt(d.target_id, event.position, { $set: { hidden: hide } });
          await posts.applyAt(d.post_id, event.position, { $inc: { reply_count: hide ? -1 : 1 } });
          return;
        }
        const before = await posts.findOne({ _id: d.post_id });
        if (!before || before._pos >= event.position || typeof before.deleted_at === 'string') return;
        const day = before.published_at.slice(0, 10);
        const tags = before.hashtags ?? [];
        await countTags(tagDays, d.circle_id, tags, day, hide ? -1 : 1);
        await posts.applyAt(
          d.post_id,
          event.position,
          hide
            ? { $set: { live_circle: null, tag_keys: [], hidden: true, hidden_at: d.at } }
            : { $set: { live_circle: d.circle_id, tag_keys: tagKeys(d.circle_id, tags), hidden: false, hidden_at: null } },
        );
        await activity.applyAt(d.circle_id, event.position, { $inc: { post_count: hide ? -1 : 1 } });
        return;
      }
      case 'CircleReactionToggled': {
        const d = event.data;
        const target = d.target_type === 'post' ? posts : replies;
        await target.applyAt(d.target_id, event.position, { $inc: { [`reactions.${d.reaction}`]: d.on ? 1 : -1 } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
