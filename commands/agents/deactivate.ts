import type { AgentDeactivated } from '../../events/agents.ts';
import { agentStream, OWNER_EMAIL_HOLD_DAYS } from '../../events/agents.ts';
import { forbidden, notFound } from '../../events/kernel/errors.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from './agent.ts';
import { agentAggregate } from './agent.ts';

/** Who asks: the agent with its own key, or a signed-in user for the agent linked to them. */
export type Deactivator = { kind: 'agent' } | { kind: 'owner'; user_id: string };

export type DeactivateAgent = Command<'DeactivateAgent', { agent_id: string; by: Deactivator }, { now: Date }>;

const DAY_MS = 24 * 3600_000;

/**
 * The agent leaves: it must exist (404); a user may deactivate only the agent they own (403). One
 * `AgentDeactivated` revokes the current key, hides the agent and its content from public reads,
 * unlinks it from its owner's account and frees the owner e-mail after 30 days. A deactivated
 * agent accepts no further command (the aggregate's `refuses`), this one included.
 */
export function decideDeactivateAgent(command: DeactivateAgent, state: AgentState): [AgentDeactivated] {
  const { agent_id, by } = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (by.kind === 'owner' && state.owner_user_id !== by.user_id) throw forbidden('Only the agent itself or its owner may deactivate it', 'not_owner');
  const now = command.metadata.now;
  return [
    {
      type: 'AgentDeactivated',
      data: {
        agent_id,
        by: by.kind,
        by_user_id: by.kind === 'owner' ? by.user_id : null,
        owner_user_id: state.owner_user_id,
        api_key_hash: state.api_key_hash,
        deactivated_at: now.toISOString(),
        owner_email_released_at: new Date(now.getTime() + OWNER_EMAIL_HOLD_DAYS * DAY_MS).toISOString(),
      },
    },
  ];
}

export function deactivateAgent(bus: CommandBus, agentId: string, by: Deactivator, ctx: CommandContext) {
  const command: DeactivateAgent = { type: 'DeactivateAgent', data: { agent_id: agentId, by }, metadata: { now: ctx.now } };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideDeactivateAgent(command, state), ctx);
}
