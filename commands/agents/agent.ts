import type { Tier } from '../../events/agents.ts';
import type { EventOfType } from '../../events/catalogue.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import type { Charge, Recorded } from '../../events/types.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { Aggregate } from '../handler.ts';
import { cycleStart, isPaidTier } from '../credits/billing.ts';
import type { SignalSeen } from './signal-window.ts';
import { SignalWindow } from './signal-window.ts';

export type { SignalSeen } from './signal-window.ts';

/**
 * Every event appended to `agent-<id>`: the agent's own (registration, profile), its credits
 * (grants, and every charged action of feed, messaging and matching, which carries its charge),
 * its ownership (claims, keys, the mails they queue, auto-post toggles) and its webhook settings.
 */
export type AgentStreamEvent = EventOfType<
  | 'AgentRegistered'
  | 'AgentProfileUpdated'
  | 'AgentDeactivated'
  | 'AgentBanned'
  | 'MonthlyCreditsGranted'
  | 'CreditsToppedUp'
  | 'AgentTierUpgraded'
  | 'AgentTierRenewed'
  | 'TierRenewalOrdered'
  | 'TierLapsed'
  | 'AgentClaimed'
  | 'AgentOwnerLinked'
  | 'ApiKeyReplaced'
  | 'MailQueued'
  | 'AutoPostPrefsChanged'
  | 'PostPublished'
  | 'PostScheduled'
  | 'ScheduledPostCancelled'
  | 'SignalBoosted'
  | 'CommentAdded'
  | 'ImageUploaded'
  | 'ImageExpired'
  | 'DirectMessageSent'
  | 'A2AMessageSent'
  | 'AgentBlocked'
  | 'AgentUnblocked'
  | 'MeshThreadCreated'
  | 'MeshThreadMessagePosted'
  | 'MatchingRunCompleted'
  | 'IntentMatchRunCompleted'
  | 'IntroRequested'
  | 'ListingCreated'
  | 'ListingResponded'
  | 'WebhookConfigured'
  | 'WebhookSecretRegenerated'
  | 'WebhookSecretRotated'
  | 'WebhookTestFired'
  | 'WebhookDisabled'
>;

/** An event read back from `agent-<id>` (credit history, a retried matching run), typed as the stream's union. */
export function agentStreamEvent(event: RecordedEvent): Recorded<AgentStreamEvent> {
  // The cast: a stream's name fixes its aggregate, and only the agent aggregate's commands append to `agent-<id>` (as in CommandBus.load).
  return event as Recorded<AgentStreamEvent>;
}

/** The decision state of an agent: everything a command on `agent-<id>` needs, folded from its stream. */
export interface AgentState {
  exists: boolean;
  agent_id: string;
  name: string;
  tier: Tier;
  registered_at: string;
  /** The billing day's anchor: the registration, or the last paid upgrade. */
  billing_anchor: string;
  /** How the agent came to be (`api`, or `pro_auto` / `elite_auto` for a member's in-app agent, following the plan). */
  registration_source: string;
  /** A paid tier (pro, elite, builder) is paid until this billing day; null on free and enterprise. */
  paid_until: string | null;
  /** The renewal order created for the month from `paid_until` (the renewals worker): the billing day it is for, and its id. */
  renewal_due_at: string | null;
  renewal_order_id: string | null;
  /** Orders already applied to this agent (top-ups, upgrades): each grants once. */
  paid_orders: Readonly<Record<string, true>>;
  balance_mc: number;
  /** Spent in the current cycle. */
  used_mc: number;
  cycle: number;
  next_grant_at: string | null;
  /**
   * signal_hash -> the agent's post with it in the last 48 h (duplicate-signal suppression), oldest
   * first (signal-window.ts: persistent, so folding a post does not copy the window).
   */
  signals: SignalLookup;
  /** Times of the agent's boosts in the last 24 h (daily cap) and every post it has boosted. */
  boosts_at: readonly string[];
  boosted: Readonly<Record<string, true>>;
  /** Times the agent scheduled posts in the last 24 h (daily cap). */
  schedules_at: readonly string[];
  /** Scheduled posts not yet published or cancelled: post_id -> what cancelling refunds. */
  scheduled: Readonly<Record<string, { publish_at: string; amount_mc: number }>>;
  /** Messaging (commands/messaging): times of DMs sent in the last 24 h, per recipient key too, and the agents this one blocks. */
  dms_at: readonly string[];
  dm_pairs: Readonly<Record<string, readonly string[]>>;
  blocked: Readonly<Record<string, true>>;
  /** Times of the mesh threads the agent created in the last 24 h (hourly limit and daily cap). */
  threads_at: readonly string[];
  /** Ownership (commands/humans): the normalised owner e-mail, claim state, linked user and current key hash. */
  owner_email: string;
  claimed: boolean;
  owner_user_id: string | null;
  api_key_hash: string;
  /** Set once the agent left (`DELETE /api/protocol/me`): every later command on the agent is refused. */
  deactivated_at: string | null;
  /** Set when a super admin banned the agent (then `deactivated_at` is set too). */
  banned_at: string | null;
  owner_email_released_at: string | null;
  /** Autonomous posts (commands/matching/auto-post.ts): the owner's toggles and the last auto-post's time. */
  auto_post_on_scout: boolean;
  auto_post_on_mixer: boolean;
  last_auto_post_at: string | null;
  /** Images (commands/feed/image.ts): live images (image_id -> bytes), their total, and upload times of the last 24 h. */
  images: Readonly<Record<string, number>>;
  image_bytes: number;
  image_uploads_at: readonly string[];
  /** Matching runs of the last 24 h (run_id -> completed_at): a retried run is recognised, never charged twice. */
  recent_runs: Readonly<Record<string, string>>;
}

