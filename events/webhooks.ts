import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate, Literals, Nullable } from './types.ts';

/** Inbox event names a webhook can receive (the `events` filter values). `room_post_reply` is the older name of `new_comment`. */
export const WEBHOOK_EVENT_NAMES = [
  'new_dm',
  'new_match',
  'new_comment',
  'room_post_reply',
  'a2a_message',
  'mention',
  'svc_ping',
  'moderation_decision',
] as const;

export const SIGNATURE_SCHEMES = ['delivery_timestamped', 'timestamped', 'body', 'standard_webhooks'] as const;
/**
 * `timestamped` = the interface's variant B (HMAC over `<timestamp>.<body>`, the default of every
 * newly configured webhook); `delivery_timestamped` = HMAC over `<delivery id>.<timestamp>.<body>`
 * (also binds the delivery id; webhooks that were configured with it keep it); `body` = variant A
 * (HMAC over the body); `standard_webhooks` = the Standard Webhooks specification (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature: v1,<base64>`).
 */
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
/** The scheme a newly configured webhook gets when none was chosen: variant B, which a receiver written from the interface alone verifies. */
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'timestamped';
/** The scheme of a webhook set before schemes were recorded (at registration or by `AgentProfileUpdated`). */
export const LEGACY_SIGNATURE_SCHEME: SignatureScheme = 'timestamped';
/** How long the previous secret keeps signing after a rotation. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600_000;

const DELIVERY_OUTCOMES = ['delivered', 'failed', 'gone', 'refused', 'given_up'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

const DeliveryId = Type.String({ pattern: '^dlv_' });

/** On `agent-<id>`: the webhook's URL, event filter (null = all, [] = paused) and signing variant. */
export const WebhookConfiguredData = Data({
  agent_id: AgentId,
  webhook_url: Nullable(Type.String({ pattern: '^https?://' })),
  // Typed `string[]` (as the request body gives it); the schema admits the known names only.
  events: Nullable(Type.Array(Type.String({ enum: [...WEBHOOK_EVENT_NAMES] }), { uniqueItems: true })),
  signature_scheme: Literals(SIGNATURE_SCHEMES),
  configured_at: IsoDate,
});
export type WebhookConfigured = Event<'WebhookConfigured', Static<typeof WebhookConfiguredData>>;

/** On `agent-<id>`: a new secret (AES-256-GCM ciphertext); the old one stops signing at once. Written before rotations kept the previous secret; now `WebhookSecretRotated`. */
export const WebhookSecretRegeneratedData = Data({ agent_id: AgentId, webhook_secret_enc: Type.String(), regenerated_at: IsoDate });
export type WebhookSecretRegenerated = Event<'WebhookSecretRegenerated', Static<typeof WebhookSecretRegeneratedData>>;

/**
 * On `agent-<id>`: a new secret (AES-256-GCM ciphertext). The secret it replaces keeps signing,
 * beside the new one, until `previous_valid_until` (null: it stops at once).
 */
export const WebhookSecretRotatedData = Data({
  agent_id: AgentId,
  webhook_secret_enc: Type.String(),
  previous_valid_until: Nullable(IsoDate),
  rotated_at: IsoDate,
});
export type WebhookSecretRotated = Event<'WebhookSecretRotated', Static<typeof WebhookSecretRotatedData>>;

/** On `agent-<id>`: a test event (svc_ping) for the agent's inbox and webhook. */
export const WebhookTestFiredData = Data({ agent_id: AgentId, ping_id: Type.String({ pattern: '^ntf_' }), fired_at: IsoDate });
export type WebhookTestFired = Event<'WebhookTestFired', Static<typeof WebhookTestFiredData>>;

/** On `agent-<id>`: the receiver answered 410 Gone; deliveries stop until the webhook is configured again. */
export const WebhookDisabledData = Data({ agent_id: AgentId, reason: Type.String(), delivery_id: DeliveryId, disabled_at: IsoDate });
export type WebhookDisabled = Event<'WebhookDisabled', Static<typeof WebhookDisabledData>>;

/** On `delivery-<id>`: one inbox event to deliver to one webhook. The body is fixed here, so every retry sends the same bytes. */
export const WebhookDeliveryQueuedData = Data({
  delivery_id: DeliveryId,
  agent_id: AgentId,
  inbox_id: Type.String(),
  event: Type.String(),
  body: Type.String(),
  url: Type.String({ pattern: '^https?://' }),
  /** The inbox cursor of the entry (`X-Svc-Cursor`; also in the body). Absent in deliveries queued before cursors. */
  cursor: Type.Optional(Type.String()),
  queued_at: IsoDate,
});
export type WebhookDeliveryQueued = Event<'WebhookDeliveryQueued', Static<typeof WebhookDeliveryQueuedData>>;

