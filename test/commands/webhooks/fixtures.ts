// The webhooks decider specs' events: the shared builders (test/fixtures/events.ts) with this area's
// ids, names and times as defaults. The agent's own stream comes from the agents fixtures.
import * as events from '../../fixtures/events.ts';
import { time } from '../../fixtures/events.ts';
import { AGENT } from '../agents/fixtures.ts';

export { AGENT, HOUR_MS, NOW, agentRegistered, at, funded, later } from '../agents/fixtures.ts';

export const DELIVERY = 'dlv_delivery000000000000';
export const URL_ = 'https://hooks.example.com/in';
export const PING = 'ntf_ping0000000000000000';

export const webhookConfigured = events.webhookConfigured.with(() => ({
  agent_id: AGENT,
  webhook_url: URL_,
  events: null,
  signature_scheme: 'timestamped',
  configured_at: time(9, 10),
}));
export const webhookSecretRegenerated = events.webhookSecretRegenerated.with(() => ({ agent_id: AGENT, regenerated_at: time(9, 10) }));
export const webhookSecretRotated = events.webhookSecretRotated.with(() => ({
  agent_id: AGENT,
  webhook_secret_enc: 'v1.new-secret',
  rotated_at: time(9, 10),
  previous_valid_until: null,
}));
export const webhookTestFired = events.webhookTestFired.with(() => ({ agent_id: AGENT, ping_id: PING, fired_at: time(9, 10) }));
export const webhookDisabled = events.webhookDisabled.with(() => ({
  agent_id: AGENT,
  reason: 'The receiver answered 410 Gone',
  delivery_id: DELIVERY,
  disabled_at: time(9, 10),
}));

// `delivery-<id>`
export const webhookDeliveryQueued = events.webhookDeliveryQueued.with(() => ({
  delivery_id: DELIVERY,
  agent_id: AGENT,
  inbox_id: 'ntf_inbox000000000000000',
  event: 'new_dm',
  body: '{"event":"new_dm"}',
  url: URL_,
  queued_at: time(9),
}));
export const webhookDeliveryAttempted = events.webhookDeliveryAttempted.with(() => ({
  delivery_id: DELIVERY,
  agent_id: AGENT,
  inbox_id: 'ntf_inbox000000000000000',
  url: URL_,
  status_code: 500,
  outcome: 'failed',
  error: 'HTTP 500',
  attempted_at: time(9),
  next_attempt_at: time(9, 0, 30),
}));
/** `n` failed attempts, 1..n, the last one of the schedule not retried when `n` is 8. */
export const failedAttempts = (n: number) =>
  Array.from({ length: n }, (_, i) => webhookDeliveryAttempted({ attempt: i + 1, next_attempt_at: i + 1 >= 8 ? null : time(10 + i) }));

// `replay-<id>`
export const REPLAY = 'rpl_replay00000000000000';
export const DELIVERY_2 = 'dlv_delivery200000000000';
export const webhookReplayRequested = events.webhookReplayRequested.with(() => ({
  replay_id: REPLAY,
  agent_id: AGENT,
  requested_by: AGENT,
  delivery_ids: [DELIVERY, DELIVERY_2],
  deliveries: 2,
  requested_at: time(9, 20),
}));
export const webhookReplayAttempted = events.webhookReplayAttempted.with(() => ({
  replay_id: REPLAY,
  delivery_id: DELIVERY,
  agent_id: AGENT,
  inbox_id: 'ntf_inbox000000000000000',
  url: URL_,
  attempted_at: time(9, 25),
}));