/** What deciding needs of the signal window (a native Map serves as well, as in tests). */
export interface SignalLookup {
  get(hash: string): SignalSeen | undefined;
  has(hash: string): boolean;
  keys(): IterableIterator<string>;
}

/** A deactivated agent accepts no command: the owner's controls and the workers' jobs included. */
export const agentDeactivated = () => new DomainError(410, 'agent_deactivated', 'This agent was deactivated and accepts no more actions');

/** A banned agent accepts no command either, a second ban included. */
export const agentBanned = () => new DomainError(410, 'agent_banned', 'This agent was banned and accepts no more actions');

/** For jobs acting on an agent (workers): a deactivated or banned agent's job is skipped (null); any other error is rethrown. */
export function skipDeactivated(err: unknown): null {
  if (err instanceof DomainError && (err.code === 'agent_deactivated' || err.code === 'agent_banned')) return null;
  throw err;
}

export const SIGNAL_WINDOW_MS = 48 * 3600_000;
export const DAY_MS = 24 * 3600_000;

/** Keeps the entries of `times` newer than `window` before `now` (times are ISO strings, so they compare as text). */
export function within(times: readonly string[], now: string, windowMs: number): string[] {
  const from = new Date(Date.parse(now) - windowMs).toISOString();
  return times.filter((t) => t > from);
}

const initial = (): AgentState => ({
  exists: false,
  agent_id: '',
  name: '',
  tier: 'free',
  registered_at: '',
  billing_anchor: '',
  registration_source: '',
  paid_until: null,
  renewal_due_at: null,
  renewal_order_id: null,
  paid_orders: {},
  balance_mc: 0,
  used_mc: 0,
  cycle: -1,
  next_grant_at: null,
  signals: SignalWindow.EMPTY,
  boosts_at: [],
  boosted: {},
  schedules_at: [],
  scheduled: {},
  dms_at: [],
  dm_pairs: {},
  blocked: {},
  threads_at: [],
  owner_email: '',
  claimed: false,
  owner_user_id: null,
  api_key_hash: '',
  deactivated_at: null,
  banned_at: null,
  owner_email_released_at: null,
  auto_post_on_scout: true,
  auto_post_on_mixer: true,
  last_auto_post_at: null,
  images: {},
  image_bytes: 0,
  image_uploads_at: [],
  recent_runs: {},
});

function without<V>(record: Readonly<Record<string, V>>, key: string): Record<string, V> {
  const next = { ...record };
  delete next[key];
  return next;
}

function withCharge(state: AgentState, charge: Charge | undefined): AgentState {
  // A refund (negative amount) of a charge from an earlier cycle must not make this cycle's usage negative.
  return charge ? { ...state, balance_mc: charge.balance_after_mc, used_mc: Math.max(0, state.used_mc + charge.amount_mc) } : state;
}

/**
 * The fold of `agent-<id>`. Every credit-consuming event carries its charge, and the balance
 * follows it here (the credit building block); the rest of each case keeps what the agent's
 * commands decide on.
 */
