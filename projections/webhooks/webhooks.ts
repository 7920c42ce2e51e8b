import { LEGACY_SIGNATURE_SCHEME } from '../../events/webhooks.ts';
import { defineProjection, type DataOf, type ProjectionContext, type RecordedOf } from '../types.ts';

/** An agent's webhook; `_id` is the agent id. The secrets are encrypted (AES-256-GCM). */
export type WebhookDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  webhook_url: string | null;
  /** The event names delivered; null: all. */
  events: string[] | null;
  signature_scheme: DataOf<'WebhookConfigured'>['signature_scheme'] | null;
  secret_enc: string;
  secret_regenerated_at?: string;
  /** Rotated: the previous secret also signs until `previous_valid_until`. */
  previous_secret_enc: string | null;
  previous_valid_until: string | null;
  disabled: boolean;
  disabled_reason: string | null;
  disabled_at?: string;
  configured_at: string;
};

/** A webhook delivery of an inbox entry; `_id` is the delivery id. */
export type WebhookDeliveryDoc = {
  _id: string;
  _pos: number;
  delivery_id: string;
  agent_id: string;
  inbox_id: string;
  event: string;
  url: string;
  status: 'pending' | 'delivered' | 'gone' | 'given_up';
  attempts: number;
  next_attempt_at: string | null;
  queued_at: string;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at?: string;
  seq: number;
};

/** A replay of past deliveries; `_id` is the replay id. */
export type WebhookReplayDoc = {
  _id: string;
  _pos: number;
  replay_id: string;
  agent_id: string;
  requested_by: string;
  requested_by_role: DataOf<'WebhookReplayRequested'>['requested_by_role'];
  /** How many deliveries it replays, and their ids. */
  deliveries: number;
  delivery_ids: string[];
  sent: number;
  status: 'pending' | 'completed' | 'stopped';
  next_attempt_at: string | null;
  requested_at: string;
  last_outcome?: DataOf<'WebhookReplayAttempted'>['outcome'];
  last_error?: string | null;
  last_attempt_at?: string;
  seq: number;
};

/** One attempt of a delivery or of a replay's delivery (`replay_id` set); `_id` names delivery, replay and attempt. */
export type WebhookAttemptDoc = DataOf<'WebhookDeliveryAttempted'> & {
  _id: string;
  _pos: number;
  replay_id?: string;
  index?: number;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    webhooks: WebhookDoc;
    webhook_deliveries: WebhookDeliveryDoc;
    webhook_replays: WebhookReplayDoc;
    webhook_attempts: WebhookAttemptDoc;
  }
}

/**
 * Webhook configuration per agent (`webhooks`, with the secret still encrypted), deliveries
 * (`webhook_deliveries`: pending ones by due time, so a lost job store is rebuilt from here) and
 * every attempt (`webhook_attempts`, the health view).
 */
