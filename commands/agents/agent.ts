import type { Tier } from '../../events/agents.ts';
import type { Charge, Event } from '../../events/types.ts';
import type { Aggregate } from '../handler.ts';

/** The decision state of an agent: everything a command on `agent-<id>` needs, folded from its stream. */
export interface AgentState {
  exists: boolean;
  agent_id: string;
  name: string;
  tier: Tier;
  registered_at: string;
  balance_mc: number;
  /** Spent in the current cycle. */
  used_mc: number;
  cycle: number;
  next_grant_at: string | null;
}

const initial = (): AgentState => ({
  exists: false,
  agent_id: '',
  name: '',
  tier: 'free',
  registered_at: '',
  balance_mc: 0,
  used_mc: 0,
  cycle: -1,
  next_grant_at: null,
});

function chargeOf(data: unknown): Charge | null {
  if (typeof data === 'object' && data !== null && 'charge' in data) {
    const c = (data as { charge: unknown }).charge;
    if (typeof c === 'object' && c !== null) return c as Charge;
  }
  return null;
}

export const agentAggregate: Aggregate<AgentState> = {
  initial,
  evolve(state, event: Event<string, unknown>) {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'AgentRegistered':
        return {
          ...state,
          exists: true,
          agent_id: data.agent_id as string,
          name: data.name as string,
          tier: data.tier as Tier,
          registered_at: data.registered_at as string,
        };
      case 'AgentProfileUpdated':
        return typeof data.name === 'string' ? { ...state, name: data.name } : state;
      case 'MonthlyCreditsGranted':
        return {
          ...state,
          balance_mc: data.balance_after_mc as number,
          used_mc: 0,
          cycle: data.cycle as number,
          next_grant_at: data.next_grant_at as string,
        };
      default: {
        // Every credit-consuming event carries its charge: the credit building block folds it here.
        const c = chargeOf(data);
        if (!c) return state;
        return { ...state, balance_mc: c.balance_after_mc, used_mc: state.used_mc + c.amount_mc };
      }
    }
  },
};

export { chargeOf };
