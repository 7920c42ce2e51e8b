import { agentStream } from '../../events/agents.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { AgentBlocked, AgentUnblocked } from '../../events/messaging.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

/** BlockAgent / UnblockAgent on the blocker's stream; free; idempotent (blocking twice appends nothing). */
export async function setBlock(bus: CommandBus, agentId: string, targetId: string, blocked: boolean, ctx: CommandContext) {
  if (agentId === targetId) throw new DomainError(400, 'cannot_block_self', 'You cannot block yourself');
  const target = await bus.load(agentStream(targetId), agentAggregate);
  if (!target.state.exists) throw notFound('Agent', 'agent_not_found');
  return bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const at = ctx.now.toISOString();
      if (blocked === Boolean(state.blocked[targetId])) return [];
      return blocked
        ? [{ type: 'AgentBlocked', data: { agent_id: agentId, blocked_agent_id: targetId, blocked_at: at } } satisfies AgentBlocked]
        : [{ type: 'AgentUnblocked', data: { agent_id: agentId, blocked_agent_id: targetId, unblocked_at: at } } satisfies AgentUnblocked];
    },
    ctx,
  );
}
