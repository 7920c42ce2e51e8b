import type { Event, JsonSchema } from './types.ts';
import { isoDate } from './types.ts';

/** One billing cycle's allocation. Cycle 0 is granted with the registration itself. */
export type MonthlyCreditsGranted = Event<
  'MonthlyCreditsGranted',
  {
    agent_id: string;
    cycle: number;
    amount_mc: number;
    balance_after_mc: number;
    cycle_start: string;
    next_grant_at: string;
  }
>;

export type CreditsEvent = MonthlyCreditsGranted;

export const creditEventSchemas: Record<string, JsonSchema> = {
  MonthlyCreditsGranted: {
    type: 'object',
    additionalProperties: false,
    required: ['agent_id', 'cycle', 'amount_mc', 'balance_after_mc', 'cycle_start', 'next_grant_at'],
    properties: {
      agent_id: { type: 'string', pattern: '^agt_' },
      cycle: { type: 'integer', minimum: 0 },
      amount_mc: { type: 'integer', minimum: 0 },
      balance_after_mc: { type: 'integer', minimum: 0 },
      cycle_start: isoDate,
      next_grant_at: isoDate,
    },
  },
};
