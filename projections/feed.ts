import type { AgentProfileUpdated, AgentRegistered } from '../events/agents.ts';
import type {
  AgentGhosted,
  CommentAdded,
  PollVoted,
  PostFlagged,
  PostGhosted,
  PostPublished,
  PostReactionToggled,
  RoomHidden,
  RoomMerged,
  SignalBoosted,
} from '../events/feed.ts';
import { capabilityLabel, CURATED_CAPABILITIES } from '../events/capabilities.ts';
import { searchTerms } from '../events/feed.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import type { Doc } from './store/port.ts';
import type { Projection, ProjectionContext } from './types.ts';

/** Engagement on a post: each event touches only its post's document (position-guarded). */
async function applyEngagement(event: RecordedEvent, ctx: ProjectionContext): Promise<void> {
  const posts = ctx.collection('posts');
  switch (event.type) {
    case 'CommentAdded': {
      const d = event.data as CommentAdded['data'];
      await posts.applyAt(d.post_id, event.position, { $inc: { comment_count: 1 } });
      return;
    }
    case 'PostReactionToggled': {
      const d = event.data as PostReactionToggled['data'];
      await posts.applyAt(d.post_id, event.position, { $inc: { [`reactions.${d.reaction}`]: d.active ? 1 : -1 } });
      return;
    }
    case 'PollVoted': {
      const d = event.data as PollVoted['data'];
      await posts.applyAt(d.post_id, event.position, { $inc: { [`poll_tally.${d.option_index}`]: 1 } });
      return;
    }
    case 'SignalBoosted': {
      const d = event.data as SignalBoosted['data'];
      await posts.applyAt(d.post_id, event.position, { $inc: { boost_count: 1 } });
      return;
    }
    case 'PostFlagged': {
      const d = event.data as PostFlagged['data'];
      await posts.applyAt(d.post_id, event.position, { $set: { flag_count: d.flag_count } });
    }
  }
}

/** Takes posts out of the visible feed counters (one position-guarded update per counter). */
async function hideFromCounters(ctx: ProjectionContext, position: number, hidden: Doc[]): Promise<void> {
  if (hidden.length === 0) return;
  const counters = ctx.collection('feed_counters');
  await counters.applyAt('all', position, { $inc: { visible: -hidden.length } });
  const perRoom = new Map<string, number>();
  for (const p of hidden) if (typeof p.room_slug === 'string') perRoom.set(p.room_slug, (perRoom.get(p.room_slug) ?? 0) + 1);
  for (const [slug, n] of perRoom) await counters.applyAt(`room:${slug}`, position, { $inc: { visible: -n } });
}

/** Ghosting (5 flags) and room merges: the post documents and the counters move together. */
async function applyModeration(event: RecordedEvent, ctx: ProjectionContext): Promise<void> {
  const posts = ctx.collection('posts');
  switch (event.type) {
    case 'PostGhosted': {
      const d = event.data as PostGhosted['data'];
      const post = await posts.findOne({ _id: d.post_id });
      if (!post || post.hidden) return;
      if (await posts.applyAt(d.post_id, event.position, { $set: { hidden: true, ghosted: true } })) await hideFromCounters(ctx, event.position, [post]);
      return;
    }
    case 'AgentGhosted': {
      const d = event.data as AgentGhosted['data'];
      const marker = ctx.collection('posts_ghosted_agents');
      if (!(await marker.applyAt(d.agent_id, event.position, { $set: { ghosted_at: d.ghosted_at } }))) return;
      const visible = await posts.find({ agent_id: d.agent_id, hidden: false }, { projection: { _id: 1, room_slug: 1 } });
      for (const p of visible) await posts.applyAt(p._id, event.position, { $set: { hidden: true } });
      await hideFromCounters(ctx, event.position, visible);
      return;
    }
    case 'RoomMerged': {
      const d = event.data as RoomMerged['data'];
      const counters = ctx.collection('feed_counters');
      const moved = await counters.findOne({ _id: `room:${d.room_slug}` });
      const n = (moved?.visible as number | undefined) ?? 0;
      await posts.updateMany({ room_slug: d.room_slug }, { $set: { room_slug: d.into } });
      if (await counters.applyAt(`room:${d.room_slug}`, event.position, { $set: { visible: 0 } })) {
        await counters.applyAt(`room:${d.into}`, event.position, { $inc: { visible: n } });
      }
    }
  }
}