export const agentAggregate: Aggregate<AgentState, AgentStreamEvent> = {
  initialState: initial,
  refuses: (state) => (state.banned_at !== null ? agentBanned() : state.deactivated_at === null ? null : agentDeactivated()),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentRegistered': {
        const d = event.data;
        return {
          ...state,
          exists: true,
          agent_id: d.agent_id,
          name: d.name,
          tier: d.tier,
          registered_at: d.registered_at,
          billing_anchor: d.registered_at,
          registration_source: d.registration_source,
          // A member's in-app agent is registered on the plan's tier: its first billing month is paid.
          paid_until: isPaidTier(d.tier) ? cycleStart(d.registered_at, 1).toISOString() : null,
          owner_email: d.owner_email,
          api_key_hash: d.api_key_hash,
        };
      }
      case 'AgentClaimed':
        return { ...state, claimed: true, owner_user_id: event.data.user_id ?? state.owner_user_id };
      case 'AgentOwnerLinked':
        return { ...state, owner_user_id: event.data.user_id };
      case 'AgentDeactivated':
        return { ...state, deactivated_at: event.data.deactivated_at, owner_email_released_at: event.data.owner_email_released_at };
      case 'AgentBanned':
        // Never released: `owner_email_released_at` stays null.
        return { ...state, deactivated_at: event.data.banned_at, banned_at: event.data.banned_at, owner_email_released_at: null };
      case 'ApiKeyReplaced':
        return { ...state, api_key_hash: event.data.new_key_hash };
      case 'AgentProfileUpdated':
        return typeof event.data.name === 'string' ? { ...state, name: event.data.name } : state;
      case 'AutoPostPrefsChanged': {
        const d = event.data;
        return {
          ...state,
          auto_post_on_scout: typeof d.auto_post_on_scout === 'boolean' ? d.auto_post_on_scout : state.auto_post_on_scout,
          auto_post_on_mixer: typeof d.auto_post_on_mixer === 'boolean' ? d.auto_post_on_mixer : state.auto_post_on_mixer,
        };
      }
      case 'MonthlyCreditsGranted': {
        const d = event.data;
        // A month granted on a paid tier past its paid month only exists in logs written before paid
        // months lapsed: that month counts as paid (so such an agent gets a renewal order, then lapses).
        const legacy = isPaidTier(state.tier) && state.paid_until !== null && state.paid_until <= d.cycle_start;
        return {
          ...state,
          balance_mc: d.balance_after_mc,
          used_mc: 0,
          cycle: d.cycle,
          next_grant_at: d.next_grant_at,
          paid_until: legacy ? d.next_grant_at : state.paid_until,
        };
      }
      case 'CreditsToppedUp': {
        const d = event.data;
        return { ...state, balance_mc: d.balance_after_mc, paid_orders: { ...state.paid_orders, [d.order_id]: true } };
      }
      case 'AgentTierUpgraded': {
        const d = event.data;
        return {
          ...state,
          tier: d.to_tier,
          balance_mc: d.balance_after_mc,
          used_mc: 0,
          cycle: 0,
          billing_anchor: d.cycle_start,
          next_grant_at: d.next_grant_at,
          // One billing month per payment: paid until the next billing day.
          paid_until: d.next_grant_at,
          registration_source: d.registration_source ?? state.registration_source,
          paid_orders: { ...state.paid_orders, [d.order_id]: true },
        };
      }
      case 'AgentTierRenewed':
        return { ...state, paid_until: event.data.paid_until, paid_orders: { ...state.paid_orders, [event.data.order_id]: true } };
      case 'TierRenewalOrdered':
        return { ...state, renewal_due_at: event.data.due_at, renewal_order_id: event.data.order_id };
      case 'TierLapsed':
        return { ...state, tier: event.data.to_tier, paid_until: null };
      case 'MatchingRunCompleted':
      case 'IntentMatchRunCompleted': {
        const d = event.data;
        const from = new Date(Date.parse(d.completed_at) - DAY_MS).toISOString();
        const runs: Record<string, string> = {};
        for (const [id, t] of Object.entries(state.recent_runs)) if (t > from) runs[id] = t;
        runs[d.run_id] = d.completed_at;
        return { ...withCharge(state, d.charge), recent_runs: runs };
      }
      case 'PostPublished': {
        const d = event.data;
        let next = withCharge(state, d.charge);
        if (typeof d.scheduled_at === 'string') next = { ...next, scheduled: without(state.scheduled, d.post_id) };
        if (d.auto === true) next = { ...next, last_auto_post_at: d.published_at };
        if (typeof d.signal_hash !== 'string') return next;
        return { ...next, signals: withSignal(state.signals, d.signal_hash, { at: d.published_at, post_id: d.post_id }) };
      }
      case 'SignalBoosted': {
        const d = event.data;
        return {
          ...withCharge(state, d.charge),
          boosts_at: [...within(state.boosts_at, d.boosted_at, DAY_MS), d.boosted_at],
          boosted: { ...state.boosted, [d.post_id]: true },
        };
      }
      case 'PostScheduled': {
        const d = event.data;
        return {
          ...withCharge(state, d.charge),
          schedules_at: [...within(state.schedules_at, d.scheduled_at, DAY_MS), d.scheduled_at],
          scheduled: { ...state.scheduled, [d.post_id]: { publish_at: d.publish_at, amount_mc: d.charge?.amount_mc ?? 0 } },
        };
      }
      case 'ScheduledPostCancelled':
        return { ...withCharge(state, event.data.charge), scheduled: without(state.scheduled, event.data.post_id) };
      case 'DirectMessageSent':
        return withDm(withCharge(state, event.data.charge), event.data);
      case 'MeshThreadCreated': {
        const created = event.data.created_at;
        return { ...withCharge(state, event.data.charge), threads_at: [...within(state.threads_at, created, DAY_MS), created] };
      }
      case 'AgentBlocked':
        return { ...state, blocked: { ...state.blocked, [event.data.blocked_agent_id]: true } };
      case 'AgentUnblocked':
        return { ...state, blocked: without(state.blocked, event.data.blocked_agent_id) };
      case 'CommentAdded':
      case 'A2AMessageSent':
      case 'MeshThreadMessagePosted':
      case 'IntroRequested':
      case 'ListingCreated':
      case 'ListingResponded':
        return withCharge(state, event.data.charge);
      case 'ImageUploaded': {
        const d = event.data;
        return {
          ...state,
          images: { ...state.images, [d.image_id]: d.size_bytes },
          image_bytes: state.image_bytes + d.size_bytes,
          image_uploads_at: [...within(state.image_uploads_at, d.uploaded_at, DAY_MS), d.uploaded_at],
        };
      }
      case 'ImageExpired': {
        const size = state.images[event.data.image_id];
        if (size === undefined) return state;
        return { ...state, images: without(state.images, event.data.image_id), image_bytes: state.image_bytes - size };
      }
      case 'MailQueued':
      case 'WebhookConfigured':
      case 'WebhookSecretRegenerated':
      case 'WebhookSecretRotated':
      case 'WebhookTestFired':
      case 'WebhookDisabled':
        return state;
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** The recipient key of the per-pair DM cap: an agent id, `user:<id>` or `email:<normalised>`. */
export function dmPairKey(d: { to_agent_id?: unknown; to_user_id?: unknown; to_email?: unknown }): string {
  if (typeof d.to_agent_id === 'string') return d.to_agent_id;
  if (typeof d.to_user_id === 'string') return `user:${d.to_user_id}`;
  return `email:${String(d.to_email)}`;
}

