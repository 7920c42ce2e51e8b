import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { SignatureScheme, WebhookConfigured, WebhookSecretRotated, WebhookTestFired } from '../../events/webhooks.ts';
import { DEFAULT_SIGNATURE_SCHEME, LEGACY_SIGNATURE_SCHEME, SECRET_ROTATION_OVERLAP_MS } from '../../events/webhooks.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { newWebhookSecret } from '../agents/secrets.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { TargetCheckOptions, WebhookUrlFacts } from './target.ts';
import { webhookUrlFacts, webhookUrlProblem } from './target.ts';

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
export type ConfigureWebhook = Command<'ConfigureWebhook', WebhookChanges & WebhookUrlFacts & { agent_id: string }, { now: Date }>;

/** The URL a change leaves the webhook with: the requested one, or the current one when the request leaves it out. */
export function resultingWebhookUrl(changes: WebhookChanges): string | null {
  return changes.webhook_url !== undefined ? changes.webhook_url : changes.current.webhook_url;
}

/**
 * The scheme the configured webhook signs with now: the one recorded, else (a URL set before
 * schemes were recorded) `timestamped`; none when no webhook is configured (a webhook set after
 * the URL was cleared is a new one and gets the default).
 */
export function currentScheme(current: WebhookChanges['current']): SignatureScheme | null {
  if (!current.webhook_url) return null;
  return current.signature_scheme ?? LEGACY_SIGNATURE_SCHEME;
}

/** 422 on `body.webhook_url` unless the URL passes the one configuration-time rule (literal check, then resolution). */
export function assertWebhookUrl(url: string | null | undefined, facts: WebhookUrlFacts): void {
  if (!url) return;
  const problem = webhookUrlProblem(url, facts);
  if (problem) throw new ValidationFailed([{ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' }]);
}

/**
 * The resulting URL must pass the literal check (https, public host) and its resolution must not
 * be refused (422); the agent must exist. Events omitted or null mean every event ([] pauses
 * delivery); the signing scheme defaults to the configured webhook's (`timestamped` for a URL set
 * before schemes were recorded), then, for a newly configured webhook, to variant B `timestamped`. Configuring again re-enables a webhook
 * disabled by a 410.
 */
export function decideConfigureWebhook(command: ConfigureWebhook, state: AgentState): WebhookConfigured[] {
  const d = command.data;
  const webhookUrl = resultingWebhookUrl(d);
  assertWebhookUrl(webhookUrl, d);
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  return [
    {
      type: 'WebhookConfigured',
      data: {
        agent_id: d.agent_id,
        webhook_url: webhookUrl,
        events: d.events ?? null,
        signature_scheme: d.signature_scheme ?? currentScheme(d.current) ?? DEFAULT_SIGNATURE_SCHEME,
        configured_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

/** Resolves the resulting URL (only when the literal check passes: a refused URL needs no lookup), then decides. */
export async function configureWebhook(bus: CommandBus, agentId: string, changes: WebhookChanges, opts: TargetCheckOptions, ctx: CommandContext) {
  const facts = await webhookUrlFacts(resultingWebhookUrl(changes), opts);
  const command: ConfigureWebhook = {
    type: 'ConfigureWebhook',
    data: { ...changes, ...facts, agent_id: agentId },
    metadata: { now: ctx.now },
  };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideConfigureWebhook(command, state), ctx);
}

/**
 * RegenerateWebhookSecret: the new secret's ciphertext (its IV is random) arrives in the metadata;
 * `keep_previous_seconds` (0 to 86400, default 86400) is how long the replaced secret keeps signing beside it.
 */
export type RegenerateWebhookSecret = Command<
  'RegenerateWebhookSecret',
  { agent_id: string; keep_previous_seconds?: number },
  { now: Date; webhook_secret_enc: string }
>;

/**
 * The agent must exist. The new secret signs at once; the one it replaces also signs every
 * delivery (a second signature) for 24 hours, or for `keep_previous_seconds` (0: it stops at
 * once, for a leaked secret). A secret replaced earlier stops at once.
 */
export function decideRegenerateWebhookSecret(command: RegenerateWebhookSecret, state: AgentState): WebhookSecretRotated[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { now, webhook_secret_enc } = command.metadata;
  const keepMs = command.data.keep_previous_seconds === undefined ? SECRET_ROTATION_OVERLAP_MS : command.data.keep_previous_seconds * 1000;
  if (!Number.isInteger(keepMs) || keepMs < 0 || keepMs > SECRET_ROTATION_OVERLAP_MS)
    throw new ValidationFailed([
      { loc: ['body', 'keep_previous_seconds'], msg: 'keep_previous_seconds must be an integer from 0 to 86400', type: 'value_error.number' },
    ]);
  return [
    {
      type: 'WebhookSecretRotated',
      data: {
        agent_id: command.data.agent_id,
        webhook_secret_enc,
        previous_valid_until: keepMs === 0 ? null : new Date(now.getTime() + keepMs).toISOString(),
        rotated_at: now.toISOString(),
      },
    },
  ];
}

/** The new secret is returned once (null on a retry, which stored nothing); only its ciphertext is stored. */
export async function regenerateWebhookSecret(
  bus: CommandBus,
  secrets: SecretBox,
  agentId: string,
  keepPreviousSeconds: number | undefined,
  ctx: CommandContext,
) {
  const secret = newWebhookSecret();
  const command: RegenerateWebhookSecret = {
    type: 'RegenerateWebhookSecret',
    data: keepPreviousSeconds === undefined ? { agent_id: agentId } : { agent_id: agentId, keep_previous_seconds: keepPreviousSeconds },
    metadata: { now: ctx.now, webhook_secret_enc: secrets.encrypt(secret) },
  };
  const result = await bus.handle(agentStream(agentId), agentAggregate, (state) => decideRegenerateWebhookSecret(command, state), ctx);
  const [rotated] = result.events;
  return { secret: result.duplicate ? null : secret, previous_valid_until: rotated?.data.previous_valid_until ?? null, position: result.position };
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
