import type { MonthlyCreditsGranted, TierLapsed } from '../../events/credits.ts';
import type { AgentState } from '../agents/agent.ts';
import type { Command } from '../handler.ts';
import { cycleStart, currentCycle, isPaidTier } from './billing.ts';
import { TIERS } from './tiers.ts';

/** GrantMonthlyCredits: the grants (and a lapse) due for one agent at the command's time (the grants worker, at every billing day). */
export type GrantMonthlyCredits = Command<'GrantMonthlyCredits', { agent_id: string }, { now: Date }>;

/** Nothing is granted to an agent that does not exist; otherwise every due cycle is (see decideMonthlyGrants). */
export function decideGrantMonthlyCredits(command: GrantMonthlyCredits, state: AgentState): Array<MonthlyCreditsGranted | TierLapsed> {
  return decideMonthlyGrants(state, command.metadata.now);
}

/**
 * The grants building block: one event per billing cycle that has started by `now` and was not
 * granted yet (a server that was down over a billing day catches up). Unused credits roll over;
 * `used` restarts at 0 each cycle. Registration decides cycle 0 with it in the same append.
 *
 * A paid tier lasts until its `paid_until` (one billing month per payment): when that billing day
 * has come unpaid, `TierLapsed` moves the agent back to free first (keeping its balance), and the
 * cycles from then on are granted the free allocation.
 */
export function decideMonthlyGrants(state: AgentState, now: Date): Array<MonthlyCreditsGranted | TierLapsed> {
  if (!state.exists) return [];
  const due = currentCycle(state.billing_anchor, now);
  const events: Array<MonthlyCreditsGranted | TierLapsed> = [];
  let tier = state.tier;
  let balance = state.balance_mc;
  const lapseBy = (at: string) => {
    if (!isPaidTier(tier) || state.paid_until === null || state.paid_until > at) return;
    const order = state.renewal_due_at === state.paid_until ? state.renewal_order_id : null;
    events.push({
      type: 'TierLapsed',
      data: { agent_id: state.agent_id, from_tier: tier, to_tier: 'free', balance_mc: balance, order_id: order, lapsed_at: state.paid_until },
    });
    tier = 'free';
  };
  for (let cycle = state.cycle + 1; cycle <= due; cycle++) {
    const start = cycleStart(state.billing_anchor, cycle).toISOString();
    lapseBy(start);
    const monthly = TIERS[tier].monthly_mc ?? 0;
    balance += monthly;
    events.push({
      type: 'MonthlyCreditsGranted',
      data: {
        agent_id: state.agent_id,
        cycle,
        amount_mc: monthly,
        balance_after_mc: balance,
        cycle_start: start,
        next_grant_at: cycleStart(state.billing_anchor, cycle + 1).toISOString(),
      },
    });
  }
  lapseBy(now.toISOString());
  return events;
}

/** At registration: cycle 0's grant (a registration's paid month, if any, has not ended yet, so nothing lapses). */
export function decideRegistrationGrant(state: AgentState, now: Date): MonthlyCreditsGranted[] {
  return decideMonthlyGrants(state, now).filter((e): e is MonthlyCreditsGranted => e.type === 'MonthlyCreditsGranted');
}
