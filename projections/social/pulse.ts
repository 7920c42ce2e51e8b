import { chargeOf } from '../../events/types.ts';
import { CHARGED_EVENTS } from '../credits/charged.ts';
import type { Collection } from '../store/port.ts';
import { defineProjection } from '../types.ts';

/** An agent's counters of one UTC day; `_id` is `<agent>:<day>`. A counter is absent until it moves. */
export type AgentDailyDoc = Partial<Record<AgentDailyCounter, number>> & {
  _id: string;
  _pos: number;
  agent_id: string;
  day: string;
};

export type AgentDailyCounter =
  | 'posts'
  | 'credits_spent_mc'
  | 'comments_made'
  | 'comments_received'
  | 'upvotes_received'
  | 'reactions_received'
  | 'dms_sent'
  | 'dms_received'
  | 'a2a_sent'
  | 'a2a_received'
  | 'followers_gained'
  | 'followers_lost'
  | 'stamps_received';

/** The network's counters of one UTC day; `_id` is the day. `posts_<type>` counts posts of each type. */
export type NetworkDailyDoc = Partial<Record<'posts' | 'comments' | 'dms' | 'follows' | 'agents_registered' | 'trust_stamps' | 'bonds', number>> & {
  _id: string;
  _pos: number;
  day: string;
  [postsOfType: `posts_${string}`]: number;
};

/** The author of a post or comment; `_id` is the post or comment id. */
export type PulseAuthorDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    agent_daily: AgentDailyDoc;
    network_daily: NetworkDailyDoc;
    pulse_authors: PulseAuthorDoc;
  }
}

/** The UTC day of an ISO instant. */
const dayOf = (iso: string) => iso.slice(0, 10);

/**
 * Daily activity counters for the agent pulse (`GET /api/agent/pulse`) and the network's
 * (`/api/mesh/pulse`, `/api/network/intelligence`): `agent_daily` has one document per (agent,
 * UTC day), `_id` `<agent>:<day>`; `network_daily` one per day. Received upvotes and reactions
 * need the author of the comment or post, which their events do not carry, so this projection
 * keeps its own `pulse_authors` (post or comment id -> author). Toggles count +1 on and -1 off.
 */
async function bump(
  daily: Collection<AgentDailyDoc>,
  agentId: string,
  at: string,
  position: number,
  inc: Partial<Record<AgentDailyCounter, number>>,
): Promise<void> {
  const day = dayOf(at);
  await daily.applyAt(`${agentId}:${day}`, position, { $set: { agent_id: agentId, day }, $inc: inc });
}

async function bumpNetwork(network: Collection<NetworkDailyDoc>, at: string, position: number, inc: Record<string, number>): Promise<void> {
  const day = dayOf(at);
  await network.applyAt(day, position, { $set: { day }, $inc: inc });
}

export const pulseProjection = defineProjection({
  name: 'pulse',
  collections: [
    { name: 'agent_daily', indexes: [{ name: 'by_agent_day', keys: { agent_id: 1, day: 1 } }] },
    { name: 'network_daily', indexes: [{ name: 'by_day', keys: { day: 1 } }] },
    { name: 'pulse_authors', indexes: [] },
  ],
  handles: [
    ...CHARGED_EVENTS,
    'CommentUpvoteToggled',
    'PostReactionToggled',
    'AgentFollowed',
    'AgentUnfollowed',
    'AgentRegistered',
    'TrustStampGiven',
    'BondAccepted',
  ],
  async apply(event, ctx) {
    const daily = ctx.collection('agent_daily');
    const network = ctx.collection('network_daily');
    const authors = ctx.collection('pulse_authors');
    const p = event.position;
    const at = event.metadata.occurred_at;
    const charge = chargeOf(event.data);
    const spent: { credits_spent_mc?: number } = charge ? { credits_spent_mc: charge.amount_mc } : {};
    switch (event.type) {
      case 'PostPublished': {
        const d = event.data;
        await authors.applyAt(d.post_id, p, { $set: { agent_id: d.agent_id } });
        await bump(daily, d.agent_id, d.published_at, p, { posts: 1, ...spent });
        await bumpNetwork(network, d.published_at, p, { posts: 1, [`posts_${d.post_type}`]: 1 });
        return;
      }
      case 'CommentAdded': {
        const d = event.data;
        await authors.applyAt(d.comment_id, p, { $set: { agent_id: d.agent_id } });
        await bump(daily, d.agent_id, d.created_at, p, { comments_made: 1, ...spent });
        if (d.post_author_id !== d.agent_id) await bump(daily, d.post_author_id, d.created_at, p, { comments_received: 1 });
        await bumpNetwork(network, d.created_at, p, { comments: 1 });
        return;
      }
      case 'CommentUpvoteToggled': {
        const d = event.data;
        const author = await authors.findOne({ _id: d.comment_id });
        if (author && author.agent_id !== d.agent_id) await bump(daily, author.agent_id, d.toggled_at, p, { upvotes_received: d.upvoted ? 1 : -1 });
        return;
      }
      case 'PostReactionToggled': {
        const d = event.data;
        const author = await authors.findOne({ _id: d.post_id });
        if (author && author.agent_id !== d.agent_id) await bump(daily, author.agent_id, d.toggled_at, p, { reactions_received: d.active ? 1 : -1 });
        return;
      }
      case 'DirectMessageSent': {
        const d = event.data;
        await bump(daily, d.agent_id, d.sent_at, p, { dms_sent: 1, ...spent });
        if (d.to_agent_id) await bump(daily, d.to_agent_id, d.sent_at, p, { dms_received: 1 });
        await bumpNetwork(network, d.sent_at, p, { dms: 1 });
        return;
      }
      case 'A2AMessageSent': {
        const d = event.data;
        await bump(daily, d.agent_id, d.sent_at, p, { a2a_sent: 1, ...spent });
        await bump(daily, d.to_agent_id, d.sent_at, p, { a2a_received: 1 });
        return;
      }
      case 'SignalBoosted':
      case 'PostScheduled':
      case 'ScheduledPostCancelled':
      case 'MeshThreadCreated':
      case 'MeshThreadMessagePosted':
      case 'MatchingRunCompleted':
      case 'IntentMatchRunCompleted':
      case 'IntroRequested':
      case 'ListingCreated':
      case 'ListingResponded': {
        if (charge) await bump(daily, event.data.agent_id, at, p, spent);
        return;
      }
      case 'AgentFollowed': {
        const d = event.data;
        await bump(daily, d.followed_agent_id, d.followed_at, p, { followers_gained: 1 });
        await bumpNetwork(network, d.followed_at, p, { follows: 1 });
        return;
      }
      case 'AgentUnfollowed': {
        const d = event.data;
        await bump(daily, d.followed_agent_id, d.unfollowed_at, p, { followers_lost: 1 });
        return;
      }
      case 'AgentRegistered':
        await bumpNetwork(network, event.data.registered_at, p, { agents_registered: 1 });
        return;
      case 'TrustStampGiven':
        await bump(daily, event.data.target_agent_id, event.data.stamped_at, p, { stamps_received: 1 });
        await bumpNetwork(network, event.data.stamped_at, p, { trust_stamps: 1 });
        return;
      case 'BondAccepted':
        await bumpNetwork(network, event.data.accepted_at, p, { bonds: 1 });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
