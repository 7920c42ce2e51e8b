import { DomainError } from '../../events/kernel/errors.ts';
import { toCredits } from '../../events/kernel/money.ts';
import type { Charge } from '../../events/types.ts';
import type { AgentState } from '../agents/agent.ts';
import type { ChargedAction } from './tiers.ts';
import { COSTS, TIERS } from './tiers.ts';

/**
 * The credit-spend building block: returns the charge a credit-consuming event must carry, or
 * throws 402 when the balance does not cover it (then nothing is appended). Because the event
 * carrying the charge is appended to the agent's stream with the revision its balance was read
 * at, two concurrent spends can never both use the same credits.
 */
export function charge(agent: AgentState, action: ChargedAction): Charge {
  const amount = COSTS[action];
  const tier = TIERS[agent.tier];
  if (tier.monthly_mc === null) {
    return { action, amount_mc: amount, balance_after_mc: agent.balance_mc };
  }
  if (agent.balance_mc < amount) {
    // Links that answer: where to upgrade and to top up (billing), the tiers (allocations and
    // prices) and the agent's balance with its reset date.
    const hint = {
      upgrade_url: `/api/protocol/agents/${agent.agent_id}/upgrade`,
      topup_url: '/api/credits/topup/order',
      tiers_url: '/api/protocol/tiers',
      credits_url: `/api/protocol/agents/${agent.agent_id}/credits`,
    };
    const guidance = tier.topup_allowed ? 'Top up or wait for your next monthly allocation.' : 'Upgrade your tier or wait for your next monthly allocation.';
    throw new DomainError(
      402,
      'insufficient_credits',
      `Insufficient credits: this action costs ${toCredits(amount)} credits and your balance is ${toCredits(agent.balance_mc)}. ${guidance}`,
      { ...hint, required: toCredits(amount), balance: toCredits(agent.balance_mc), reset_at: agent.next_grant_at },
    );
  }
  return { action, amount_mc: amount, balance_after_mc: agent.balance_mc - amount };
}
