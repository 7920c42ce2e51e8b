import type { AgentProfileUpdated } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { CommandBus, CommandContext, CommandResult } from '../handler.ts';
import { agentAggregate } from './agent.ts';
import { checkWebhookUrl } from './webhook-url.ts';

export interface UpdateProfile {
  name?: string;
  description?: string | null;
  webhook_url?: string | null;
}

export async function updateProfile(bus: CommandBus, agentId: string, input: UpdateProfile, ctx: CommandContext): Promise<CommandResult> {
  if (input.webhook_url) {
    const problem = checkWebhookUrl(input.webhook_url);
    if (problem) throw new ValidationFailed([{ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' }]);
  }
  if (input.name !== undefined && !input.name.trim()) {
    throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' }]);
  }
  return bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const data: AgentProfileUpdated['data'] = { agent_id: agentId };
      if (input.name !== undefined) data.name = input.name.trim();
      if (input.description !== undefined) data.description = input.description === null ? null : input.description.trim() || null;
      if (input.webhook_url !== undefined) data.webhook_url = input.webhook_url;
      if (Object.keys(data).length === 1) return [];
      return [{ type: 'AgentProfileUpdated', data } satisfies AgentProfileUpdated];
    },
    ctx,
  );
}
