import { agentStream } from '../../events/agents.ts';
import { notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { SignatureScheme, WebhookConfigured, WebhookSecretRegenerated, WebhookTestFired } from '../../events/webhooks.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { newWebhookSecret } from '../agents/secrets.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import type { Resolver } from './target.ts';
import { checkResolvedTarget, checkWebhookTarget } from './target.ts';

export interface ConfigureWebhook {
  webhook_url: string | null;
  events: string[] | null;
  signature_scheme: SignatureScheme;
}

/** ConfigureWebhook (free): URL checked literally and by resolution; configuring again re-enables a disabled webhook. */
export async function configureWebhook(
  bus: CommandBus,
  agentId: string,
  input: ConfigureWebhook,
  opts: { resolver: Resolver; allowLoopback: boolean },
  ctx: CommandContext,
) {
  if (input.webhook_url) {
    const problem =
      checkWebhookTarget(input.webhook_url, opts.allowLoopback) ?? (await checkResolvedTarget(input.webhook_url, opts.resolver, opts.allowLoopback));
    if (problem) throw new ValidationFailed([{ loc: ['body', 'webhook_url'], msg: problem, type: 'value_error.url' }]);
  }
  return bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      return [{ type: 'WebhookConfigured', data: { agent_id: agentId, ...input, configured_at: ctx.now.toISOString() } } satisfies WebhookConfigured];
    },
    ctx,
  );
}

/** RegenerateWebhookSecret: the new secret is returned once; only its ciphertext is stored. */
export async function regenerateWebhookSecret(bus: CommandBus, secrets: SecretBox, agentId: string, ctx: CommandContext) {
  const secret = newWebhookSecret();
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      return [
        {
          type: 'WebhookSecretRegenerated',
          data: { agent_id: agentId, webhook_secret_enc: secrets.encrypt(secret), regenerated_at: ctx.now.toISOString() },
        } satisfies WebhookSecretRegenerated,
      ];
    },
    ctx,
  );
  return { secret: result.duplicate ? null : secret, position: result.position };
}

/** FireTestEvent: an svc_ping into the agent's inbox, delivered like any other inbox event. */
export async function fireTestEvent(bus: CommandBus, agentId: string, ctx: CommandContext) {
  const pingId = deriveId('ntf', ctx.commandId, 'svc_ping');
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      return [{ type: 'WebhookTestFired', data: { agent_id: agentId, ping_id: pingId, fired_at: ctx.now.toISOString() } } satisfies WebhookTestFired];
    },
    ctx,
  );
  return { ping_id: pingId, position: result.position };
}
