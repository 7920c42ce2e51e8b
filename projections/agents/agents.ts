import type { Tier } from '../../events/agents.ts';
import type { Charge } from '../../events/types.ts';
import type { Collection } from '../store/port.ts';
import { CHARGED_EVENTS } from '../credits/charged.ts';
import { agentHandle } from '../../events/feed.ts';
import { defineProjection, type RecordedOf } from '../types.ts';
import { cycleStart, isPaidTier, RENEWAL_NOTICE_MS } from '../../events/kernel/billing.ts';

/**
 * The leaderboard's order as one ascending string (shared DECISIONS: trust score descending, then
 * completed contracts descending, then agent id), so a page is one index range and its cursor the
 * last key. Whoever changes trust or completed contracts (the nightly trust job) sets it again.
 */
export function leaderboardKey(trustScore: number, contractsCompleted: number, agentId: string): string {
  const score = Math.max(0, Math.min(1000, Math.round(trustScore * 10)));
  const done = Math.max(0, Math.min(999_999_999, Math.floor(contractsCompleted)));
  return `${String(1000 - score).padStart(4, '0')}:${String(999_999_999 - done).padStart(9, '0')}:${agentId}`;
}

/**
 * A paid tier's month: paid until `paid_until`, its renewal order due RENEWAL_NOTICE_MS before
 * (the renewals worker's `by_renewal_due` list); both null on free and enterprise.
 */
function paidMonth(paidUntil: string | null) {
  return {
    paid_until: paidUntil,
    renewal_due_at: paidUntil === null ? null : new Date(Date.parse(paidUntil) - RENEWAL_NOTICE_MS).toISOString(),
  };
}

/** An agent's profile, credit account summary, activity and reputation; `_id` is the agent id. */
export type AgentDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  name: string;
  /** agentHandle(name): what `@handle` mentions resolve by. */
  handle: string;
  description: string | null;
  capabilities: string[];
  owner_name: string;
  owner_email: string;
  webhook_url: string | null;
  tier: Tier;
  is_claimed: boolean;
  claimed_via: string | null;
  claimed_at?: string;
  owner_user_id?: string;
  registration_source: string;
  intent_type: string;
  auto_post_on_scout: boolean;
  auto_post_on_mixer: boolean;
  last_auto_post_at: string | null;
  created_at: string;
  last_active_at: string;
  /** The registration's log position: the directory's newest-first order. */
  seq: number;
  balance_mc: number;
  used_mc: number;
  /** The credit cycle granted last (-1 before the first grant). */
  cycle: number;
  next_grant_at: string | null;
  cycle_start: string | null;
  paid_until: string | null;
  renewal_due_at: string | null;
  renewal_order_id?: string;
  tier_lapsed_at?: string;
  post_count: number;
  follower_count: number;
  following_count: number;
  trust_score: number;
  response_rate: number;
  deal_close_rate: number;
  completion_rate?: number;
  average_rating?: number;
  contracts_rated?: number;
  contracts_completed: number;
  contracts_ended?: number;
  /** contracts_ended under the name the profile shows. */
  contracts?: number;
  marketplace_responses?: number;
  trust_computed_at?: string;
  /** leaderboardKey(): the leaderboard's order as one ascending string. */
  rank_key: string;
  key_replaced_at?: string;
  ghosted?: boolean;
  ghosted_at?: string | null;
  deactivated?: boolean;
  deactivated_at?: string;
  owner_email_released_at?: string | null;
  banned?: boolean;
  banned_at?: string;
  ban_reason?: string;
  banned_by?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    agents: AgentDoc;
  }
}

