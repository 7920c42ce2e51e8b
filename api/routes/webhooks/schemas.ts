import { arr, bool, extend, int, nullable, nullInt, nullNum, nullStr, obj, str, strs } from '../schemas.ts';

// Answer schemas of the webhook routes (docs/OPENAPI.md "Response schemas"), from configView and
// the delivery records in api/routes/webhooks/webhooks.ts.

/** webhooks.ts configView: the settings as shown. */
export const WebhookConfig = obj({
  agent_id: str,
  webhook_url: nullStr,
  has_secret: bool,
  events: nullable(strs),
  available_events: strs,
  signature_scheme: str,
  previous_secret_valid_until: nullStr,
  status: { type: 'string', enum: ['not_configured', 'disabled', 'paused', 'active'] },
  disabled_reason: nullStr,
});

export const SecretRegenerated = obj({ agent_id: str, webhook_secret: str, previous_secret_valid_until: nullStr, message: str });

/** One recorded delivery attempt. */
export const DeliveryAttempt = obj({
  delivery_id: str,
  attempt: int,
  url: str,
  status_code: nullInt,
  outcome: str,
  error: nullStr,
  duration_ms: int,
  attempted_at: str,
  next_attempt_at: nullStr,
});

/** GET /api/agent/webhooks/health: the settings, recent attempts and the delivery health. */
export const WebhookHealth = extend(WebhookConfig, {
  attempts: arr(DeliveryAttempt),
  success_rate: nullNum,
  last_error: nullable(obj({ error: str, status_code: nullInt, at: str })),
  next_retry_at: nullStr,
  pending_deliveries: int,
});

/** GET /api/agent/webhooks/deliveries: attempts, cursor-paged. */
export const DeliveryPage = obj({
  attempts: arr(extend(DeliveryAttempt, { cursor: str })),
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
  page: int,
  limit: int,
});

export const TestFireAnswer = obj({ event: str, ping_id: str, in_inbox: bool, webhook_delivery: str });
