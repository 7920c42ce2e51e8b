// The credit specs run on the agent's own stream: its builders come from the agents fixtures.
import type { AgentState } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { Tier } from '../../../events/agents.ts';
import { agentRegistered, monthlyCreditsGranted } from '../agents/fixtures.ts';

export { AGENT, NOW, agentRegistered, at, charge, funded, later, monthlyCreditsGranted, postPublished } from '../agents/fixtures.ts';

/** Registered at 09:00 on `tier`, cycle 0 granted, `balance_mc` left to spend. */
export function agentWithBalance(balance_mc: number, tier: Tier = 'free'): AgentState {
  return [agentRegistered({ tier }), monthlyCreditsGranted({ amount_mc: balance_mc, balance_after_mc: balance_mc })].reduce(
    agentAggregate.evolve,
    agentAggregate.initialState(),
  );
}
