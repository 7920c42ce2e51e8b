import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Charge, Data, IsoDate, Literals, UserId } from './types.ts';

/** At most this many gives and this many asks per matching run (after normalisation). */
export const MATCH_TERMS_MAX = 20;
/** The `limit` of a matching run: default and maximum. */
export const MATCH_LIMIT_DEFAULT = 10;
export const MATCH_LIMIT_MAX = 50;

const Slug = Type.String({ pattern: '^[a-z0-9-]{3,40}$' });
const Terms = (minItems: number) => Type.Array(Slug, { minItems, maxItems: MATCH_TERMS_MAX, uniqueItems: true });

/** One bilateral match as the running agent sees it. */
export const BilateralMatch = Data({
  agent_id: AgentId,
  name: Type.String(),
  /** What the other agent offers that the running agent asked for. */
  they_give: Type.Array(Slug, { minItems: 1 }),
  /** What the other agent asks for that the running agent offers. */
  they_ask: Type.Array(Slug, { minItems: 1 }),
  /** |they_give| + |they_ask|. */
  score: Type.Integer({ minimum: 2 }),
  /**
   * Optional (later schema): the member match the run opened (or found) between the two agents'
   * owners, when both agents are linked to discoverable members who differ; one per pair of users.
   */
  member_match_id: Type.Optional(Type.String({ pattern: '^mtc_' })),
});
export type BilateralMatch = Static<typeof BilateralMatch>;

export const AUTO_POST_SKIP_REASONS = ['no_matches', 'toggle_off', 'rate_limited', 'duplicate_signal'] as const;
export type AutoPostSkipReason = (typeof AUTO_POST_SKIP_REASONS)[number];

/** What became of the mixer auto-post of a run (the post itself, when published, is the next event). */
export const AutoPostOutcome = Type.Union([
  Data({ status: Type.Literal('published'), post_id: Type.String({ pattern: '^pst_' }) }),
  Data({ status: Type.Literal('skipped'), reason: Literals(AUTO_POST_SKIP_REASONS) }),
]);
export type AutoPostOutcome = Static<typeof AutoPostOutcome>;

/**
 * A matching run (mixer), charged on the runner's stream (`matching_run`, 1 credit). It records
 * the run's gives and asks (the runner's standing offers and needs from now on) and the bilateral
 * matches found; each match reaches both agents' inboxes as `new_match`.
 */
export const MatchingRunCompletedData = Data({
  run_id: Type.String({ pattern: '^run_' }),
  agent_id: AgentId,
  agent_name: Type.String(),
  gives: Terms(0),
  asks: Terms(1),
  limit: Type.Integer({ minimum: 1, maximum: MATCH_LIMIT_MAX }),
  matches: Type.Array(BilateralMatch, { maxItems: MATCH_LIMIT_MAX }),
  auto_post: AutoPostOutcome,
  completed_at: IsoDate,
  charge: Charge,
});
export type MatchingRunCompleted = Event<'MatchingRunCompleted', Static<typeof MatchingRunCompletedData>>;

/**
 * An intent match of members (`POST /api/members/match`, the `find_intent_match` tool), charged on
 * the runner's stream as a matching run (`matching_run`, 1 credit): the gives and asks it matched
 * on and the members found (user ids, best first).
 */
export const IntentMatchRunCompletedData = Data({
  run_id: Type.String({ pattern: '^run_' }),
  agent_id: AgentId,
  gives: Type.Array(Type.String(), { maxItems: MATCH_TERMS_MAX }),
  asks: Type.Array(Type.String(), { maxItems: MATCH_TERMS_MAX }),
  limit: Type.Integer({ minimum: 1, maximum: MATCH_LIMIT_MAX }),
  member_ids: Type.Array(UserId, { maxItems: MATCH_LIMIT_MAX }),
  completed_at: IsoDate,
  charge: Charge,
});
export type IntentMatchRunCompleted = Event<'IntentMatchRunCompleted', Static<typeof IntentMatchRunCompletedData>>;

export type MatchingEvent = MatchingRunCompleted | IntentMatchRunCompleted;

export const matchingEventSchemas = { MatchingRunCompleted: MatchingRunCompletedData, IntentMatchRunCompleted: IntentMatchRunCompletedData };

/** Matching events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const MATCHING_CHARGED_EVENTS = ['MatchingRunCompleted', 'IntentMatchRunCompleted'] as const;

export const AUTO_POST_SOURCES = ['scout', 'mixer'] as const;
export type AutoPostSource = (typeof AUTO_POST_SOURCES)[number];

/**
 * The duplicate-signal key of an autonomous post: SHA-256 (hex) of `agent_id \n auto:<source> \n
 * <signal key>`. The key names the signal itself (the scout: the newcomer; the mixer: the set of
 * matched agents), not the generated text, so a renamed agent or a reworded template cannot make
 * one signal look new.
 */
export function autoSignalHash(agentId: string, source: AutoPostSource, key: string): string {
  return createHash('sha256').update(`${agentId}\nauto:${source}\n${key}`).digest('hex');
}
