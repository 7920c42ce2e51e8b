import type { AgentProfileUpdated, AgentRegistered } from '../events/agents.ts';
import type { PostPublished } from '../events/feed.ts';
import { capabilityLabel, CURATED_CAPABILITIES } from '../events/capabilities.ts';
import type { Projection } from './types.ts';

/** Posts and the feed counters. Request-path reads use the declared indexes only. */
export const postsProjection: Projection = {
  name: 'posts',
  collections: [
    {
      name: 'posts',
      indexes: [
        { name: 'feed', keys: { hidden: 1, seq: -1 } },
        { name: 'room_feed', keys: { room_slug: 1, hidden: 1, seq: -1 } },
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
      ],
    },
    { name: 'feed_counters', indexes: [] },
  ],
  handles: new Set(['PostPublished', 'AgentProfileUpdated']),
  async apply(event, ctx) {
    if (event.type === 'AgentProfileUpdated') {
      const d = event.data as AgentProfileUpdated['data'];
      if (d.name !== undefined) await ctx.collection('posts').updateMany({ agent_id: d.agent_id }, { $set: { agent_name: d.name } });
      return;
    }
    const d = event.data as PostPublished['data'];
    await ctx.collection('posts').applyAt(d.post_id, event.position, {
      $set: {
        post_id: d.post_id,
        agent_id: d.agent_id,
        agent_name: d.agent_name,
        title: d.title,
        body: d.body,
        post_type: d.post_type,
        room_slug: d.room_slug,
        hashtags: d.hashtags,
        published: true,
        hidden: false,
        created_at: d.published_at,
        published_at: d.published_at,
        seq: event.position,
        comment_count: 0,
        upvote_count: 0,
        reactions: { like: 0, insightful: 0, celebrate: 0 },
        flag_count: 0,
      },
    });
    const counters = ctx.collection('feed_counters');
    await counters.applyAt('all', event.position, { $inc: { visible: 1 } });
    if (d.room_slug) await counters.applyAt(`room:${d.room_slug}`, event.position, { $inc: { visible: 1 } });
  },
};

const ICONS = ['🧭', '🔗', '📈', '🤝', '🛰️', '💡', '🧩', '🚀', '🎯', '📣'];
const iconFor = (slug: string) => ICONS[[...slug].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % ICONS.length];

/** Promotion threshold: a custom capability becomes a public room once this many agents declare it. */
export const ROOM_PROMOTION_AGENTS = 3;

/** Rooms: the ten curated ones always exist; custom capability rooms turn public at 3 agents. */
export const roomsProjection: Projection = {
  name: 'rooms',
  collections: [{ name: 'rooms', indexes: [{ name: 'public_by_size', keys: { public: 1, agent_count: -1 } }] }],
  handles: new Set(['AgentRegistered', 'PostPublished']),
  async init(ctx) {
    const rooms = ctx.collection('rooms');
    for (const slug of CURATED_CAPABILITIES) {
      await rooms.updateOne(
        { _id: slug },
        { $setOnInsert: { ...roomDefaults(slug), curated: true, public: true, agent_count: 0, post_count: 0, _pos: 0 } },
        { upsert: true },
      );
    }
  },
  async apply(event, ctx) {
    const rooms = ctx.collection('rooms');
    if (event.type === 'PostPublished') {
      const p = event.data as PostPublished['data'];
      if (p.room_slug) await rooms.applyAt(p.room_slug, event.position, { $inc: { post_count: 1 }, $set: { last_post_at: p.published_at } });
      return;
    }
    const d = event.data as AgentRegistered['data'];
    for (const slug of d.capabilities) {
      const current = await rooms.findOne({ _id: slug });
      const count = ((current?.agent_count as number | undefined) ?? 0) + 1;
      const curated = (CURATED_CAPABILITIES as readonly string[]).includes(slug);
      await rooms.applyAt(slug, event.position, {
        $set: { agent_count: count, public: curated || count >= ROOM_PROMOTION_AGENTS },
        $setOnInsert: { ...roomDefaults(slug), curated, post_count: 0, created_at: d.registered_at },
      });
    }
  },
};

function roomDefaults(slug: string) {
  const label = capabilityLabel(slug);
  return {
    slug,
    label,
    description: `Agents working on ${label.toLowerCase()}: signals, intros and deals.`,
    icon: iconFor(slug),
    hidden: false,
    created_by: null,
  };
}
