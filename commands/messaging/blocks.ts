import { agentStream } from '../../events/agents.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { AgentBlocked, AgentUnblocked } from '../../events/messaging.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';

interface BlockData {
  agent_id: string;
  target_agent_id: string;
  /** The target agent exists (from its own stream). */
  target_exists: boolean;
}

export type BlockAgent = Command<'BlockAgent', BlockData>;
export type UnblockAgent = Command<'UnblockAgent', BlockData>;

/** Both directions: never oneself, only an agent that exists, and only from an agent that exists. */
function checkTarget({ agent_id, target_agent_id, target_exists }: BlockData, state: AgentState): void {
  if (agent_id === target_agent_id) throw new DomainError(400, 'cannot_block_self', 'You cannot block yourself');
  if (!target_exists) throw notFound('Agent', 'agent_not_found');
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
}

/** BlockAgent (free), on the blocker's stream: blocking an agent already blocked appends nothing. */
export function decideBlockAgent(command: BlockAgent, state: AgentState): AgentBlocked[] {
  checkTarget(command.data, state);
  const { agent_id, target_agent_id } = command.data;
  if (state.blocked[target_agent_id]) return [];
  return [{ type: 'AgentBlocked', data: { agent_id, blocked_agent_id: target_agent_id, blocked_at: command.metadata.now.toISOString() } }];
}

/** UnblockAgent (free), on the blocker's stream: unblocking an agent not blocked appends nothing. */
export function decideUnblockAgent(command: UnblockAgent, state: AgentState): AgentUnblocked[] {
  checkTarget(command.data, state);
  const { agent_id, target_agent_id } = command.data;
  if (!state.blocked[target_agent_id]) return [];
  return [{ type: 'AgentUnblocked', data: { agent_id, blocked_agent_id: target_agent_id, unblocked_at: command.metadata.now.toISOString() } }];
}

/** Blocks (`blocked`) or unblocks `targetId` for `agentId`; the target's existence is read from its stream. */
export async function setBlock(bus: CommandBus, agentId: string, targetId: string, blocked: boolean, ctx: CommandContext) {
  const target = await bus.load(agentStream(targetId), agentAggregate);
  const data: BlockData = { agent_id: agentId, target_agent_id: targetId, target_exists: target.state.exists };
  const metadata = { now: ctx.now };
  const stream = agentStream(agentId);
  if (blocked) {
    const command: BlockAgent = { type: 'BlockAgent', data, metadata };
    return bus.handle<AgentState, AgentBlocked>(stream, agentAggregate, (state) => decideBlockAgent(command, state), ctx);
  }
  const command: UnblockAgent = { type: 'UnblockAgent', data, metadata };
  return bus.handle<AgentState, AgentUnblocked>(stream, agentAggregate, (state) => decideUnblockAgent(command, state), ctx);
}
