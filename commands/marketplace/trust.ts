import type { EventOfType } from '../../events/catalogue.ts';
import type { TrustRecomputeCompleted, TrustScoreRecomputed } from '../../events/marketplace.ts';
import { trustRunStream } from '../../events/marketplace.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** An agent's contract record as provider and its marketplace responses (the contract_stats read model). */
export interface ProviderRecord {
  agent_id: string;
  /** Contracts it completed as provider (by the requester, or ruled completed). */
  completed: number;
  /** Contracts that reached an end as provider after being accepted: completed, refunded, cancelled after acceptance. */
  ended: number;
  rating_sum: number;
  rating_count: number;
  responses: number;
}

export interface TrustScores {
  trust_score: number;
  completion_rate: number;
  average_rating: number;
  contracts_rated: number;
  contracts_completed: number;
  contracts_ended: number;
  marketplace_responses: number;
  deal_close_rate: number;
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * The spec's formula with shared DECISIONS' rates: trust = (average rating as provider / 5) x 100 x
 * completion rate, one decimal, 0 while no completed contract has a rating; completion rate =
 * completed / ended after acceptance; deal close rate = completed / responses made (at most 1).
 */
export function trustScores(r: ProviderRecord): TrustScores {
  const completion = r.ended === 0 ? 0 : r.completed / r.ended;
  const average = r.rating_count === 0 ? 0 : r.rating_sum / r.rating_count;
  return {
    trust_score: r.rating_count === 0 ? 0 : round((average / 5) * 100 * completion, 1),
    completion_rate: round(completion, 3),
    average_rating: round(average, 2),
    contracts_rated: r.rating_count,
    contracts_completed: r.completed,
    contracts_ended: r.ended,
    marketplace_responses: r.responses,
    deal_close_rate: r.responses === 0 ? 0 : round(Math.min(1, r.completed / r.responses), 3),
  };
}

const SCORE_KEYS: ReadonlyArray<keyof TrustScores> = [
  'trust_score',
  'completion_rate',
  'average_rating',
  'contracts_rated',
  'contracts_completed',
  'contracts_ended',
  'marketplace_responses',
  'deal_close_rate',
];

export type TrustRunEvent = EventOfType<'TrustScoreRecomputed' | 'TrustRecomputeCompleted'>;

/** `trust-run-<run_id>`: whether the run happened. */
export interface TrustRunState {
  completed: boolean;
}

export const trustRunAggregate: Aggregate<TrustRunState, TrustRunEvent> = {
  initialState: () => ({ completed: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'TrustScoreRecomputed':
        return state;
      case 'TrustRecomputeCompleted':
        return { completed: true };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

export type RecomputeTrust = Command<
  'RecomputeTrust',
  {
    run_id: string;
    night: string | null;
    /** Every agent with a record, and the scores its profile shows now (null: never computed). */
    agents: ReadonlyArray<{ record: ProviderRecord; current: Partial<TrustScores> | null }>;
  }
>;

/**
 * RecomputeTrust: one TrustScoreRecomputed per agent whose scores differ from what its profile
 * shows, then TrustRecomputeCompleted. A run that already happened (its stream is complete)
 * decides nothing: a nightly run is once per night however often the job fires.
 */
export function decideRecomputeTrust(command: RecomputeTrust, state: TrustRunState): Array<TrustScoreRecomputed | TrustRecomputeCompleted> {
  if (state.completed) return [];
  const at = command.metadata.now.toISOString();
  const { run_id, night } = command.data;
  const changed: TrustScoreRecomputed[] = [];
  for (const { record, current } of command.data.agents) {
    const scores = trustScores(record);
    if (current && SCORE_KEYS.every((k) => current[k] === scores[k])) continue;
    changed.push({ type: 'TrustScoreRecomputed', data: { run_id, agent_id: record.agent_id, ...scores, computed_at: at } });
  }
  return [...changed, { type: 'TrustRecomputeCompleted', data: { run_id, night, agents: changed.length, completed_at: at } }];
}

/** The UTC night a nightly run belongs to: the date of the latest 02:00 UTC at or before `now`. */
export function nightOf(now: Date): string {
  return new Date(now.getTime() - 2 * 3600_000).toISOString().slice(0, 10);
}

export async function recomputeTrust(bus: CommandBus, data: RecomputeTrust['data'], ctx: CommandContext) {
  const command: RecomputeTrust = { type: 'RecomputeTrust', data, metadata: { now: ctx.now } };
  return bus.handle<TrustRunState, TrustRunEvent, Array<TrustScoreRecomputed | TrustRecomputeCompleted>>(
    trustRunStream(data.run_id),
    trustRunAggregate,
    (s) => decideRecomputeTrust(command, s),
    ctx,
  );
}
