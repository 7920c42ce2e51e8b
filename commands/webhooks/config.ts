import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { SignatureScheme, WebhookConfigured, WebhookSecretRegenerated, WebhookTestFired } from '../../events/webhooks.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { newWebhookSecret } from '../agents/secrets.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { Resolver } from './target.ts';
import { checkResolvedTarget, checkWebhookTarget } from './target.ts';

/** A webhook change as requested (an absent field keeps its current value), with the current settings it applies to. */
export interface WebhookChanges {
  webhook_url?: string | null;
  events?: string[] | null;
  signature_scheme?: SignatureScheme;
  /** The agent's current settings (the webhooks read model); null when none were ever made. */
  current: { webhook_url: string | null; signature_scheme: SignatureScheme | null };
}

/**
 * ConfigureWebhook (free). `allow_loopback` is the deployment's WEBHOOK_ALLOW_LOOPBACK;
 * `resolution_problem` what resolving the resulting URL's host found (null: public, or not resolvable yet).
 */
export type ConfigureWebhook = Command<
  'ConfigureWebhook',
  WebhookChanges & { agent_id: string; allow_loopback: boolean; resolution_problem: string | null },
  { now: Date }
>;

/** The URL a change leaves the webhook with: the requested one, or the current one when the request leaves it out. */
export function resultingWebhookUrl(changes: WebhookChanges): string | null {
  return changes.webhook_url !== undefined ? changes.webhook_url : changes.current.webhook_url;
}

/**
 * The resulting URL must pass the literal check (https, public host) and its resolution must not
 * be refused (422); the agent must exist. Events omitted or null mean every event ([] pauses
 * delivery); the signing scheme defaults to the current one, then to `timestamped`. Configuring
 * again re-enables a webhook disabled by a 410.
 */
export function decideConfigureWebhook(command: ConfigureWebhook, state: AgentState): WebhookConfigured[] {
  const d = command.data;
  const webhookUrl = resultingWebhookUrl(d);
  if (webhookUrl) {
    const problem = checkWebhookTarget(webhookUrl, d.allow_loopback) ?? d.resolution_problem;
    if (problem) throw new ValidationFailed([{ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' }]);
  }
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  return [
    {
      type: 'WebhookConfigured',
      data: {
        agent_id: d.agent_id,
        webhook_url: webhookUrl,
        events: d.events ?? null,
        signature_scheme: d.signature_scheme ?? d.current.signature_scheme ?? 'timestamped',
        configured_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

/** Resolves the resulting URL (only when the literal check passes: a refused URL needs no lookup), then decides. */
export async function configureWebhook(
  bus: CommandBus,
  agentId: string,
  changes: WebhookChanges,
  opts: { resolver: Resolver; allowLoopback: boolean },
  ctx: CommandContext,
) {
  const webhookUrl = resultingWebhookUrl(changes);
  const resolution =
    webhookUrl && checkWebhookTarget(webhookUrl, opts.allowLoopback) === null ? await checkResolvedTarget(webhookUrl, opts.resolver, opts.allowLoopback) : null;
  const command: ConfigureWebhook = {
    type: 'ConfigureWebhook',
    data: { ...changes, agent_id: agentId, allow_loopback: opts.allowLoopback, resolution_problem: resolution },
    metadata: { now: ctx.now },
  };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideConfigureWebhook(command, state), ctx);
}

/** RegenerateWebhookSecret: the new secret's ciphertext (its IV is random) arrives in the metadata. */
export type RegenerateWebhookSecret = Command<'RegenerateWebhookSecret', { agent_id: string }, { now: Date; webhook_secret_enc: string }>;

/** The agent must exist; the new secret replaces the old one at once. */
export function decideRegenerateWebhookSecret(command: RegenerateWebhookSecret, state: AgentState): WebhookSecretRegenerated[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { now, webhook_secret_enc } = command.metadata;
  return [{ type: 'WebhookSecretRegenerated', data: { agent_id: command.data.agent_id, webhook_secret_enc, regenerated_at: now.toISOString() } }];
}

/** The new secret is returned once (null on a retry, which stored nothing); only its ciphertext is stored. */
export async function regenerateWebhookSecret(bus: CommandBus, secrets: SecretBox, agentId: string, ctx: CommandContext) {
  const secret = newWebhookSecret();
  const command: RegenerateWebhookSecret = {
    type: 'RegenerateWebhookSecret',
    data: { agent_id: agentId },
    metadata: { now: ctx.now, webhook_secret_enc: secrets.encrypt(secret) },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decideRegenerateWebhookSecret(command, state), ctx);
  return { secret: result.duplicate ? null : secret, position: result.position };
}

/** FireTestEvent: an svc_ping into the agent's inbox, delivered like any other inbox event; its id derives from the command id. */
export type FireTestEvent = Command<'FireTestEvent', { agent_id: string }, { now: Date; ping_id: string }>;

export function decideFireTestEvent(command: FireTestEvent, state: AgentState): WebhookTestFired[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { now, ping_id } = command.metadata;
  return [{ type: 'WebhookTestFired', data: { agent_id: command.data.agent_id, ping_id, fired_at: now.toISOString() } }];
}

export async function fireTestEvent(bus: CommandBus, agentId: string, ctx: CommandContext) {
  const command: FireTestEvent = {
    type: 'FireTestEvent',
    data: { agent_id: agentId },
    metadata: { now: ctx.now, ping_id: deriveId('ntf', ctx.commandId, 'svc_ping') },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decideFireTestEvent(command, state), ctx);
  const [fired] = result.events;
  return { ping_id: fired.data.ping_id, position: result.position };
}
