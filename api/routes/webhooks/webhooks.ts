import Router from '@koa/router';
import type { Context } from 'koa';
import { configureWebhook, fireTestEvent, regenerateWebhookSecret } from '../../../commands/webhooks/config.ts';
import { requestWebhookReplay } from '../../../commands/webhooks/replay.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { SignatureScheme } from '../../../events/webhooks.ts';
import { DEFAULT_SIGNATURE_SCHEME, LEGACY_SIGNATURE_SCHEME, MAX_REPLAY_DELIVERIES, SIGNATURE_SCHEMES, WEBHOOK_EVENT_NAMES } from '../../../events/webhooks.ts';
import { decodeCursor, START_CURSOR_TOKEN } from '../../../queries/cursor.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { deliveryIdOfLogKey, deliveryLog, deliveryOf, replayRange, webhookHealth, webhookOf } from '../../../queries/webhooks/webhooks.ts';
import { requireAgent, requireApiKey, requireSelf } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, typed } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import { requireSuperAdmin } from '../humans/matches.ts';

/** `POST .../webhooks/replay`: exactly one of `from` (a delivery-log cursor) and `from_time`. */
export interface ReplayRequestBody {
  from?: string;
  from_time?: string;
  to_time?: string;
  limit?: number;
}

export const ReplayBody = typed<ReplayRequestBody>({
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', minLength: 1, maxLength: 512 },
    from_time: { type: 'string', format: 'date-time' },
    to_time: { type: 'string', format: 'date-time' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_REPLAY_DELIVERIES },
  },
});

const ReplayAnswer = {
  type: 'object',
  required: ['replay_id', 'agent_id', 'deliveries', 'first_delivery_id', 'last_delivery_id', 'has_more', 'requested_at'],
  properties: {
    replay_id: { type: 'string', pattern: '^rpl_' },
    agent_id: { type: 'string' },
    deliveries: { type: 'integer', minimum: 0, maximum: MAX_REPLAY_DELIVERIES },
    first_delivery_id: { type: ['string', 'null'] },
    last_delivery_id: { type: ['string', 'null'] },
    has_more: { type: 'boolean' },
    requested_at: { type: 'string' },
  },
};

import { DeliveryPage, SecretRegenerated, TestFireAnswer, WebhookConfig, WebhookHealth } from './schemas.ts';
import { ok } from '../schemas.ts';

interface PatchBody {
  webhook_url?: string | null;
  events?: string[] | null;
  signature_scheme?: SignatureScheme;
}

const patchSchema = typed<PatchBody>({
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
});

const regenerateSchema = typed<{ keep_previous_seconds?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: { keep_previous_seconds: { type: 'integer', minimum: 0, maximum: 86400 } },
});

function statusOf(hook: ReadModel<'webhooks'>): 'not_configured' | 'disabled' | 'paused' | 'active' {
  if (!hook.webhook_url) return 'not_configured';
  if (hook.disabled) return 'disabled';
  return Array.isArray(hook.events) && hook.events.length === 0 ? 'paused' : 'active';
}

