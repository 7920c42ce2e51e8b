import Router from '@koa/router';
import type { Context } from 'koa';
import { configureWebhook, fireTestEvent, regenerateWebhookSecret } from '../../../commands/webhooks/config.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import type { SignatureScheme } from '../../../events/webhooks.ts';
import { DEFAULT_SIGNATURE_SCHEME, LEGACY_SIGNATURE_SCHEME, SIGNATURE_SCHEMES, WEBHOOK_EVENT_NAMES } from '../../../events/webhooks.ts';
import type { Doc } from '../../../projections/store/port.ts';
import { deliveryLog, webhookHealth, webhookOf } from '../../../queries/webhooks/webhooks.ts';
import { requireAgent, requireApiKey, requireSelf } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, validate } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import { mount, operations, queryOf } from '../../operations.ts';
import { DeliveryPage, SecretRegenerated, TestFireAnswer, WebhookConfig, WebhookHealth } from './schemas.ts';
import { ok } from '../schemas.ts';

const patchSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    webhook_url: { type: ['string', 'null'], maxLength: 2048 },
    events: {
      anyOf: [
        { type: 'null' },
        { type: 'array', maxItems: WEBHOOK_EVENT_NAMES.length, uniqueItems: true, items: { type: 'string', enum: [...WEBHOOK_EVENT_NAMES] } },
      ],
    },
    signature_scheme: { type: 'string', enum: [...SIGNATURE_SCHEMES] },
  },
};

const regenerateSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { keep_previous_seconds: { type: 'integer', minimum: 0, maximum: 86400 } },
};

interface PatchBody {
  webhook_url?: string | null;
  events?: string[] | null;
  signature_scheme?: SignatureScheme;
}

function statusOf(hook: Doc): 'not_configured' | 'disabled' | 'paused' | 'active' {
  if (!hook.webhook_url) return 'not_configured';
  if (hook.disabled) return 'disabled';
  return Array.isArray(hook.events) && hook.events.length === 0 ? 'paused' : 'active';
}

/** The webhook settings as shown; `now` (the injected clock) hides a previous secret whose overlap has ended. */
export function configView(hook: Doc, now: Date) {
  return {
    agent_id: hook._id,
    webhook_url: hook.webhook_url ?? null,
    has_secret: typeof hook.secret_enc === 'string',
    events: (hook.events as string[] | null | undefined) ?? null,
    available_events: [...WEBHOOK_EVENT_NAMES],
    // No scheme recorded: a URL set before schemes were recorded signs with the earlier default; none set yet, the default.
    signature_scheme: hook.signature_scheme ?? (hook.webhook_url ? LEGACY_SIGNATURE_SCHEME : DEFAULT_SIGNATURE_SCHEME),
    previous_secret_valid_until:
      typeof hook.previous_valid_until === 'string' && hook.previous_valid_until > now.toISOString() ? hook.previous_valid_until : null,
    status: statusOf(hook),
    disabled_reason: hook.disabled ? (hook.disabled_reason ?? null) : null,
  };
}

export const webhookOperations = operations({
  getProtocolAgentsByIdWebhook: {
    method: 'GET',
    path: '/api/protocol/agents/:id/webhook',
    summary: "Your webhook's configuration and status",
    tags: ['webhooks'],
    auth: 'key',
    responses: ok(WebhookConfig),
  },
  patchProtocolAgentsByIdWebhook: {
    method: 'PATCH',
    path: '/api/protocol/agents/:id/webhook',
    summary: 'Configure your webhook (URL, event filter, signature scheme)',
    tags: ['webhooks'],
    auth: 'key',
    responses: ok(WebhookConfig),
    body: patchSchema,
    bodyOptional: true,
    rateLimit: LIMITS.writes,
  },
  postProtocolAgentsByIdWebhookRegenerateSecret: {
    method: 'POST',
    path: '/api/protocol/agents/:id/webhook/regenerate-secret',
    summary: 'Rotate the webhook secret (the previous one keeps signing for a while)',
    tags: ['webhooks'],
    auth: 'key',
    responses: ok(SecretRegenerated),
    body: regenerateSchema,
    bodyOptional: true,
    rateLimit: LIMITS.writes,
  },
  getAgentWebhooksHealth: {
    method: 'GET',
    path: '/api/agent/webhooks/health',
    summary: 'Webhook health: recent attempts, success rate, pending deliveries',
    tags: ['webhooks'],
    auth: 'key_or_bearer',
    responses: ok(WebhookHealth),
  },
  getAgentWebhooksDeliveries: {
    method: 'GET',
    path: '/api/agent/webhooks/deliveries',
    summary: 'The delivery log (every attempt), paged by the one cursor',
    tags: ['webhooks'],
    auth: 'key_or_bearer',
    responses: ok(DeliveryPage),
    query: queryOf('limit', 'page', 'after'),
  },
  postAgentWebhooksTestFire: {
    method: 'POST',
    path: '/api/agent/webhooks/test-fire',
    summary: 'Send a svc_ping event to your inbox and webhook',
    tags: ['webhooks'],
    auth: 'key_or_bearer',
    responses: ok(TestFireAnswer),
    rateLimit: LIMITS.writes,
  },
});