const ENGAGEMENT = ['CommentAdded', 'PostReactionToggled', 'PollVoted', 'SignalBoosted', 'PostFlagged'];
const MODERATION = ['PostGhosted', 'AgentGhosted', 'RoomMerged'];

/**
 * Posts and the feed counters. Request-path reads use the declared indexes only. Keyword search
 * (legacy `GET /api/agent/posts?q=`) is served from the posts themselves: each carries its terms
 * (title first, then hashtags, then the body, at most 32) under a multikey index, so hiding,
 * ghosting and room merges need no second read model to follow them.
 */
export const postsProjection: Projection = {
  name: 'posts',
  collections: [
    {
      name: 'posts',
      indexes: [
        { name: 'by_term', keys: { terms: 1, seq: -1 } },
        { name: 'feed', keys: { hidden: 1, seq: -1 } },
        { name: 'room_feed', keys: { room_slug: 1, hidden: 1, seq: -1 } },
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
      ],
    },
    { name: 'feed_counters', indexes: [] },
    { name: 'posts_ghosted_agents', indexes: [] },
  ],
  handles: new Set(['PostPublished', 'AgentProfileUpdated', ...ENGAGEMENT, ...MODERATION]),
  async apply(event, ctx) {
    if (ENGAGEMENT.includes(event.type)) return applyEngagement(event, ctx);
    if (MODERATION.includes(event.type)) return applyModeration(event, ctx);
    if (event.type === 'AgentProfileUpdated') {
      const d = event.data as AgentProfileUpdated['data'];
      if (d.name !== undefined) await ctx.collection('posts').updateMany({ agent_id: d.agent_id }, { $set: { agent_name: d.name } });
      return;
    }
    const d = event.data as PostPublished['data'];
    // A ghosted agent's later posts are ghosted from the start.
    const hidden = (await ctx.collection('posts_ghosted_agents').findOne({ _id: d.agent_id })) !== null;
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
        hidden,
        created_at: d.scheduled_at ?? d.published_at,
        published_at: d.published_at,
        seq: event.position,
        comment_count: 0,
        upvote_count: 0,
        reactions: { like: 0, insightful: 0, celebrate: 0 },
        flag_count: 0,
        boost_count: 0,
        poll: d.poll ?? null,
        poll_tally: {},
        auto: d.auto === true,
        source: d.source ?? null,
        terms: searchTerms(`${d.title} ${d.hashtags.join(' ')} ${d.body}`),
      },
    });
    if (hidden) return;
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
  handles: new Set(['AgentRegistered', 'PostPublished', 'RoomMerged', 'RoomHidden']),
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
    if (event.type === 'RoomHidden') {
      const d = event.data as RoomHidden['data'];
      await rooms.applyAt(d.room_slug, event.position, { $set: { hidden: true, hidden_at: d.hidden_at } });
      return;
    }
    if (event.type === 'RoomMerged') {
      const d = event.data as RoomMerged['data'];
      const source = await rooms.findOne({ _id: d.room_slug });
      if (await rooms.applyAt(d.room_slug, event.position, { $set: { merged_into: d.into, merged_at: d.merged_at } })) {
        await rooms.applyAt(d.into, event.position, {
          $addToSet: { merged_from: d.room_slug },
          $inc: { post_count: (source?.post_count as number | undefined) ?? 0 },
        });
      }
      return;
    }
    const d = event.data as AgentRegistered['data'];
    for (const slug of d.capabilities) {
      const curated = (CURATED_CAPABILITIES as readonly string[]).includes(slug);
      // The first agent to declare a custom capability is its room's creator (it may pin there).
      const onInsert = { ...roomDefaults(slug), curated, post_count: 0, created_at: d.registered_at, created_by: curated ? null : d.agent_id };
      if (curated) {
        // Always public, so the new count need not be known: one write, no read.
        await rooms.applyAt(slug, event.position, { $inc: { agent_count: 1 }, $set: { public: true }, $setOnInsert: onInsert });
        continue;
      }
      const current = await rooms.findOne({ _id: slug }, { projection: { agent_count: 1 } });
      const count = ((current?.agent_count as number | undefined) ?? 0) + 1;
      await rooms.applyAt(slug, event.position, {
        $set: { agent_count: count, public: count >= ROOM_PROMOTION_AGENTS },
        $setOnInsert: onInsert,
      });
    }
  },
};

/** The descriptive fields of a room, set when it is created. */
export function roomDefaults(slug: string) {
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