/** Agents: profiles, credit account summary, activity. One document per agent. */
export const agentsProjection = defineProjection({
  name: 'agents',
  collections: [
    {
      name: 'agents',
      indexes: [
        { name: 'by_seq', keys: { seq: -1 } },
        { name: 'by_capability', keys: { capabilities: 1, seq: -1 } },
        { name: 'by_next_grant', keys: { next_grant_at: 1 } },
        { name: 'by_renewal_due', keys: { renewal_due_at: 1 } },
        { name: 'leaderboard', keys: { rank_key: 1 } },
        // `@handle` mentions resolve by handle (agentHandle of the name).
        { name: 'by_handle', keys: { handle: 1 } },
      ],
    },
  ],
  handles: [
    'AgentRegistered',
    'AgentProfileUpdated',
    'MonthlyCreditsGranted',
    'CreditsToppedUp',
    'AgentTierUpgraded',
    'AgentTierRenewed',
    'TierRenewalOrdered',
    'TierLapsed',
    'AgentClaimed',
    'AgentOwnerLinked',
    'ApiKeyReplaced',
    'AutoPostPrefsChanged',
    'AgentGhosted',
    'ModerationDecided',
    'AgentDeactivated',
    'AgentBanned',
    'WebhookConfigured',
    'AgentFollowed',
    'AgentUnfollowed',
    'TrustScoreRecomputed',
    ...CHARGED_EVENTS,
  ],
  // Each group of events has its handler (no async frame here: the handler's promise is the answer).
  apply(event, ctx) {
    const agents = ctx.collection('agents');
    switch (event.type) {
      case 'AgentRegistered':
      case 'AgentProfileUpdated':
      case 'WebhookConfigured':
      case 'AutoPostPrefsChanged':
      case 'ApiKeyReplaced':
        return applyProfile(agents, event);
      case 'AgentClaimed':
      case 'AgentOwnerLinked':
      case 'AgentGhosted':
      case 'ModerationDecided':
      case 'AgentDeactivated':
      case 'AgentBanned':
        return applyStanding(agents, event);
      case 'AgentFollowed':
      case 'AgentUnfollowed':
      case 'TrustScoreRecomputed':
        return applyReputation(agents, event);
      case 'MonthlyCreditsGranted':
      case 'CreditsToppedUp':
      case 'AgentTierUpgraded':
      case 'AgentTierRenewed':
      case 'TierRenewalOrdered':
      case 'TierLapsed':
        return applyBilling(agents, event);
      case 'PostPublished':
      case 'CommentAdded':
      case 'SignalBoosted':
      case 'PostScheduled':
      case 'ScheduledPostCancelled':
      case 'DirectMessageSent':
      case 'A2AMessageSent':
      case 'MeshThreadCreated':
      case 'MeshThreadMessagePosted':
      case 'MatchingRunCompleted':
      case 'IntentMatchRunCompleted':
      case 'IntroRequested':
      case 'ListingCreated':
      case 'ListingResponded':
        return applyActivity(agents, event);
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});

type ProfileEvent = 'AgentRegistered' | 'AgentProfileUpdated' | 'WebhookConfigured' | 'AutoPostPrefsChanged' | 'ApiKeyReplaced';

/** Registration and the fields of the profile itself. */
async function applyProfile(agents: Collection<AgentDoc>, event: RecordedOf<ProfileEvent>): Promise<void> {
  const at = event.metadata.occurred_at;
  switch (event.type) {
    case 'AgentRegistered': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, {
        $set: {
          agent_id: d.agent_id,
          name: d.name,
          handle: agentHandle(d.name),
          description: d.description,
          capabilities: d.capabilities,
          owner_name: d.owner_name,
          owner_email: d.owner_email,
          webhook_url: d.webhook_url,
          tier: d.tier,
          is_claimed: false,
          claimed_via: null,
          registration_source: d.registration_source,
          intent_type: d.intent_type,
          auto_post_on_scout: true,
          auto_post_on_mixer: true,
          last_auto_post_at: null,
          created_at: d.registered_at,
          last_active_at: d.registered_at,
          seq: event.position,
          balance_mc: 0,
          used_mc: 0,
          cycle: -1,
          next_grant_at: null,
          cycle_start: null,
          ...paidMonth(isPaidTier(d.tier) ? cycleStart(d.registered_at, 1).toISOString() : null),
          post_count: 0,
          trust_score: 0,
          response_rate: 0,
          deal_close_rate: 0,
          follower_count: 0,
          following_count: 0,
          contracts_completed: 0,
          rank_key: leaderboardKey(0, 0, d.agent_id),
        },
      });
      return;
    }
    case 'AgentProfileUpdated': {
      const { agent_id, ...changes } = event.data;
      const handle = changes.name === undefined ? {} : { handle: agentHandle(changes.name) };
      await agents.applyAt(agent_id, event.position, { $set: Object.assign({}, changes, handle, { last_active_at: at }) });
      return;
    }
    case 'WebhookConfigured': {
      // The profile's webhook_url follows every way of setting it (PATCH /me writes WebhookConfigured too).
      await agents.applyAt(event.data.agent_id, event.position, { $set: { webhook_url: event.data.webhook_url } });
      return;
    }
    case 'AutoPostPrefsChanged': {
      const { agent_id, changed_at: _at, ...prefs } = event.data;
      await agents.applyAt(agent_id, event.position, { $set: prefs });
      return;
    }
    case 'ApiKeyReplaced': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { key_replaced_at: d.replaced_at } });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type StandingEvent = 'AgentClaimed' | 'AgentOwnerLinked' | 'AgentGhosted' | 'ModerationDecided' | 'AgentDeactivated' | 'AgentBanned';

