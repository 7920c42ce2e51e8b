import type { Event, JsonSchema } from './types.ts';
import { isoDate, nullable } from './types.ts';

/** Inbox event names a webhook can receive (the `events` filter values). `room_post_reply` is the older name of `new_comment`. */
export const WEBHOOK_EVENT_NAMES = ['new_dm', 'new_match', 'new_comment', 'room_post_reply', 'a2a_message', 'svc_ping'] as const;

/** `timestamped` = variant B (default: HMAC over `<timestamp>.<body>`); `body` = variant A (HMAC over the body). */
export type SignatureScheme = 'timestamped' | 'body';

/** On `agent-<id>`: the webhook's URL, event filter (null = all, [] = paused) and signing variant. */
export type WebhookConfigured = Event<
  'WebhookConfigured',
  {
    agent_id: string;
    webhook_url: string | null;
    events: string[] | null;
    signature_scheme: SignatureScheme;
    configured_at: string;
  }
>;

/** On `agent-<id>`: a new secret (AES-256-GCM ciphertext); the old one stops signing at once. */
export type WebhookSecretRegenerated = Event<'WebhookSecretRegenerated', { agent_id: string; webhook_secret_enc: string; regenerated_at: string }>;

/** On `agent-<id>`: a test event (svc_ping) for the agent's inbox and webhook. */
export type WebhookTestFired = Event<'WebhookTestFired', { agent_id: string; ping_id: string; fired_at: string }>;

/** On `agent-<id>`: the receiver answered 410 Gone; deliveries stop until the webhook is configured again. */
export type WebhookDisabled = Event<'WebhookDisabled', { agent_id: string; reason: string; delivery_id: string; disabled_at: string }>;

/** On `delivery-<id>`: one inbox event to deliver to one webhook. The body is fixed here, so every retry sends the same bytes. */
export type WebhookDeliveryQueued = Event<
  'WebhookDeliveryQueued',
  {
    delivery_id: string;
    agent_id: string;
    inbox_id: string;
    event: string;
    body: string;
    url: string;
    queued_at: string;
  }
>;

export type DeliveryOutcome = 'delivered' | 'failed' | 'gone' | 'refused' | 'given_up';

/** On `delivery-<id>`: one attempt and its result; `next_attempt_at` is the retry time (null: no retry). */
export type WebhookDeliveryAttempted = Event<
  'WebhookDeliveryAttempted',
  {
    delivery_id: string;
    agent_id: string;
    inbox_id: string;
    attempt: number;
    url: string;
    status_code: number | null;
    outcome: DeliveryOutcome;
    error: string | null;
    duration_ms: number;
    attempted_at: string;
    next_attempt_at: string | null;
  }
>;

export type WebhookEvent = WebhookConfigured | WebhookSecretRegenerated | WebhookTestFired | WebhookDisabled | WebhookDeliveryQueued | WebhookDeliveryAttempted;

export const deliveryStream = (deliveryId: string) => `delivery-${deliveryId}`;

const agentId = { type: 'string', pattern: '^agt_' };
const deliveryId = { type: 'string', pattern: '^dlv_' };
const strict = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

export const webhookEventSchemas: Record<string, JsonSchema> = {
  WebhookConfigured: strict({
    agent_id: agentId,
    webhook_url: nullable({ type: 'string', pattern: '^https?://' }),
    events: nullable({ type: 'array', items: { enum: [...WEBHOOK_EVENT_NAMES] }, uniqueItems: true }),
    signature_scheme: { enum: ['timestamped', 'body'] },
    configured_at: isoDate,
  }),
  WebhookSecretRegenerated: strict({ agent_id: agentId, webhook_secret_enc: { type: 'string' }, regenerated_at: isoDate }),
  WebhookTestFired: strict({ agent_id: agentId, ping_id: { type: 'string', pattern: '^ntf_' }, fired_at: isoDate }),
  WebhookDisabled: strict({ agent_id: agentId, reason: { type: 'string' }, delivery_id: deliveryId, disabled_at: isoDate }),
  WebhookDeliveryQueued: strict({
    delivery_id: deliveryId,
    agent_id: agentId,
    inbox_id: { type: 'string' },
    event: { type: 'string' },
    body: { type: 'string' },
    url: { type: 'string', pattern: '^https?://' },
    queued_at: isoDate,
  }),
  WebhookDeliveryAttempted: strict({
    delivery_id: deliveryId,
    agent_id: agentId,
    inbox_id: { type: 'string' },
    attempt: { type: 'integer', minimum: 1 },
    url: { type: 'string' },
    status_code: nullable({ type: 'integer' }),
    outcome: { enum: ['delivered', 'failed', 'gone', 'refused', 'given_up'] },
    error: nullable({ type: 'string' }),
    duration_ms: { type: 'integer', minimum: 0 },
    attempted_at: isoDate,
    next_attempt_at: nullable(isoDate),
  }),
};
