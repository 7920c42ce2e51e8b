import type { AgentProfileUpdated } from '../../events/agents.ts';
import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { AgentState } from './agent.ts';
import { agentAggregate } from './agent.ts';
import type { WebhookConfigured } from '../../events/webhooks.ts';
import type { WebhookChanges } from '../webhooks/config.ts';
import { decideConfigureWebhook } from '../webhooks/config.ts';
import type { TargetCheckOptions, WebhookUrlFacts } from '../webhooks/target.ts';
import { webhookUrlFacts } from '../webhooks/target.ts';

/** The fields a profile update may change; an absent field is left as it is. */
export interface ProfileChanges {
  name?: string;
  description?: string | null;
  webhook_url?: string | null;
}

/** The webhook's present settings, with its events filter (kept when `PATCH /me` sets the URL). */
export type CurrentWebhook = WebhookChanges['current'] & { events: string[] | null };

/**
 * UpdateProfile. With a `webhook_url`, the command also carries the webhook's current settings
 * (the webhooks read model) and the URL's configuration-time facts: the URL is set exactly as
 * `PATCH .../webhook {webhook_url}` would set it.
 */
export type UpdateProfile = Command<
  'UpdateProfile',
  ProfileChanges & { agent_id: string; webhook?: { current: CurrentWebhook } & WebhookUrlFacts },
  { now: Date }
>;

/**
 * A name must not be blank (422); a webhook URL goes through the one webhook rule
 * (`decideConfigureWebhook`: public https, resolution not refused, 422); the agent must exist.
 * Names and descriptions are trimmed (a blank description clears it); an update that changes no
 * field appends nothing. The URL is written as `WebhookConfigured` (its events filter and scheme kept).
 */
export function decideUpdateProfile(command: UpdateProfile, state: AgentState): Array<AgentProfileUpdated | WebhookConfigured> {
  const { agent_id, name, description, webhook_url, webhook } = command.data;
  if (webhook_url !== undefined && !webhook) throw new Error('UpdateProfile with a webhook_url needs the webhook facts');
  const configured =
    webhook_url !== undefined && webhook
      ? decideConfigureWebhook(
          { type: 'ConfigureWebhook', data: { ...webhook, agent_id, webhook_url, events: webhook.current.events }, metadata: command.metadata },
          state,
        )
      : [];
  if (name !== undefined && !name.trim()) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'name must not be blank', type: 'value_error.blank' }]);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const data: AgentProfileUpdated['data'] = { agent_id };
  if (name !== undefined) data.name = name.trim();
  if (description !== undefined) data.description = description === null ? null : description.trim() || null;
  const profile: AgentProfileUpdated[] = Object.keys(data).length === 1 ? [] : [{ type: 'AgentProfileUpdated', data }];
  return [...profile, ...configured];
}

/** `current` is the webhook's present settings (read by the caller from the webhooks read model). */
export async function updateProfile(
  bus: CommandBus,
  agentId: string,
  changes: ProfileChanges,
  webhook: { current: CurrentWebhook; target: TargetCheckOptions },
  ctx: CommandContext,
) {
  const facts = changes.webhook_url !== undefined ? { current: webhook.current, ...(await webhookUrlFacts(changes.webhook_url, webhook.target)) } : undefined;
  const command: UpdateProfile = {
    type: 'UpdateProfile',
    data: { ...changes, agent_id: agentId, ...(facts ? { webhook: facts } : {}) },
    metadata: { now: ctx.now },
  };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideUpdateProfile(command, state), ctx);
}