export const webhooksProjection = defineProjection({
  name: 'webhooks',
  collections: [
    { name: 'webhooks', indexes: [] },
    {
      name: 'webhook_deliveries',
      indexes: [
        { name: 'by_status_due', keys: { status: 1, next_attempt_at: 1 } },
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
        { name: 'by_agent_queued', keys: { agent_id: 1, queued_at: 1, seq: 1 } },
      ],
    },
    {
      name: 'webhook_replays',
      indexes: [{ name: 'by_status_due', keys: { status: 1, next_attempt_at: 1 } }],
    },
    {
      name: 'webhook_attempts',
      indexes: [
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
        { name: 'by_agent_cursor', keys: { agent_id: 1, seq: 1, _id: 1 } },
      ],
    },
  ],
  handles: [
    'AgentRegistered',
    'AgentProfileUpdated',
    'WebhookConfigured',
    'WebhookSecretRegenerated',
    'WebhookSecretRotated',
    'WebhookDisabled',
    'WebhookDeliveryQueued',
    'WebhookDeliveryAttempted',
    'WebhookReplayRequested',
    'WebhookReplayAttempted',
  ],
  // Each group of events has its handler (no async frame here: the handler's promise is the answer).
  apply(event, ctx) {
    switch (event.type) {
      case 'AgentRegistered':
      case 'AgentProfileUpdated':
      case 'WebhookConfigured':
      case 'WebhookSecretRegenerated':
      case 'WebhookSecretRotated':
      case 'WebhookDisabled':
        return applyEndpoint(event, ctx);
      case 'WebhookDeliveryQueued':
      case 'WebhookDeliveryAttempted':
        return applyDelivery(event, ctx);
      case 'WebhookReplayRequested':
      case 'WebhookReplayAttempted':
        return applyReplay(event, ctx);
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});

type EndpointEvent = 'AgentRegistered' | 'AgentProfileUpdated' | 'WebhookConfigured' | 'WebhookSecretRegenerated' | 'WebhookSecretRotated' | 'WebhookDisabled';

/** An agent's endpoint: its URL, event filter, signing secrets and whether it is disabled. */
async function applyEndpoint(event: RecordedOf<EndpointEvent>, ctx: ProjectionContext): Promise<void> {
  const hooks = ctx.collection('webhooks');
  switch (event.type) {
    case 'AgentRegistered': {
      const d = event.data;
      await hooks.applyAt(d.agent_id, event.position, {
        $set: {
          agent_id: d.agent_id,
          webhook_url: d.webhook_url,
          events: null,
          // A URL given at registration is configured by the WebhookConfigured appended with it;
          // registrations written before that sign with the earlier default.
          signature_scheme: d.webhook_url ? LEGACY_SIGNATURE_SCHEME : null,
          secret_enc: d.webhook_secret_enc,
          previous_secret_enc: null,
          previous_valid_until: null,
          disabled: false,
          disabled_reason: null,
          configured_at: d.registered_at,
        },
      });
      return;
    }
    case 'AgentProfileUpdated': {
      const d = event.data;
      if (d.webhook_url === undefined) return;
      await hooks.applyAt(d.agent_id, event.position, {
        $set: { webhook_url: d.webhook_url, disabled: false, disabled_reason: null, configured_at: event.metadata.occurred_at },
      });
      return;
    }
    case 'WebhookConfigured': {
      const d = event.data;
      await hooks.applyAt(d.agent_id, event.position, {
        $set: {
          webhook_url: d.webhook_url,
          events: d.events,
          signature_scheme: d.signature_scheme,
          disabled: false,
          disabled_reason: null,
          configured_at: d.configured_at,
        },
      });
      return;
    }
    case 'WebhookSecretRegenerated': {
      const d = event.data;
      await hooks.applyAt(d.agent_id, event.position, {
        $set: { secret_enc: d.webhook_secret_enc, secret_regenerated_at: d.regenerated_at, previous_secret_enc: null, previous_valid_until: null },
      });
      return;
    }
    case 'WebhookSecretRotated': {
      // The replaced secret (the current one, as this event is applied in log order) keeps signing until previous_valid_until.
      const d = event.data;
      const hook = await hooks.findOne({ _id: d.agent_id });
      const previous = d.previous_valid_until && typeof hook?.secret_enc === 'string' ? hook.secret_enc : null;
      await hooks.applyAt(d.agent_id, event.position, {
        $set: {
          secret_enc: d.webhook_secret_enc,
          secret_regenerated_at: d.rotated_at,
          previous_secret_enc: previous,
          previous_valid_until: previous ? d.previous_valid_until : null,
        },
      });
      return;
    }
    case 'WebhookDisabled': {
      const d = event.data;
      await hooks.applyAt(d.agent_id, event.position, { $set: { disabled: true, disabled_reason: d.reason, disabled_at: d.disabled_at } });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type DeliveryEvent = 'WebhookDeliveryQueued' | 'WebhookDeliveryAttempted';

/** A delivery queued and each attempt at it (the delivery log). */
async function applyDelivery(event: RecordedOf<DeliveryEvent>, ctx: ProjectionContext): Promise<void> {
  switch (event.type) {
    case 'WebhookDeliveryQueued': {
      const d = event.data;
      await ctx.collection('webhook_deliveries').applyAt(d.delivery_id, event.position, {
        $set: {
          delivery_id: d.delivery_id,
          agent_id: d.agent_id,
          inbox_id: d.inbox_id,
          event: d.event,
          url: d.url,
          status: 'pending',
          attempts: 0,
          next_attempt_at: d.queued_at,
          queued_at: d.queued_at,
          last_status_code: null,
          last_error: null,
          seq: event.position,
        },
      });
      return;
    }
    case 'WebhookDeliveryAttempted': {
      const d = event.data;
      const status = d.outcome === 'delivered' ? 'delivered' : d.next_attempt_at ? 'pending' : d.outcome === 'gone' ? 'gone' : 'given_up';
      await ctx.collection('webhook_deliveries').applyAt(d.delivery_id, event.position, {
        $set: {
          status,
          attempts: d.attempt,
          next_attempt_at: d.next_attempt_at,
          last_status_code: d.status_code,
          last_error: d.error,
          last_attempt_at: d.attempted_at,
        },
      });
      await ctx
        .collection('webhook_attempts')
        .applyAt(`${d.delivery_id}:${d.attempt}`, event.position, { $set: Object.assign({}, d, { seq: event.position }) });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

type ReplayEvent = 'WebhookReplayRequested' | 'WebhookReplayAttempted';

/** A replay of past deliveries and each of its attempts (in the delivery log too). */
async function applyReplay(event: RecordedOf<ReplayEvent>, ctx: ProjectionContext): Promise<void> {
  switch (event.type) {
    case 'WebhookReplayRequested': {
      const d = event.data;
      await ctx.collection('webhook_replays').applyAt(d.replay_id, event.position, {
        $set: {
          replay_id: d.replay_id,
          agent_id: d.agent_id,
          requested_by: d.requested_by,
          requested_by_role: d.requested_by_role,
          deliveries: d.deliveries,
          delivery_ids: d.delivery_ids,
          sent: 0,
          status: d.deliveries === 0 ? 'completed' : 'pending',
          next_attempt_at: d.deliveries === 0 ? null : d.requested_at,
          requested_at: d.requested_at,
          seq: event.position,
        },
      });
      return;
    }
    case 'WebhookReplayAttempted': {
      // The replay's due time (so the sweep resumes it after a restart) and the attempt in the delivery log, marked with its replay.
      const d = event.data;
      const replays = ctx.collection('webhook_replays');
      const replay = await replays.findOne({ _id: d.replay_id });
      const total = typeof replay?.deliveries === 'number' ? replay.deliveries : 0;
      const sent = d.outcome === 'delivered' ? d.index + 1 : d.index;
      const status = d.outcome === 'delivered' ? (sent >= total ? 'completed' : 'pending') : d.next_attempt_at ? 'pending' : 'stopped';
      const next = status !== 'pending' ? null : d.outcome === 'delivered' ? d.attempted_at : d.next_attempt_at;
      await replays.applyAt(d.replay_id, event.position, {
        $set: { sent, status, next_attempt_at: next, last_outcome: d.outcome, last_error: d.error, last_attempt_at: d.attempted_at },
      });
      await ctx
        .collection('webhook_attempts')
        .applyAt(`${d.delivery_id}:${d.replay_id}:${d.attempt}`, event.position, { $set: Object.assign({}, d, { seq: event.position }) });
      return;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
