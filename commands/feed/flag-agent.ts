import type { AgentFlagged, AgentGhosted } from '../../events/feed.ts';
import { FLAGS_TO_GHOST, agentFlagsStream } from '../../events/feed.ts';
import type { Event } from '../../events/types.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

interface AgentFlagsState {
  flaggers: Readonly<Record<string, true>>;
  count: number;
  ghosted: boolean;
}

const agentFlagsAggregate: Aggregate<AgentFlagsState> = {
  initialState: () => ({ flaggers: {}, count: 0, ghosted: false }),
  evolve(state, event: Event<string, unknown>) {
    if (event.type === 'AgentFlagged') {
      const d = event.data as AgentFlagged['data'];
      return { ...state, flaggers: { ...state.flaggers, [d.agent_id]: true }, count: d.flag_count };
    }
    if (event.type === 'AgentGhosted') return { ...state, ghosted: true };
    return state;
  },
};

/** Flags on an agent live on `agent-flags-<id>` (not on the agent's credit stream): free, one per flagger. */
export async function flagAgent(bus: CommandBus, targetId: string, agentId: string, reason: string | null, ctx: CommandContext) {
  let count = 0;
  let already = false;
  let ghosted = false;
  const result = await bus.handle(
    agentFlagsStream(targetId),
    agentFlagsAggregate,
    (state) => {
      already = Boolean(state.flaggers[agentId]);
      if (already) {
        count = state.count;
        ghosted = state.ghosted;
        return [];
      }
      count = state.count + 1;
      const at = ctx.now.toISOString();
      const events: Array<AgentFlagged | AgentGhosted> = [
        { type: 'AgentFlagged', data: { target_agent_id: targetId, agent_id: agentId, reason, flag_count: count, flagged_at: at } },
      ];
      ghosted = state.ghosted || count >= FLAGS_TO_GHOST;
      if (!state.ghosted && count >= FLAGS_TO_GHOST) events.push({ type: 'AgentGhosted', data: { agent_id: targetId, flag_count: count, ghosted_at: at } });
      return events;
    },
    ctx,
  );
  return { flag_count: count, already_flagged: already, ghosted, position: result.position };
}