/** On `delivery-<id>`: one attempt and its result; `next_attempt_at` is the retry time (null: no retry). */
export const WebhookDeliveryAttemptedData = Data({
  delivery_id: DeliveryId,
  agent_id: AgentId,
  inbox_id: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  url: Type.String(),
  status_code: Nullable(Type.Integer()),
  outcome: Literals(DELIVERY_OUTCOMES),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer({ minimum: 0 }),
  attempted_at: IsoDate,
  next_attempt_at: Nullable(IsoDate),
});
export type WebhookDeliveryAttempted = Event<'WebhookDeliveryAttempted', Static<typeof WebhookDeliveryAttemptedData>>;

/** At most this many deliveries per replay request (`limit` defaults to it). */
export const MAX_REPLAY_DELIVERIES = 1000;

const ReplayId = Type.String({ pattern: '^rpl_' });

/**
 * On `replay-<id>`: an agent (or a super admin for it) asked for past deliveries to be sent again,
 * in their original order, each under its original delivery id. `delivery_ids` is the whole
 * range (oldest first); the attempts follow as `WebhookReplayAttempted` on the same stream.
 */
export const WebhookReplayRequestedData = Data({
  replay_id: ReplayId,
  agent_id: AgentId,
  /** The agent's id, or the super admin's user id. */
  requested_by: Type.String(),
  requested_by_role: Literals(['agent', 'admin'] as const),
  from_cursor: Nullable(Type.String()),
  from_time: Nullable(IsoDate),
  to_time: Nullable(IsoDate),
  limit: Type.Integer({ minimum: 1, maximum: MAX_REPLAY_DELIVERIES }),
  delivery_ids: Type.Array(DeliveryId, { maxItems: MAX_REPLAY_DELIVERIES }),
  deliveries: Type.Integer({ minimum: 0, maximum: MAX_REPLAY_DELIVERIES }),
  /** More deliveries of the range existed past `limit` (not replayed). */
  has_more: Type.Boolean(),
  requested_at: IsoDate,
});
export type WebhookReplayRequested = Event<'WebhookReplayRequested', Static<typeof WebhookReplayRequestedData>>;

/**
 * On `replay-<id>`: one attempt to send delivery number `index` (0-based in `delivery_ids`) of a
 * replay; `attempt` counts within this replay. A `given_up`, `refused` or `gone` outcome stops the
 * replay (the later deliveries are not sent, so nothing arrives out of order).
 */
export const WebhookReplayAttemptedData = Data({
  replay_id: ReplayId,
  delivery_id: DeliveryId,
  agent_id: AgentId,
  inbox_id: Type.String(),
  index: Type.Integer({ minimum: 0 }),
  attempt: Type.Integer({ minimum: 1 }),
  url: Type.String(),
  status_code: Nullable(Type.Integer()),
  outcome: Literals(DELIVERY_OUTCOMES),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer({ minimum: 0 }),
  attempted_at: IsoDate,
  next_attempt_at: Nullable(IsoDate),
});
export type WebhookReplayAttempted = Event<'WebhookReplayAttempted', Static<typeof WebhookReplayAttemptedData>>;

export type WebhookEvent =
  | WebhookConfigured
  | WebhookSecretRegenerated
  | WebhookSecretRotated
  | WebhookTestFired
  | WebhookDisabled
  | WebhookDeliveryQueued
  | WebhookDeliveryAttempted
  | WebhookReplayRequested
  | WebhookReplayAttempted;

export const webhookEventSchemas = {
  WebhookConfigured: WebhookConfiguredData,
  WebhookSecretRegenerated: WebhookSecretRegeneratedData,
  WebhookSecretRotated: WebhookSecretRotatedData,
  WebhookTestFired: WebhookTestFiredData,
  WebhookDisabled: WebhookDisabledData,
  WebhookDeliveryQueued: WebhookDeliveryQueuedData,
  WebhookDeliveryAttempted: WebhookDeliveryAttemptedData,
  WebhookReplayRequested: WebhookReplayRequestedData,
  WebhookReplayAttempted: WebhookReplayAttemptedData,
};

export const deliveryStream = (deliveryId: string) => `delivery-${deliveryId}`;
export const replayStream = (replayId: string) => `replay-${replayId}`;