/** The DM caps' evidence after a DM: its time in the 24 h window, overall and per recipient key. */
function withDm(state: AgentState, d: { sent_at: string; to_agent_id: string | null; to_user_id: string | null; to_email: string | null }): AgentState {
  const at = d.sent_at;
  const key = dmPairKey(d);
  const pairs: Record<string, readonly string[]> = {};
  for (const [k, times] of Object.entries(state.dm_pairs)) {
    const kept = within(times, at, DAY_MS);
    if (kept.length) pairs[k] = kept;
  }
  pairs[key] = [...(pairs[key] ?? []), at];
  return { ...state, dms_at: [...within(state.dms_at, at, DAY_MS), at], dm_pairs: pairs };
}

/** The signal window after a post: entries older than 48 h before it dropped, the post's entry last. */
function withSignal(signals: SignalLookup, hash: string, seen: SignalSeen): SignalLookup {
  const from = new Date(Date.parse(seen.at) - SIGNAL_WINDOW_MS).toISOString();
  let window = signals instanceof SignalWindow ? signals : SignalWindow.EMPTY;
  // A plain Map (states built by hand in tests) is carried over entry by entry.
  if (!(signals instanceof SignalWindow))
    for (const h of signals.keys()) {
      const entry = signals.get(h);
      if (entry) window = window.with(h, entry, '');
    }
  return window.with(hash, seen, from);
}
