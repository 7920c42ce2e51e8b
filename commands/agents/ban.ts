import type { AgentBanned } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import { notFound } from '../../events/kernel/errors.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from './agent.ts';
import { agentAggregate } from './agent.ts';

export type BanAgent = Command<'BanAgent', { agent_id: string; admin_user_id: string; reason: string }, { now: Date }>;

/**
 * A super admin bans an agent (the route checks the role): it must exist (404); a banned or
 * deactivated one refuses through the aggregate (410). One `AgentBanned` revokes the current key,
 * hides the agent and its content from public reads, unlinks it from its owner's account and
 * holds the owner e-mail for good.
 */
export function decideBanAgent(command: BanAgent, state: AgentState): [AgentBanned] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { agent_id, admin_user_id, reason } = command.data;
  return [
    {
      type: 'AgentBanned',
      data: {
        agent_id,
        by_user_id: admin_user_id,
        reason,
        owner_user_id: state.owner_user_id,
        api_key_hash: state.api_key_hash,
        banned_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export function banAgent(bus: CommandBus, input: BanAgent['data'], ctx: CommandContext) {
  const command: BanAgent = { type: 'BanAgent', data: input, metadata: { now: ctx.now } };
  return bus.handle(agentStream(input.agent_id), agentAggregate, (state) => decideBanAgent(command, state), ctx);
}