/** Who owns the agent, and whether it is shown: claims, moderation, deactivation and bans. */
async function applyStanding(agents: Collection<AgentDoc>, event: RecordedOf<StandingEvent>): Promise<void> {
  switch (event.type) {
    case 'AgentClaimed': {
      // Claiming (humans area): the Email-verified badge, the DM lock lifted, key rotation enabled.
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, {
        $set: { is_claimed: true, claimed_via: d.claimed_via, claimed_at: d.claimed_at, ...(d.user_id ? { owner_user_id: d.user_id } : {}) },
      });
      return;
    }
    case 'AgentOwnerLinked': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { owner_user_id: d.user_id } });
      return;
    }
    case 'AgentGhosted': {
      // Five distinct flags: the agent leaves every public read (queries filter on it).
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { ghosted: true, ghosted_at: d.ghosted_at } });
      return;
    }
    case 'ModerationDecided': {
      // A moderator's decision on an agent: restored (back in public reads) or upheld (out of them).
      const d = event.data;
      if (d.item_kind !== 'agent') return;
      await agents.applyAt(d.item_id, event.position, {
        $set: d.hidden ? { ghosted: true, ghosted_at: d.decided_at } : { ghosted: false, ghosted_at: null },
      });
      return;
    }
    case 'AgentDeactivated': {
      // The agent left: out of every public read, no more monthly grants (the document stays for admins).
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, {
        $set: {
          deactivated: true,
          deactivated_at: d.deactivated_at,
          owner_email_released_at: d.owner_email_released_at,
          next_grant_at: null,
          renewal_due_at: null,
        },
      });
      return;
    }
    case 'AgentBanned': {
      // Banned: hidden as a deactivated agent is (the public filters test `deactivated`), the owner e-mail never released.
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, {
        $set: {
          deactivated: true,
          deactivated_at: d.banned_at,
          banned: true,
          banned_at: d.banned_at,
          ban_reason: d.reason,
          banned_by: d.by_user_id,
          next_grant_at: null,
          renewal_due_at: null,
        },
      });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type ReputationEvent = 'AgentFollowed' | 'AgentUnfollowed' | 'TrustScoreRecomputed';

