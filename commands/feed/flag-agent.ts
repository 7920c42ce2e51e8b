import type { AgentFlagged, AgentGhosted } from '../../events/feed.ts';
import { agentFlagsStream } from '../../events/feed.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { AgentFlagWithdrawn, ModerationAppealed, ModerationDecided } from '../../events/moderation.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import type { FlagLedger, FlaggerFacts } from './flag-rule.ts';
import { countingFlags, decideFlag, emptyLedger, evolveLedger, mustHaveFlag, standingFlags } from './flag-rule.ts';

/** The events of `agent-flags-<id>`: the flags on an agent and their moderation. */
export type AgentFlagsEvent = AgentFlagged | AgentGhosted | AgentFlagWithdrawn | ModerationDecided | ModerationAppealed;

export interface AgentFlagsState {
  ledger: FlagLedger;
}

export const agentFlagsAggregate: Aggregate<AgentFlagsState, AgentFlagsEvent> = {
  initialState: () => ({ ledger: emptyLedger() }),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentFlagged':
        // A flag written before the weight rule (no `weight`) counts.
        return { ledger: evolveLedger(state.ledger, { kind: 'flagged', flagger: event.data.agent_id, counts: (event.data.weight ?? 'counts') === 'counts' }) };
      case 'AgentFlagWithdrawn':
        return { ledger: evolveLedger(state.ledger, { kind: 'withdrawn', flagger: event.data.agent_id }) };
      case 'AgentGhosted':
        return { ledger: evolveLedger(state.ledger, { kind: 'ghosted' }) };
      case 'ModerationDecided':
        return { ledger: evolveLedger(state.ledger, { kind: 'decided', event }) };
      case 'ModerationAppealed':
        return { ledger: evolveLedger(state.ledger, { kind: 'appealed' }) };
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

export type FlagAgent = Command<'FlagAgent', { target_agent_id: string; agent_id: string; reason: string | null; facts: FlaggerFacts }>;

/** Never oneself. One standing flag per flagger (a repeat appends nothing); the 5th counting flag ghosts the agent in the same append. */
export function decideFlagAgent(command: FlagAgent, state: AgentFlagsState): AgentFlagsEvent[] {
  const { target_agent_id, agent_id, reason, facts } = command.data;
  if (target_agent_id === agent_id) throw new DomainError(400, 'cannot_flag_self', 'You cannot flag yourself');
  const outcome = decideFlag(state.ledger, agent_id, facts, command.metadata.now);
  if (!outcome.fresh) return [];
  const at = command.metadata.now.toISOString();
  const events: AgentFlagsEvent[] = [
    {
      type: 'AgentFlagged',
      data: { target_agent_id, agent_id, reason, flag_count: outcome.standing, flagged_at: at, weight: outcome.weight, counting_count: outcome.counting },
    },
  ];
  if (outcome.hides) events.push({ type: 'AgentGhosted', data: { agent_id: target_agent_id, flag_count: outcome.counting, ghosted_at: at } });
  return events;
}

/** Flags on an agent live on `agent-flags-<id>` (not on the agent's credit stream): free, one per flagger. */
export async function flagAgent(bus: CommandBus, targetId: string, agentId: string, reason: string | null, facts: FlaggerFacts, ctx: CommandContext) {
  const command: FlagAgent = { type: 'FlagAgent', data: { target_agent_id: targetId, agent_id: agentId, reason, facts }, metadata: { now: ctx.now } };
  const result = await bus.handle(agentFlagsStream(targetId), agentFlagsAggregate, (state) => decideFlagAgent(command, state), ctx);
  const flagged = result.events.find((e) => e.type === 'AgentFlagged');
  return {
    flag_count: standingFlags(result.state.ledger),
    counting_flags: countingFlags(result.state.ledger),
    counts: flagged?.type === 'AgentFlagged' ? flagged.data.weight === 'counts' : result.state.ledger.flags[agentId] === true,
    already_flagged: !flagged,
    ghosted: result.state.ledger.hidden,
    position: result.position,
  };
}

export type WithdrawAgentFlag = Command<'WithdrawAgentFlag', { target_agent_id: string; agent_id: string }>;

export function decideWithdrawAgentFlag(command: WithdrawAgentFlag, state: AgentFlagsState): AgentFlagWithdrawn[] {
  const { target_agent_id, agent_id } = command.data;
  mustHaveFlag(state.ledger, agent_id);
  return [
    {
      type: 'AgentFlagWithdrawn',
      data: { target_agent_id, agent_id, flag_count: standingFlags(state.ledger) - 1, withdrawn_at: command.metadata.now.toISOString() },
    },
  ];
}

export async function withdrawAgentFlag(bus: CommandBus, targetId: string, agentId: string, ctx: CommandContext) {
  const command: WithdrawAgentFlag = { type: 'WithdrawAgentFlag', data: { target_agent_id: targetId, agent_id: agentId }, metadata: { now: ctx.now } };
  const result = await bus.handle(agentFlagsStream(targetId), agentFlagsAggregate, (state) => decideWithdrawAgentFlag(command, state), ctx);
  return { flag_count: standingFlags(result.state.ledger), counting_flags: countingFlags(result.state.ledger), position: result.position };
}