/** The webhook settings as shown; `now` (the injected clock) hides a previous secret whose overlap has ended. */
export function configView(hook: ReadModel<'webhooks'>, now: Date) {
  return {
    agent_id: hook._id,
    webhook_url: hook.webhook_url ?? null,
    has_secret: typeof hook.secret_enc === 'string',
    events: hook.events ?? null,
    available_events: [...WEBHOOK_EVENT_NAMES],
    // No webhook configured: the scheme a newly configured one gets; a URL set before schemes were recorded signs with `timestamped`.
    signature_scheme: hook.webhook_url ? (hook.signature_scheme ?? LEGACY_SIGNATURE_SCHEME) : DEFAULT_SIGNATURE_SCHEME,
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
    query: queryOf({ limit: limitQuery(100, 50) }, 'page', 'after'),
  },
  postAgentWebhooksReplay: {
    method: 'POST',
    path: '/api/agent/webhooks/replay',
    summary: 'Replay your past webhook deliveries from a delivery cursor or a time (original ids, fresh signatures, original order)',
    tags: ['webhooks'],
    auth: 'key',
    body: ReplayBody,
    bodyOptional: true,
    rateLimit: LIMITS.webhook_replays,
    responses: { 202: { description: 'Replay queued', schema: ReplayAnswer } },
    errors: [404, 409],
  },
  postAdminAgentsByAgentIdWebhooksReplay: {
    method: 'POST',
    path: '/api/admin/agents/:agent_id/webhooks/replay',
    summary: "Super admin: replay an agent's past webhook deliveries (as the agent's own replay route)",
    tags: ['webhooks'],
    auth: 'admin',
    body: ReplayBody,
    bodyOptional: true,
    // The replayed agent's window (the one its own replays count in), whoever asks.
    rateLimit: { ...LIMITS.webhook_replays, per: (ctx) => String(ctx.params.agent_id) },
    responses: { 202: { description: 'Replay queued', schema: ReplayAnswer } },
    errors: [409],
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

/**
 * A replay request (both routes and the console form, each counting the agent's LIMITS.webhook_replays
 * first): loads what it decides on (the webhook's state, the owner of the delivery the cursor names,
 * the deliveries in the range), records it and answers what the replay covers; the webhook worker
 * sends it. `body` is already schema-checked.
 */
export async function replayDeliveries(s: Services, ctx: Context, agentId: string, requestedBy: string, role: 'agent' | 'admin', body: ReplayRequestBody) {
  const hook = await webhookOf(s.store, agentId);
  const limit = body.limit ?? MAX_REPLAY_DELIVERIES;
  let fromSeq: number | undefined;
  let owner: string | null = null;
  if (body.from !== undefined && body.from_time === undefined) {
    const cursor = decodeCursor(body.from);
    if (!cursor)
      throw new DomainError(400, 'invalid_cursor', 'from is not a cursor of the deliveries list (GET /api/agent/webhooks/deliveries), or 0 for the beginning');
    if (body.from !== START_CURSOR_TOKEN) {
      const deliveryId = deliveryIdOfLogKey(cursor.key);
      if (!deliveryId) throw new ValidationFailed([{ loc: ['body', 'from'], msg: 'from must be a cursor of the deliveries list', type: 'value_error.cursor' }]);
      const delivery = await deliveryOf(s.store, deliveryId);
      if (!delivery) throw notFound('Delivery', 'delivery_not_found');
      owner = delivery.agent_id;
      fromSeq = delivery.seq;
    }
  }
  const exactlyOne = (body.from === undefined) !== (body.from_time === undefined);
  const toTime = body.to_time ? new Date(body.to_time).toISOString() : null;
  const fromTime = body.from_time ? new Date(body.from_time).toISOString() : null;
  const candidates =
    hook && exactlyOne && (owner === null || owner === agentId)
      ? await replayRange(s.store, agentId, { fromSeq, fromTime: fromTime ?? undefined, toTime, limit: limit + 1 })
      : [];
  const r = await requestWebhookReplay(
    s.bus,
    {
      agent_id: agentId,
      requested_by: requestedBy,
      requested_by_role: role,
      from_cursor: body.from ?? null,
      from_time: fromTime,
      to_time: toTime,
      limit,
      agent_exists: hook !== null,
      webhook: !hook?.webhook_url ? 'not_configured' : hook.disabled ? 'disabled' : 'active',
      from_delivery_agent_id: owner,
      candidates,
    },
    commandContext(s, ctx, requestedBy),
  );
  await settled(s, r.position);
  const ids = r.replay.delivery_ids;
  return {
    replay_id: r.replay.replay_id,
    agent_id: agentId,
    deliveries: r.replay.deliveries,
    first_delivery_id: ids[0] ?? null,
    last_delivery_id: ids[ids.length - 1] ?? null,
    has_more: r.replay.has_more,
    requested_at: r.replay.requested_at,
  };
}

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

  mount(webhook, webhookOperations.patchProtocolAgentsByIdWebhook, async (ctx, input) => {
    const agentId = own(ctx);
    const body = input.body;
    const current = await load(agentId);
    const r = await configureWebhook(
      s.bus,
      agentId,
      {
        ...body,
        current: {
          webhook_url: current.webhook_url ?? null,
          signature_scheme: current.signature_scheme ?? null,
        },
      },
      { resolver: s.resolver, allowLoopback: s.config.webhookAllowLoopback },
      commandContext(s, ctx, agentId),
    );
    await settled(s, r.position);
    ctx.body = configView(await load(agentId), s.clock.now());
  });

  mount(webhook, webhookOperations.postProtocolAgentsByIdWebhookRegenerateSecret, async (ctx, input) => {
    const agentId = own(ctx);
    const body = input.body;
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
  mount(webhooks, webhookOperations.postAgentWebhooksReplay, async (ctx, input) => {
    const agentId = requireApiKey(ctx);
    ctx.status = 202;
    ctx.body = await replayDeliveries(s, ctx, agentId, agentId, 'agent', input.body);
  });
  router.use(webhooks.routes());

  const admin = new Router({ prefix: '/api/admin/agents/:agent_id/webhooks' });
  mount(admin, webhookOperations.postAdminAgentsByAgentIdWebhooksReplay, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    ctx.status = 202;
    ctx.body = await replayDeliveries(s, ctx, ctx.params.agent_id, adminId, 'admin', input.body);
  });
  router.use(admin.routes());
}
