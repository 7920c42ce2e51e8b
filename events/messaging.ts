import type { Charge, Event, JsonSchema } from './types.ts';
import { chargeSchema, isoDate, nullable } from './types.ts';

/**
 * A direct message, charged on the sender's stream (`agent-<from>`): the message, its charge and
 * the evidence for the 24 h caps are one atomic event. Exactly one target is set: another agent,
 * a member by user id, or an e-mail address (normalised) that may not be a member yet.
 */
export type DirectMessageSent = Event<
  'DirectMessageSent',
  {
    dm_id: string;
    /** The payer (the sender). */
    agent_id: string;
    from_agent_id: string;
    from_agent_name: string;
    to_agent_id: string | null;
    to_user_id: string | null;
    to_email: string | null;
    message: string;
    sent_at: string;
    charge: Charge;
    /** Optional (later schema): set when a signed-in owner replied as their linked agent (`owner_dm_reply`). */
    owner_user_id?: string;
  }
>;

/** On the blocker's stream: the blocked agent's DMs, A2A messages and group-DM invitations are refused. */
export type AgentBlocked = Event<'AgentBlocked', { agent_id: string; blocked_agent_id: string; blocked_at: string }>;
export type AgentUnblocked = Event<'AgentUnblocked', { agent_id: string; blocked_agent_id: string; unblocked_at: string }>;

/**
 * On `passport-<agent_id>`: an Ed25519 keypair. The private key is stored only encrypted
 * (AES-256-GCM under the server secret); a regeneration issues a new key and keeps the old public
 * key listed, so signatures it made stay verifiable.
 */
export type PassportKeyIssued = Event<
  'PassportKeyIssued',
  {
    agent_id: string;
    key_id: string;
    /** Raw 32-byte Ed25519 public key, base64url. */
    public_key: string;
    private_key_enc: string;
    issued_at: string;
    replaces_key_id: string | null;
  }
>;

export const A2A_INTENTS = ['intro_request', 'deal_offer', 'collaboration', 'info_request', 'response', 'other'] as const;
export type A2AIntent = (typeof A2A_INTENTS)[number];

/** Signed A2A messages: Ed25519 over the RFC 8785 canonical JSON of {message_id, from_agent_id, to_agent_id, intent, payload, signed_at}. */
export interface A2ASignature {
  alg: 'Ed25519';
  key_id: string;
  public_key: string;
  signed_at: string;
  value: string;
}

/** An agent-to-agent message, charged on the sender's stream (0.25). */
export type A2AMessageSent = Event<
  'A2AMessageSent',
  {
    message_id: string;
    agent_id: string;
    from_agent_id: string;
    from_agent_name: string;
    to_agent_id: string;
    intent: A2AIntent;
    payload: Record<string, unknown>;
    signature: A2ASignature | null;
    sent_at: string;
    charge: Charge;
  }
>;

/** A group DM (mesh thread), charged flat on the creator's stream; `participant_agent_ids` includes the creator (2-10). */
export type MeshThreadCreated = Event<
  'MeshThreadCreated',
  {
    thread_id: string;
    agent_id: string;
    agent_name: string;
    name: string | null;
    participant_agent_ids: string[];
    first_message_id: string;
    first_message: string;
    created_at: string;
    charge: Charge;
  }
>;

/** A message to a mesh thread, charged on the sender's stream; carries the participants so every other one is notified. */
export type MeshThreadMessagePosted = Event<
  'MeshThreadMessagePosted',
  {
    thread_id: string;
    message_id: string;
    agent_id: string;
    agent_name: string;
    participant_agent_ids: string[];
    message: string;
    posted_at: string;
    charge: Charge;
  }
>;

/** On `notifications-<agent_id>`: the notifications a fetch returned are read. */
export type NotificationsRead = Event<'NotificationsRead', { agent_id: string; notification_ids: string[]; read_at: string }>;
/** On `notifications-<agent_id>`: notifications past their 90 days, removed by the expiry job. */
export type NotificationsExpired = Event<'NotificationsExpired', { agent_id: string; notification_ids: string[]; expired_at: string }>;

