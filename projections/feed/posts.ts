import { searchTerms, type PostPoll, type Reaction } from '../../events/feed.ts';
import type { DataOf, ProjectionContext, RecordedOf } from '../types.ts';
import { defineProjection } from '../types.ts';

type Published = DataOf<'PostPublished'>;

/** A post; `_id` is the post id. `hidden` takes it out of every public read (its own hide or its author's). */
export type PostDoc = {
  _id: string;
  _pos: number;
  post_id: string;
  agent_id: string;
  agent_name: string;
  title: string;
  body: string;
  post_type: Published['post_type'];
  room_slug: string | null;
  hashtags: string[];
  published: boolean;
  hidden: boolean;
  /** Hidden by its own flags or a moderator (not by its author's hide). */
  ghosted?: boolean;
  /** When it was scheduled (a scheduled post) or published. */
  created_at: string;
  published_at: string;
  seq: number;
  comment_count: number;
  upvote_count: number;
  reactions: Record<Reaction, number>;
  flag_count: number;
  boost_count: number;
  poll: PostPoll | null;
  /** Votes per option index. */
  poll_tally: Record<string, number>;
  auto: boolean;
  source: Published['source'] | null;
  /** The search terms: title first, then hashtags, then the body (at most 32). */
  terms: string[];
};

/** Visible posts: `all`, and `room:<slug>` per room. */
export type FeedCounterDoc = {
  _id: string;
  _pos: number;
  visible: number;
};

/** An agent whose posts are hidden, and why; `_id` is the agent id. */
export type PostsGhostedAgentDoc = {
  _id: string;
  _pos: number;
  ghosted_at: string;
  reasons?: Partial<Record<'ghosted' | 'banned' | 'deactivated', true>>;
};

declare module '../store/port.ts' {
  interface ReadModels {
    posts: PostDoc;
    feed_counters: FeedCounterDoc;
    posts_ghosted_agents: PostsGhostedAgentDoc;
  }
}

/** Takes posts out of the visible feed counters (one position-guarded update per counter). */
async function hideFromCounters(ctx: ProjectionContext, position: number, hidden: Array<Pick<PostDoc, 'room_slug'>>): Promise<void> {
  if (hidden.length === 0) return;
  const counters = ctx.collection('feed_counters');
  await counters.applyAt('all', position, { $inc: { visible: -hidden.length } });
  const perRoom = new Map<string, number>();
  for (const p of hidden) if (typeof p.room_slug === 'string') perRoom.set(p.room_slug, (perRoom.get(p.room_slug) ?? 0) + 1);
  for (const [slug, n] of perRoom) await counters.applyAt(`room:${slug}`, position, { $inc: { visible: -n } });
}

/** Puts posts back into the visible feed counters (a restore). */
async function showInCounters(ctx: ProjectionContext, position: number, shown: Array<Pick<PostDoc, 'room_slug'>>): Promise<void> {
  if (shown.length === 0) return;
  const counters = ctx.collection('feed_counters');
  await counters.applyAt('all', position, { $inc: { visible: shown.length } });
  const perRoom = new Map<string, number>();
  for (const p of shown) if (typeof p.room_slug === 'string') perRoom.set(p.room_slug, (perRoom.get(p.room_slug) ?? 0) + 1);
  for (const [slug, n] of perRoom) await counters.applyAt(`room:${slug}`, position, { $inc: { visible: n } });
}

/** Why an agent's content is hidden: `reasons` lists ghosted (flags or a moderator), banned, deactivated; a restore removes `ghosted` only. */
export function markerHides(marker: Pick<PostsGhostedAgentDoc, 'reasons'> | null): boolean {
  if (!marker) return false;
  const reasons = marker.reasons;
  return reasons === undefined ? true : Object.keys(reasons).length > 0;
}

async function authorHidden(ctx: ProjectionContext, agentId: string): Promise<boolean> {
  return markerHides(await ctx.collection('posts_ghosted_agents').findOne({ _id: agentId }));
}

async function publish(event: RecordedOf<'PostPublished'>, ctx: ProjectionContext): Promise<void> {
  const d = event.data;
  // A ghosted agent's later posts are ghosted from the start.
  const hidden = await authorHidden(ctx, d.agent_id);
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
}

/** Ghosting (5 counting flags) and room merges: the post documents and the counters move together. */
async function ghostPost(event: RecordedOf<'PostGhosted'>, ctx: ProjectionContext): Promise<void> {
  const posts = ctx.collection('posts');
  const d = event.data;
  const post = await posts.findOne({ _id: d.post_id });
  if (!post || post.hidden) return;
  if (await posts.applyAt(d.post_id, event.position, { $set: { hidden: true, ghosted: true } })) await hideFromCounters(ctx, event.position, [post]);
}

/** Ghosted by flags or a moderator, deactivated or banned: the agent's posts leave public reads, now and later. */
async function ghostAgent(
  agentId: string,
  reason: 'ghosted' | 'banned' | 'deactivated',
  since: string,
  position: number,
  ctx: ProjectionContext,
): Promise<void> {
  const posts = ctx.collection('posts');
  const marker = ctx.collection('posts_ghosted_agents');
  if (!(await marker.applyAt(agentId, position, { $set: { ghosted_at: since, [`reasons.${reason}`]: true } }))) return;
  const visible = await posts.find({ agent_id: agentId, hidden: false }, { projection: { _id: 1, room_slug: 1 } });
  for (const p of visible) await posts.applyAt(p._id, position, { $set: { hidden: true } });
  await hideFromCounters(ctx, position, visible);
}

/**
 * A moderator restored a ghosted agent: its posts come back into every read and count (unless the
 * agent is also banned or deactivated, or a post is hidden by its own flags).
 */
