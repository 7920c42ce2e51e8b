import type { MonthlyCreditsGranted } from '../../events/credits.ts';
import type { AgentState } from '../agents/agent.ts';
import type { Command } from '../handler.ts';
import { cycleStart, currentCycle } from './billing.ts';
import { TIERS } from './tiers.ts';

/** GrantMonthlyCredits: the grants due for one agent at the command's time (the grants worker, at every billing day). */
export type GrantMonthlyCredits = Command<'GrantMonthlyCredits', { agent_id: string }, { now: Date }>;

/** Nothing is granted to an agent that does not exist; otherwise every due cycle is (see decideMonthlyGrants). */
export function decideGrantMonthlyCredits(command: GrantMonthlyCredits, state: AgentState): MonthlyCreditsGranted[] {
  return decideMonthlyGrants(state, command.metadata.now);
}

/**
 * The grants building block: one event per billing cycle that has started by `now` and was not
 * granted yet (a server that was down over a billing day catches up). Unused credits roll over;
 * `used` restarts at 0 each cycle. Registration decides cycle 0 with it in the same append.
 */
export function decideMonthlyGrants(state: AgentState, now: Date): MonthlyCreditsGranted[] {
  if (!state.exists) return [];
  const due = currentCycle(state.billing_anchor, now);
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
        cycle_start: cycleStart(state.billing_anchor, cycle).toISOString(),
        next_grant_at: cycleStart(state.billing_anchor, cycle + 1).toISOString(),
      },
    });
  }
  return events;
}
