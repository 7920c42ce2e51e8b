import type { MonthlyCreditsGranted } from '../../events/credits.ts';
import type { AgentState } from '../agents/agent.ts';
import { cycleStart, currentCycle } from './billing.ts';
import { TIERS } from './tiers.ts';

/**
 * Decide the monthly grants that are due at `now`: one event per billing cycle that has started
 * and was not granted yet (a server that was down over a billing day catches up). Unused
 * credits roll over; `used` restarts at 0 each cycle.
 */
export function decideMonthlyGrants(state: AgentState, now: Date): MonthlyCreditsGranted[] {
  if (!state.exists) return [];
  const due = currentCycle(state.registered_at, now);
  const monthly = TIERS[state.tier].monthly_mc ?? 0;
  const events: MonthlyCreditsGranted[] = [];
  let balance = state.balance_mc;
  for (let cycle = state.cycle + 1; cycle <= due; cycle++) {
    balance += monthly;
    events.push({
      type: 'MonthlyCreditsGranted',
      data: {
        agent_id: state.agent_id,
        cycle,
        amount_mc: monthly,
        balance_after_mc: balance,
        cycle_start: cycleStart(state.registered_at, cycle).toISOString(),
        next_grant_at: cycleStart(state.registered_at, cycle + 1).toISOString(),
      },
    });
  }
  return events;
}
