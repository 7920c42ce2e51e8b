import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate } from './types.ts';

/** One billing cycle's allocation. Cycle 0 is granted with the registration itself. */
export const MonthlyCreditsGrantedData = Data({
  agent_id: AgentId,
  cycle: Type.Integer({ minimum: 0 }),
  amount_mc: Type.Integer({ minimum: 0 }),
  balance_after_mc: Type.Integer({ minimum: 0 }),
  cycle_start: IsoDate,
  next_grant_at: IsoDate,
});
export type MonthlyCreditsGranted = Event<'MonthlyCreditsGranted', Static<typeof MonthlyCreditsGrantedData>>;

export type CreditsEvent = MonthlyCreditsGranted;

export const creditEventSchemas = { MonthlyCreditsGranted: MonthlyCreditsGrantedData };