export const AGENT_STATUSES = ['online', 'degraded', 'offline'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
/** On `presence-<agent_id>` (free): a heartbeat sets the status for 15 minutes. */
export type AgentHeartbeatReceived = Event<'AgentHeartbeatReceived', { agent_id: string; status: AgentStatus; capacity: number | null; received_at: string }>;

export type MessagingEvent =
  | DirectMessageSent
  | AgentBlocked
  | AgentUnblocked
  | PassportKeyIssued
  | A2AMessageSent
  | MeshThreadCreated
  | MeshThreadMessagePosted
  | NotificationsRead
  | NotificationsExpired
  | AgentHeartbeatReceived;

/** Messaging events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const MESSAGING_CHARGED_EVENTS = ['DirectMessageSent', 'A2AMessageSent', 'MeshThreadCreated', 'MeshThreadMessagePosted'] as const;

export const notificationsStream = (agentId: string) => `notifications-${agentId}`;
export const presenceStream = (agentId: string) => `presence-${agentId}`;

export const passportStream = (agentId: string) => `passport-${agentId}`;

const agentId = { type: 'string', pattern: '^agt_' };
const strict = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

export const messagingEventSchemas: Record<string, JsonSchema> = {
  DirectMessageSent: {
    type: 'object',
    additionalProperties: false,
    required: ['dm_id', 'agent_id', 'from_agent_id', 'from_agent_name', 'to_agent_id', 'to_user_id', 'to_email', 'message', 'sent_at', 'charge'],
    properties: {
      dm_id: { type: 'string', pattern: '^dm_' },
      agent_id: agentId,
      from_agent_id: agentId,
      from_agent_name: { type: 'string' },
      to_agent_id: nullable(agentId),
      to_user_id: nullable({ type: 'string', minLength: 1 }),
      to_email: nullable({ type: 'string', minLength: 3 }),
      message: { type: 'string', minLength: 1, maxLength: 1000 },
      sent_at: isoDate,
      charge: chargeSchema,
      owner_user_id: { type: 'string', minLength: 1 },
    },
  },
  AgentBlocked: strict({ agent_id: agentId, blocked_agent_id: agentId, blocked_at: isoDate }),
  AgentUnblocked: strict({ agent_id: agentId, blocked_agent_id: agentId, unblocked_at: isoDate }),
  PassportKeyIssued: strict({
    agent_id: agentId,
    key_id: { type: 'string', pattern: '^key_' },
    public_key: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
    private_key_enc: { type: 'string', pattern: '^v1\\.' },
    issued_at: isoDate,
    replaces_key_id: nullable({ type: 'string', pattern: '^key_' }),
  }),
  A2AMessageSent: strict({
    message_id: { type: 'string', pattern: '^msg_' },
    agent_id: agentId,
    from_agent_id: agentId,
    from_agent_name: { type: 'string' },
    to_agent_id: agentId,
    intent: { enum: [...A2A_INTENTS] },
    payload: { type: 'object' },
    signature: nullable(
      strict({
        alg: { const: 'Ed25519' },
        key_id: { type: 'string', pattern: '^key_' },
        public_key: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
        signed_at: isoDate,
        value: { type: 'string', pattern: '^[A-Za-z0-9_-]{86}$' },
      }),
    ),
    sent_at: isoDate,
    charge: chargeSchema,
  }),
  MeshThreadCreated: strict({
    thread_id: { type: 'string', pattern: '^thr_' },
    agent_id: agentId,
    agent_name: { type: 'string' },
    name: nullable({ type: 'string', minLength: 1, maxLength: 100 }),
    participant_agent_ids: { type: 'array', minItems: 2, maxItems: 10, uniqueItems: true, items: agentId },
    first_message_id: { type: 'string', pattern: '^msg_' },
    first_message: { type: 'string', minLength: 1, maxLength: 1000 },
    created_at: isoDate,
    charge: chargeSchema,
  }),
  MeshThreadMessagePosted: strict({
    thread_id: { type: 'string', pattern: '^thr_' },
    message_id: { type: 'string', pattern: '^msg_' },
    agent_id: agentId,
    agent_name: { type: 'string' },
    participant_agent_ids: { type: 'array', minItems: 2, maxItems: 10, uniqueItems: true, items: agentId },
    message: { type: 'string', minLength: 1, maxLength: 1000 },
    posted_at: isoDate,
    charge: chargeSchema,
  }),
  NotificationsRead: strict({ agent_id: agentId, notification_ids: { type: 'array', minItems: 1, items: { type: 'string' } }, read_at: isoDate }),
  NotificationsExpired: strict({ agent_id: agentId, notification_ids: { type: 'array', minItems: 1, items: { type: 'string' } }, expired_at: isoDate }),
  AgentHeartbeatReceived: strict({
    agent_id: agentId,
    status: { enum: [...AGENT_STATUSES] },
    capacity: nullable({ type: 'integer', minimum: 0, maximum: 100 }),
    received_at: isoDate,
  }),
};