export function webhookRoutes(router: Router, s: Services): void {
  const own = (ctx: Context) => {
    const agentId = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.id, agentId);
    return agentId;
  };
  const load = async (agentId: string) => {
    const hook = await webhookOf(s.store, agentId);
    if (!hook) throw notFound('Agent', 'agent_not_found');
    return hook;
  };

  const webhook = new Router({ prefix: '/api/protocol/agents/:id/webhook' });
  mount(webhook, webhookOperations.getProtocolAgentsByIdWebhook, async (ctx) => {
    ctx.body = configView(await load(own(ctx)), s.clock.now());
  });

  mount(webhook, webhookOperations.patchProtocolAgentsByIdWebhook, async (ctx) => {
    const agentId = own(ctx);
    s.limiter.hit(LIMITS.writes, agentId, ctx);
    const body = validate<PatchBody>(patchSchema, ctx.request.body ?? {});
    const current = await load(agentId);
    const r = await configureWebhook(
      s.bus,
      agentId,
      {
        ...body,
        current: {
          webhook_url: (current.webhook_url as string | null | undefined) ?? null,
          signature_scheme: (current.signature_scheme as SignatureScheme | undefined) ?? null,
        },
      },
      { resolver: s.resolver, allowLoopback: s.config.webhookAllowLoopback },
      commandContext(s, ctx, agentId),
    );
    await settled(s, r.position);
    ctx.body = configView(await load(agentId), s.clock.now());
  });

  mount(webhook, webhookOperations.postProtocolAgentsByIdWebhookRegenerateSecret, async (ctx) => {
    const agentId = own(ctx);
    s.limiter.hit(LIMITS.writes, agentId, ctx);
    const body = validate<{ keep_previous_seconds?: number }>(regenerateSchema, ctx.request.body ?? {});
    const r = await regenerateWebhookSecret(s.bus, s.secrets, agentId, body.keep_previous_seconds, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = {
      agent_id: agentId,
      webhook_secret: r.secret,
      previous_secret_valid_until: r.previous_valid_until,
      message:
        'Save webhook_secret now: it is shown once. Deliveries from now on (retries included) are signed with it, and also with the previous secret until previous_secret_valid_until.',
    };
  });
  router.use(webhook.routes());

  const webhooks = new Router({ prefix: '/api/agent/webhooks' });
  mount(webhooks, webhookOperations.getAgentWebhooksHealth, async (ctx) => {
    const agentId = requireAgent(ctx);
    const hook = await load(agentId);
    ctx.body = { ...configView(hook, s.clock.now()), ...(await webhookHealth(s.store, agentId)) };
  });

  /** The delivery log (every attempt), paged by the one cursor: `?after=<cursor>&limit=` (docs/DECISIONS.md "One cursor"). */
  mount(webhooks, webhookOperations.getAgentWebhooksDeliveries, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 50, max: 100 });
    const after = afterCursor(ctx.query);
    ctx.body = { ...(await deliveryLog(s.store, agentId, { after, limit, skip })), page, limit };
  });

  mount(webhooks, webhookOperations.postAgentWebhooksTestFire, async (ctx) => {
    const agentId = writer(s, ctx);
    const hook = await load(agentId);
    const r = await fireTestEvent(s.bus, agentId, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    const view = configView(hook, s.clock.now());
    const wanted = view.events === null || view.events.includes('svc_ping');
    ctx.body = {
      event: 'svc_ping',
      ping_id: r.ping_id,
      in_inbox: true,
      webhook_delivery: view.status === 'active' && wanted ? 'queued' : view.status === 'active' ? 'filtered_out' : view.status,
    };
  });
  router.use(webhooks.routes());
}