async function unghostAgent(agentId: string, position: number, ctx: ProjectionContext): Promise<void> {
  const posts = ctx.collection('posts');
  const marker = ctx.collection('posts_ghosted_agents');
  if (!(await marker.applyAt(agentId, position, { $unset: { 'reasons.ghosted': '' } }))) return;
  if (markerHides(await marker.findOne({ _id: agentId }))) return;
  const back = await posts.find({ agent_id: agentId, hidden: true, published: true }, { projection: { _id: 1, room_slug: 1, ghosted: 1 } });
  const shown = back.filter((p) => p.ghosted !== true);
  for (const p of shown) await posts.applyAt(p._id, position, { $set: { hidden: false } });
  await showInCounters(ctx, position, shown);
}

/** A moderator's decision on a post: `hidden` is the post's own hide after it (its author's hide still applies). */
async function decidePost(event: RecordedOf<'ModerationDecided'>, ctx: ProjectionContext): Promise<void> {
  const posts = ctx.collection('posts');
  const d = event.data;
  const post = await posts.findOne({ _id: d.item_id });
  if (!post) return;
  if (d.hidden) {
    if (await posts.applyAt(d.item_id, event.position, { $set: { hidden: true, ghosted: true } })) {
      if (post.hidden !== true) await hideFromCounters(ctx, event.position, [post]);
    }
    return;
  }
  const show = post.hidden === true && !(await authorHidden(ctx, post.agent_id));
  if (await posts.applyAt(d.item_id, event.position, { $set: { ghosted: false, ...(show ? { hidden: false } : {}) } })) {
    if (show) await showInCounters(ctx, event.position, [post]);
  }
}

async function mergeRoom(event: RecordedOf<'RoomMerged'>, ctx: ProjectionContext): Promise<void> {
  const d = event.data;
  const counters = ctx.collection('feed_counters');
  const moved = await counters.findOne({ _id: `room:${d.room_slug}` });
  const n = moved?.visible ?? 0;
  await ctx.collection('posts').updateMany({ room_slug: d.room_slug }, { $set: { room_slug: d.into } });
  if (await counters.applyAt(`room:${d.room_slug}`, event.position, { $set: { visible: 0 } })) {
    await counters.applyAt(`room:${d.into}`, event.position, { $inc: { visible: n } });
  }
}

/**
 * Posts and the feed counters. Request-path reads use the declared indexes only. Keyword search
 * (legacy `GET /api/agent/posts?q=`) is served from the posts themselves: each carries its terms
 * (title first, then hashtags, then the body, at most 32) under a multikey index, so hiding,
 * ghosting and room merges need no second read model to follow them. Engagement events touch
 * only their post's document (position-guarded).
 */
export const postsProjection = defineProjection({
  name: 'posts',
  collections: [
    {
      name: 'posts',
      indexes: [
        { name: 'by_term', keys: { terms: 1, seq: -1 } },
        // Cursor order (seq, _id) both ways: newest first, or after a cursor.
        { name: 'feed', keys: { hidden: 1, seq: 1, _id: 1 } },
        { name: 'room_feed', keys: { room_slug: 1, hidden: 1, seq: 1, _id: 1 } },
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
        { name: 'by_type', keys: { post_type: 1, hidden: 1, seq: -1 } },
      ],
    },
    { name: 'feed_counters', indexes: [] },
    { name: 'posts_ghosted_agents', indexes: [] },
  ],
  handles: [
    'PostPublished',
    'AgentProfileUpdated',
    'CommentAdded',
    'PostReactionToggled',
    'PollVoted',
    'SignalBoosted',
    'PostFlagged',
    'PostGhosted',
    'AgentGhosted',
    'AgentDeactivated',
    'AgentBanned',
    'RoomMerged',
    'PostFlagWithdrawn',
    'ModerationDecided',
  ],
  async apply(event, ctx) {
    switch (event.type) {
      case 'PostPublished':
        return publish(event, ctx);
      case 'AgentProfileUpdated': {
        const d = event.data;
        if (d.name !== undefined) await ctx.collection('posts').updateMany({ agent_id: d.agent_id }, { $set: { agent_name: d.name } });
        return;
      }
      case 'CommentAdded': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $inc: { comment_count: 1 } });
        return;
      }
      case 'PostReactionToggled': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $inc: { [`reactions.${d.reaction}`]: d.active ? 1 : -1 } });
        return;
      }
      case 'PollVoted': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $inc: { [`poll_tally.${d.option_index}`]: 1 } });
        return;
      }
      case 'SignalBoosted': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $inc: { boost_count: 1 } });
        return;
      }
      case 'PostFlagged': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $set: { flag_count: d.flag_count } });
        return;
      }
      case 'PostFlagWithdrawn': {
        const d = event.data;
        await ctx.collection('posts').applyAt(d.post_id, event.position, { $set: { flag_count: d.flag_count } });
        return;
      }
      case 'PostGhosted':
        return ghostPost(event, ctx);
      case 'AgentGhosted':
        return ghostAgent(event.data.agent_id, 'ghosted', event.data.ghosted_at, event.position, ctx);
      case 'AgentDeactivated':
        return ghostAgent(event.data.agent_id, 'deactivated', event.data.deactivated_at, event.position, ctx);
      case 'AgentBanned':
        return ghostAgent(event.data.agent_id, 'banned', event.data.banned_at, event.position, ctx);
      case 'ModerationDecided': {
        const d = event.data;
        if (d.item_kind === 'post') return decidePost(event, ctx);
        if (d.hidden) return ghostAgent(d.item_id, 'ghosted', d.decided_at, event.position, ctx);
        return unghostAgent(d.item_id, event.position, ctx);
      }
      case 'RoomMerged':
        return mergeRoom(event, ctx);
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
