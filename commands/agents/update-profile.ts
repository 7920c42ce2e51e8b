import type { AgentProfileUpdated } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from './agent.ts';
import { agentAggregate } from './agent.ts';
import { checkWebhookUrl } from './webhook-url.ts';

/** The fields a profile update may change; an absent field is left as it is. */
export interface ProfileChanges {
  name?: string;
  description?: string | null;
  webhook_url?: string | null;
}

export type UpdateProfile = Command<'UpdateProfile', ProfileChanges & { agent_id: string }, { now: Date }>;

/**
 * A webhook URL must be public https and a name not blank (422); the agent must exist. Names and
 * descriptions are trimmed (a blank description clears it); an update that changes no field appends nothing.
 */
export function decideUpdateProfile(command: UpdateProfile, state: AgentState): AgentProfileUpdated[] {
  const { agent_id, name, description, webhook_url } = command.data;
  if (webhook_url) {
    const problem = checkWebhookUrl(webhook_url);
    if (problem) throw new ValidationFailed([{ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' }]);
  }
  if (name !== undefined && !name.trim()) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' }]);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const data: AgentProfileUpdated['data'] = { agent_id };
  if (name !== undefined) data.name = name.trim();
  if (description !== undefined) data.description = description === null ? null : description.trim() || null;
  if (webhook_url !== undefined) data.webhook_url = webhook_url;
  if (Object.keys(data).length === 1) return [];
  return [{ type: 'AgentProfileUpdated', data }];
}

export function updateProfile(bus: CommandBus, agentId: string, changes: ProfileChanges, ctx: CommandContext) {
  const command: UpdateProfile = { type: 'UpdateProfile', data: { ...changes, agent_id: agentId }, metadata: { now: ctx.now } };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideUpdateProfile(command, state), ctx);
}
