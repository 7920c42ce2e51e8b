// Builders for the webhooks decider specs (full, valid events; fixtures.spec.test.ts checks them
// against the catalogue). The agent's own stream comes from the agents fixtures.
import type {
  WebhookConfigured,
  WebhookDeliveryAttempted,
  WebhookDeliveryQueued,
  WebhookDisabled,
  WebhookSecretRegenerated,
  WebhookTestFired,
} from '../../../events/webhooks.ts';
import { AGENT, at } from '../agents/fixtures.ts';

export { AGENT, HOUR_MS, NOW, agentRegistered, at, funded, later } from '../agents/fixtures.ts';

export const DELIVERY = 'dlv_delivery000000000000';
export const URL_ = 'https://hooks.example.com/in';
export const PING = 'ntf_ping0000000000000000';

export const webhookConfigured = (over: Partial<WebhookConfigured['data']> = {}): WebhookConfigured => ({
  type: 'WebhookConfigured',
  data: { agent_id: AGENT, webhook_url: URL_, events: null, signature_scheme: 'timestamped', configured_at: at(9, 10).toISOString(), ...over },
});
export const webhookSecretRegenerated = (over: Partial<WebhookSecretRegenerated['data']> = {}): WebhookSecretRegenerated => ({
  type: 'WebhookSecretRegenerated',
  data: { agent_id: AGENT, webhook_secret_enc: 'v1.new-secret', regenerated_at: at(9, 10).toISOString(), ...over },
});
export const webhookTestFired = (over: Partial<WebhookTestFired['data']> = {}): WebhookTestFired => ({
  type: 'WebhookTestFired',
  data: { agent_id: AGENT, ping_id: PING, fired_at: at(9, 10).toISOString(), ...over },
});
export const webhookDisabled = (over: Partial<WebhookDisabled['data']> = {}): WebhookDisabled => ({
  type: 'WebhookDisabled',
  data: { agent_id: AGENT, reason: 'The receiver answered 410 Gone', delivery_id: DELIVERY, disabled_at: at(9, 10).toISOString(), ...over },
});

// `delivery-<id>`
export const webhookDeliveryQueued = (over: Partial<WebhookDeliveryQueued['data']> = {}): WebhookDeliveryQueued => ({
  type: 'WebhookDeliveryQueued',
  data: {
    delivery_id: DELIVERY,
    agent_id: AGENT,
    inbox_id: 'ntf_inbox000000000000000',
    event: 'new_dm',
    body: '{"event":"new_dm"}',
    url: URL_,
    queued_at: at(9).toISOString(),
    ...over,
  },
});
export const webhookDeliveryAttempted = (over: Partial<WebhookDeliveryAttempted['data']> = {}): WebhookDeliveryAttempted => ({
  type: 'WebhookDeliveryAttempted',
  data: {
    delivery_id: DELIVERY,
    agent_id: AGENT,
    inbox_id: 'ntf_inbox000000000000000',
    attempt: 1,
    url: URL_,
    status_code: 500,
    outcome: 'failed',
    error: 'HTTP 500',
    duration_ms: 12,
    attempted_at: at(9).toISOString(),
    next_attempt_at: at(9, 0, 30).toISOString(),
    ...over,
  },
});
/** `n` failed attempts, 1..n, the last one of the schedule not retried when `n` is 8. */
export const failedAttempts = (n: number) =>
  Array.from({ length: n }, (_, i) => webhookDeliveryAttempted({ attempt: i + 1, next_attempt_at: i + 1 >= 8 ? null : at(10 + i).toISOString() }));
