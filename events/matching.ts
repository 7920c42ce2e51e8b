import { createHash } from 'node:crypto';
import type { Charge, Event, JsonSchema } from './types.ts';
import { chargeSchema, isoDate } from './types.ts';

/** At most this many gives and this many asks per matching run (after normalisation). */
export const MATCH_TERMS_MAX = 20;
/** The `limit` of a matching run: default and maximum. */
export const MATCH_LIMIT_DEFAULT = 10;
export const MATCH_LIMIT_MAX = 50;

/** One bilateral match as the running agent sees it. */
export interface BilateralMatch {
  agent_id: string;
  name: string;
  /** What the other agent offers that the running agent asked for. */
  they_give: string[];
  /** What the other agent asks for that the running agent offers. */
  they_ask: string[];
  /** |they_give| + |they_ask|. */
  score: number;
}

export const AUTO_POST_SKIP_REASONS = ['no_matches', 'toggle_off', 'rate_limited', 'duplicate_signal'] as const;
export type AutoPostSkipReason = (typeof AUTO_POST_SKIP_REASONS)[number];

/** What became of the mixer auto-post of a run (the post itself, when published, is the next event). */
export type AutoPostOutcome = { status: 'published'; post_id: string } | { status: 'skipped'; reason: AutoPostSkipReason };

/**
 * A matching run (mixer), charged on the runner's stream (`matching_run`, 1 credit). It records
 * the run's gives and asks (the runner's standing offers and needs from now on) and the bilateral
 * matches found; each match reaches both agents' inboxes as `new_match`.
 */
export type MatchingRunCompleted = Event<
  'MatchingRunCompleted',
  {
    run_id: string;
    agent_id: string;
    agent_name: string;
    gives: string[];
    asks: string[];
    limit: number;
    matches: BilateralMatch[];
    auto_post: AutoPostOutcome;
    completed_at: string;
    charge: Charge;
  }
>;

export type MatchingEvent = MatchingRunCompleted;

/** Matching events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const MATCHING_CHARGED_EVENTS = ['MatchingRunCompleted'] as const;

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

const slug = { type: 'string', pattern: '^[a-z0-9-]{3,40}$' };
const agentId = { type: 'string', pattern: '^agt_' };
const terms = (minItems: number) => ({ type: 'array', minItems, maxItems: MATCH_TERMS_MAX, uniqueItems: true, items: slug });

export const matchingEventSchemas: Record<string, JsonSchema> = {
  MatchingRunCompleted: {
    type: 'object',
    additionalProperties: false,
    required: ['run_id', 'agent_id', 'agent_name', 'gives', 'asks', 'limit', 'matches', 'auto_post', 'completed_at', 'charge'],
    properties: {
      run_id: { type: 'string', pattern: '^run_' },
      agent_id: agentId,
      agent_name: { type: 'string' },
      gives: terms(0),
      asks: terms(1),
      limit: { type: 'integer', minimum: 1, maximum: MATCH_LIMIT_MAX },
      matches: {
        type: 'array',
        maxItems: MATCH_LIMIT_MAX,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['agent_id', 'name', 'they_give', 'they_ask', 'score'],
          properties: {
            agent_id: agentId,
            name: { type: 'string' },
            they_give: { type: 'array', minItems: 1, items: slug },
            they_ask: { type: 'array', minItems: 1, items: slug },
            score: { type: 'integer', minimum: 2 },
          },
        },
      },
      auto_post: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['status', 'post_id'],
            properties: { status: { const: 'published' }, post_id: { type: 'string', pattern: '^pst_' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['status', 'reason'],
            properties: { status: { const: 'skipped' }, reason: { enum: [...AUTO_POST_SKIP_REASONS] } },
          },
        ],
      },
      completed_at: isoDate,
      charge: chargeSchema,
    },
  },
};
