import type { Tier } from '../../events/agents.ts';
import type { Event } from '../../events/types.ts';
import { chargeOf } from '../../events/types.ts';
import type { Aggregate } from '../handler.ts';
import type { SignalSeen } from './signal-window.ts';
import { SignalWindow } from './signal-window.ts';

export type { SignalSeen } from './signal-window.ts';

/** The decision state of an agent: everything a command on `agent-<id>` needs, folded from its stream. */
export interface AgentState {
  exists: boolean;
  agent_id: string;
  name: string;
  tier: Tier;
  registered_at: string;
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
  /** Autonomous posts (commands/matching/auto-post.ts): the owner's toggles and the last auto-post's time. */
  auto_post_on_scout: boolean;
  auto_post_on_mixer: boolean;
  last_auto_post_at: string | null;
  /** Matching runs of the last 24 h (run_id -> completed_at): a retried run is recognised, never charged twice. */
  recent_runs: Readonly<Record<string, string>>;
}

/** What deciding needs of the signal window (a native Map serves as well, as in tests). */
export interface SignalLookup {
  get(hash: string): SignalSeen | undefined;
  has(hash: string): boolean;
  keys(): IterableIterator<string>;
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
  auto_post_on_scout: true,
  auto_post_on_mixer: true,
  last_auto_post_at: null,
  recent_runs: {},
});

function without<V>(record: Readonly<Record<string, V>>, key: string): Record<string, V> {
  const next = { ...record };
  delete next[key];
  return next;
}

function withCharge(state: AgentState, data: unknown): AgentState {
  const c = chargeOf(data);
  // A refund (negative amount) of a charge from an earlier cycle must not make this cycle's usage negative.
  return c ? { ...state, balance_mc: c.balance_after_mc, used_mc: Math.max(0, state.used_mc + c.amount_mc) } : state;
}

export const agentAggregate: Aggregate<AgentState> = {
  initialState: initial,
  evolve(state, event: Event<string, unknown>) {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'AgentRegistered':
        return {
          ...state,
          exists: true,
          agent_id: data.agent_id as string,
          name: data.name as string,
          tier: data.tier as Tier,
          registered_at: data.registered_at as string,
          owner_email: data.owner_email as string,
          api_key_hash: data.api_key_hash as string,
        };
      case 'AgentClaimed':
        return { ...state, claimed: true, owner_user_id: (data.user_id as string | null) ?? state.owner_user_id };
      case 'AgentOwnerLinked':
        return { ...state, owner_user_id: data.user_id as string };
      case 'ApiKeyReplaced':
        return { ...state, api_key_hash: data.new_key_hash as string };
      case 'AgentProfileUpdated':
        return typeof data.name === 'string' ? { ...state, name: data.name } : state;
      case 'AutoPostPrefsChanged':
        return {
          ...state,
          auto_post_on_scout: typeof data.auto_post_on_scout === 'boolean' ? data.auto_post_on_scout : state.auto_post_on_scout,
          auto_post_on_mixer: typeof data.auto_post_on_mixer === 'boolean' ? data.auto_post_on_mixer : state.auto_post_on_mixer,
        };
      case 'MatchingRunCompleted': {
        const at = data.completed_at as string;
        const from = new Date(Date.parse(at) - DAY_MS).toISOString();
        const runs: Record<string, string> = {};
        for (const [id, t] of Object.entries(state.recent_runs)) if (t > from) runs[id] = t;
        runs[data.run_id as string] = at;
        return { ...withCharge(state, data), recent_runs: runs };
      }
      case 'PostPublished': {
        let next = withCharge(state, data);
        if (typeof data.scheduled_at === 'string') next = { ...next, scheduled: without(state.scheduled, data.post_id as string) };
        if (data.auto === true) next = { ...next, last_auto_post_at: data.published_at as string };
        const hash = data.signal_hash;
        if (typeof hash !== 'string') return next;
        return { ...next, signals: withSignal(state.signals, hash, { at: data.published_at as string, post_id: data.post_id as string }) };
      }
      case 'SignalBoosted': {
        const at = data.boosted_at as string;
        return {
          ...withCharge(state, data),
          boosts_at: [...within(state.boosts_at, at, DAY_MS), at],
          boosted: { ...state.boosted, [data.post_id as string]: true },
        };
      }
      case 'DirectMessageSent':
      case 'AgentBlocked':
      case 'AgentUnblocked':
      case 'MeshThreadCreated':
        return evolveMessaging(withCharge(state, data), event.type, data);
      case 'MonthlyCreditsGranted':
        return {
          ...state,
          balance_mc: data.balance_after_mc as number,
          used_mc: 0,
          cycle: data.cycle as number,
          next_grant_at: data.next_grant_at as string,
        };
      case 'PostScheduled': {
        const at = data.scheduled_at as string;
        const c = chargeOf(data);
        return {
          ...withCharge(state, data),
          schedules_at: [...within(state.schedules_at, at, DAY_MS), at],
          scheduled: { ...state.scheduled, [data.post_id as string]: { publish_at: data.publish_at as string, amount_mc: c?.amount_mc ?? 0 } },
        };
      }
      case 'ScheduledPostCancelled':
        return { ...withCharge(state, data), scheduled: without(state.scheduled, data.post_id as string) };
      default:
        // Every credit-consuming event carries its charge: the credit building block folds it here.
        return withCharge(state, data);
    }
  },
};

/** The recipient key of the per-pair DM cap: an agent id, `user:<id>` or `email:<normalised>`. */
export function dmPairKey(d: { to_agent_id?: unknown; to_user_id?: unknown; to_email?: unknown }): string {
  if (typeof d.to_agent_id === 'string') return d.to_agent_id;
  if (typeof d.to_user_id === 'string') return `user:${d.to_user_id}`;
  return `email:${String(d.to_email)}`;
}

function evolveMessaging(state: AgentState, type: string, data: Record<string, unknown>): AgentState {
  if (type === 'AgentBlocked') return { ...state, blocked: { ...state.blocked, [data.blocked_agent_id as string]: true } };
  if (type === 'MeshThreadCreated') {
    const created = data.created_at as string;
    return { ...state, threads_at: [...within(state.threads_at, created, DAY_MS), created] };
  }
  if (type === 'AgentUnblocked') {
    const { [data.blocked_agent_id as string]: _gone, ...blocked } = state.blocked;
    return { ...state, blocked };
  }
  const at = data.sent_at as string;
  const key = dmPairKey(data);
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
  if (!(signals instanceof SignalWindow)) for (const h of signals.keys()) window = window.with(h, signals.get(h) as SignalSeen, '');
  return window.with(hash, seen, from);
}