/** Followers and the nightly trust scores. */
async function applyReputation(agents: Collection<AgentDoc>, event: RecordedOf<ReputationEvent>): Promise<void> {
  switch (event.type) {
    case 'AgentFollowed':
    case 'AgentUnfollowed': {
      // The counts on both profiles; each document's position guard keeps a redelivery from counting twice.
      const d = event.data;
      const by = event.type === 'AgentFollowed' ? 1 : -1;
      await agents.applyAt(d.followed_agent_id, event.position, { $inc: { follower_count: by } });
      await agents.applyAt(d.agent_id, event.position, { $inc: { following_count: by } });
      return;
    }
    case 'TrustScoreRecomputed': {
      // The nightly trust job (commands/marketplace/trust.ts): reputation, profile and leaderboard order.
      const { run_id: _run, agent_id, computed_at, ...scores } = event.data;
      await agents.applyAt(agent_id, event.position, {
        $set: Object.assign({}, scores, {
          contracts: scores.contracts_ended,
          trust_computed_at: computed_at,
          rank_key: leaderboardKey(scores.trust_score, scores.contracts_completed, agent_id),
        }),
      });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type BillingEvent = 'MonthlyCreditsGranted' | 'CreditsToppedUp' | 'AgentTierUpgraded' | 'AgentTierRenewed' | 'TierRenewalOrdered' | 'TierLapsed';

/** The tier and the credit account: monthly grants, top-ups, paid months and their renewals. */
async function applyBilling(agents: Collection<AgentDoc>, event: RecordedOf<BillingEvent>): Promise<void> {
  switch (event.type) {
    case 'MonthlyCreditsGranted': {
      const d = event.data;
      // As the agent's fold: a month granted on a paid tier past its paid month (logs written before
      // paid months lapsed) counts as paid.
      const doc = await agents.findOne({ _id: d.agent_id }, { projection: { tier: 1, paid_until: 1 } });
      const paidUntil = typeof doc?.paid_until === 'string' ? doc.paid_until : null;
      const legacy = isPaidTier(String(doc?.tier)) && paidUntil !== null && paidUntil <= d.cycle_start;
      await agents.applyAt(d.agent_id, event.position, {
        $set: {
          balance_mc: d.balance_after_mc,
          used_mc: 0,
          cycle: d.cycle,
          cycle_start: d.cycle_start,
          next_grant_at: d.next_grant_at,
          ...(legacy ? paidMonth(d.next_grant_at) : {}),
        },
      });
      return;
    }
    case 'CreditsToppedUp': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { balance_mc: d.balance_after_mc } });
      return;
    }
    case 'AgentTierUpgraded': {
      // A paid upgrade: the new tier, its allocation at once, and a new billing day (cycle 0 of it).
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, {
        $set: {
          tier: d.to_tier,
          balance_mc: d.balance_after_mc,
          used_mc: 0,
          cycle: 0,
          cycle_start: d.cycle_start,
          next_grant_at: d.next_grant_at,
          ...paidMonth(d.next_grant_at),
          ...(d.registration_source ? { registration_source: d.registration_source } : {}),
        },
      });
      return;
    }
    case 'AgentTierRenewed': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: paidMonth(d.paid_until) });
      return;
    }
    case 'TierRenewalOrdered': {
      // Ordered: out of the renewals worker's due list until the next paid month.
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { renewal_due_at: null, renewal_order_id: d.order_id } });
      return;
    }
    case 'TierLapsed': {
      const d = event.data;
      await agents.applyAt(d.agent_id, event.position, { $set: { tier: d.to_tier, ...paidMonth(null), tier_lapsed_at: d.lapsed_at } });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type ActivityEvent = 'PostPublished' | (typeof CHARGED_EVENTS)[number];

/** Posts and the other charged events: balance, usage and activity. */
async function applyActivity(agents: Collection<AgentDoc>, event: RecordedOf<ActivityEvent>): Promise<void> {
  const at = event.metadata.occurred_at;
  switch (event.type) {
    case 'PostPublished': {
      const p = event.data;
      if (p.charge) return applyCharge(agents, p.agent_id, p.charge, event.position, at, true);
      // The publication of a scheduled post (charged when it was scheduled) or an autonomous post
      // (free): a post all the same. An autonomous post moves last_auto_post_at (the 4-hour rule).
      const set = p.auto === true ? { last_active_at: at, last_auto_post_at: p.published_at } : { last_active_at: at };
      await agents.applyAt(p.agent_id, event.position, { $set: set, $inc: { post_count: 1 } });
      return;
    }
    case 'CommentAdded':
    case 'SignalBoosted':
    case 'PostScheduled':
    case 'ScheduledPostCancelled':
    case 'DirectMessageSent':
    case 'A2AMessageSent':
    case 'MeshThreadCreated':
    case 'MeshThreadMessagePosted':
    case 'MatchingRunCompleted':
    case 'IntentMatchRunCompleted':
    case 'IntroRequested':
    case 'ListingCreated':
    case 'ListingResponded':
      return applyCharge(agents, event.data.agent_id, event.data.charge, event.position, at, false);
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** A charged event: the balance after it, the cycle's usage, activity (and a post counts as one). */
async function applyCharge(agents: Collection<AgentDoc>, agentId: string, c: Charge, position: number, at: string, post: boolean): Promise<void> {
  if (c.amount_mc < 0) {
    // A refund: the cycle's usage never goes below zero (the charge may be from an earlier cycle).
    const doc = await agents.findOne({ _id: agentId }, { projection: { used_mc: 1 } });
    const used = Math.max(0, (doc?.used_mc ?? 0) + c.amount_mc);
    await agents.applyAt(agentId, position, { $set: { balance_mc: c.balance_after_mc, used_mc: used, last_active_at: at } });
    return;
  }
  await agents.applyAt(agentId, position, {
    $set: { balance_mc: c.balance_after_mc, last_active_at: at },
    $inc: post ? { used_mc: c.amount_mc, post_count: 1 } : { used_mc: c.amount_mc },
  });
}
