import type { AgentFlagged, AgentGhosted } from '../../events/feed.ts';
import { FLAGS_TO_GHOST, agentFlagsStream } from '../../events/feed.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** The events of `agent-flags-<id>`. */
export type AgentFlagsEvent = AgentFlagged | AgentGhosted;

export interface AgentFlagsState {
  flaggers: Readonly<Record<string, true>>;
  count: number;
  ghosted: boolean;
}

export const agentFlagsAggregate: Aggregate<AgentFlagsState, AgentFlagsEvent> = {
  initialState: () => ({ flaggers: {}, count: 0, ghosted: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentFlagged':
        return { ...state, flaggers: { ...state.flaggers, [event.data.agent_id]: true }, count: event.data.flag_count };
      case 'AgentGhosted':
        return { ...state, ghosted: true };
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

export type FlagAgent = Command<'FlagAgent', { target_agent_id: string; agent_id: string; reason: string | null }>;

/** Never oneself. One flag per distinct flagger (a repeat appends nothing); the fifth ghosts the agent in the same append. */
export function decideFlagAgent(command: FlagAgent, state: AgentFlagsState): AgentFlagsEvent[] {
  const { target_agent_id, agent_id, reason } = command.data;
  if (target_agent_id === agent_id) throw new DomainError(400, 'cannot_flag_self', 'You cannot flag yourself');
  if (state.flaggers[agent_id]) return [];
  const count = state.count + 1;
  const at = command.metadata.now.toISOString();
  const events: AgentFlagsEvent[] = [{ type: 'AgentFlagged', data: { target_agent_id, agent_id, reason, flag_count: count, flagged_at: at } }];
  if (!state.ghosted && count >= FLAGS_TO_GHOST) events.push({ type: 'AgentGhosted', data: { agent_id: target_agent_id, flag_count: count, ghosted_at: at } });
  return events;
}

/** Flags on an agent live on `agent-flags-<id>` (not on the agent's credit stream): free, one per flagger. */
export async function flagAgent(bus: CommandBus, targetId: string, agentId: string, reason: string | null, ctx: CommandContext) {
  const command: FlagAgent = { type: 'FlagAgent', data: { target_agent_id: targetId, agent_id: agentId, reason }, metadata: { now: ctx.now } };
  const result = await bus.handle(agentFlagsStream(targetId), agentFlagsAggregate, (state) => decideFlagAgent(command, state), ctx);
  return {
    flag_count: result.state.count,
    already_flagged: !result.events.some((e) => e.type === 'AgentFlagged'),
    ghosted: result.state.ghosted,
    position: result.position,
  };
}
