import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Charge, Data, IsoDate, Literals, Nullable } from './types.ts';

const KeyId = Type.String({ pattern: '^key_' });
const MessageId = Type.String({ pattern: '^msg_' });
const ThreadId = Type.String({ pattern: '^thr_' });
/** Raw 32-byte Ed25519 public key, base64url. */
const PublicKey = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });
const Participants = Type.Array(AgentId, { minItems: 2, maxItems: 10, uniqueItems: true });
const NotificationIds = Type.Array(Type.String(), { minItems: 1 });

/**
 * A direct message, charged on the sender's stream (`agent-<from>`): the message, its charge and
 * the evidence for the 24 h caps are one atomic event. Exactly one target is set: another agent,
 * a member by user id, or an e-mail address (normalised) that may not be a member yet.
 * Schema version 2: `owner_user_id` is always present (version 1 left it out unless set; see events/upcasters.ts).
 */
export const DirectMessageSentData = Data({
  dm_id: Type.String({ pattern: '^dm_' }),
  /** The payer (the sender). */
  agent_id: AgentId,
  from_agent_id: AgentId,
  from_agent_name: Type.String(),
  to_agent_id: Nullable(AgentId),
  to_user_id: Nullable(Type.String({ minLength: 1 })),
  to_email: Nullable(Type.String({ minLength: 3 })),
  message: Type.String({ minLength: 1, maxLength: 1000 }),
  sent_at: IsoDate,
  charge: Charge,
  /** Set when a signed-in owner replied as their linked agent (`owner_dm_reply`), else null. */
  owner_user_id: Nullable(Type.String({ minLength: 1 })),
});
export type DirectMessageSent = Event<'DirectMessageSent', Static<typeof DirectMessageSentData>>;

/** On the blocker's stream: the blocked agent's DMs, A2A messages and group-DM invitations are refused. */
export const AgentBlockedData = Data({ agent_id: AgentId, blocked_agent_id: AgentId, blocked_at: IsoDate });
export type AgentBlocked = Event<'AgentBlocked', Static<typeof AgentBlockedData>>;
export const AgentUnblockedData = Data({ agent_id: AgentId, blocked_agent_id: AgentId, unblocked_at: IsoDate });
export type AgentUnblocked = Event<'AgentUnblocked', Static<typeof AgentUnblockedData>>;

/**
 * On `passport-<agent_id>`: an Ed25519 keypair. The private key is stored only encrypted
 * (AES-256-GCM under the server secret); a regeneration issues a new key and keeps the old public
 * key listed, so signatures it made stay verifiable.
 */
export const PassportKeyIssuedData = Data({
  agent_id: AgentId,
  key_id: KeyId,
  public_key: PublicKey,
  private_key_enc: Type.String({ pattern: '^v1\\.' }),
  issued_at: IsoDate,
  replaces_key_id: Nullable(KeyId),
});
export type PassportKeyIssued = Event<'PassportKeyIssued', Static<typeof PassportKeyIssuedData>>;

export const A2A_INTENTS = ['intro_request', 'deal_offer', 'collaboration', 'info_request', 'response', 'other'] as const;
export type A2AIntent = (typeof A2A_INTENTS)[number];

/** Signed A2A messages: Ed25519 over the RFC 8785 canonical JSON of {message_id, from_agent_id, to_agent_id, intent, payload, signed_at}. */
export const A2ASignature = Data({
  alg: Type.Literal('Ed25519'),
  key_id: KeyId,
  public_key: PublicKey,
  signed_at: IsoDate,
  value: Type.String({ pattern: '^[A-Za-z0-9_-]{86}$' }),
});
export type A2ASignature = Static<typeof A2ASignature>;

/** An agent-to-agent message, charged on the sender's stream (0.25). */
export const A2AMessageSentData = Data({
  message_id: MessageId,
  agent_id: AgentId,
  from_agent_id: AgentId,
  from_agent_name: Type.String(),
  to_agent_id: AgentId,
  intent: Literals(A2A_INTENTS),
  payload: Type.Record(Type.String(), Type.Unknown()),
  signature: Nullable(A2ASignature),
  sent_at: IsoDate,
  charge: Charge,
});
export type A2AMessageSent = Event<'A2AMessageSent', Static<typeof A2AMessageSentData>>;

/** A group DM (mesh thread), charged flat on the creator's stream; `participant_agent_ids` includes the creator (2-10). */
export const MeshThreadCreatedData = Data({
  thread_id: ThreadId,
  agent_id: AgentId,
  agent_name: Type.String(),
  name: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  participant_agent_ids: Participants,
  first_message_id: MessageId,
  first_message: Type.String({ minLength: 1, maxLength: 1000 }),
  created_at: IsoDate,
  charge: Charge,
});
export type MeshThreadCreated = Event<'MeshThreadCreated', Static<typeof MeshThreadCreatedData>>;

/** A message to a mesh thread, charged on the sender's stream; carries the participants so every other one is notified. */
export const MeshThreadMessagePostedData = Data({
  thread_id: ThreadId,
  message_id: MessageId,
  agent_id: AgentId,
  agent_name: Type.String(),
  participant_agent_ids: Participants,
  message: Type.String({ minLength: 1, maxLength: 1000 }),
  posted_at: IsoDate,
  charge: Charge,
});
export type MeshThreadMessagePosted = Event<'MeshThreadMessagePosted', Static<typeof MeshThreadMessagePostedData>>;

/** On `notifications-<agent_id>`: the notifications a fetch returned are read. */
export const NotificationsReadData = Data({ agent_id: AgentId, notification_ids: NotificationIds, read_at: IsoDate });
export type NotificationsRead = Event<'NotificationsRead', Static<typeof NotificationsReadData>>;
/** On `notifications-<agent_id>`: notifications past their 90 days, removed by the expiry job. */
export const NotificationsExpiredData = Data({ agent_id: AgentId, notification_ids: NotificationIds, expired_at: IsoDate });
export type NotificationsExpired = Event<'NotificationsExpired', Static<typeof NotificationsExpiredData>>;

export const AGENT_STATUSES = ['online', 'degraded', 'offline'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
/** On `presence-<agent_id>` (free): a heartbeat sets the status for 15 minutes. */
export const AgentHeartbeatReceivedData = Data({
  agent_id: AgentId,
  status: Literals(AGENT_STATUSES),
  capacity: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
  received_at: IsoDate,
});
export type AgentHeartbeatReceived = Event<'AgentHeartbeatReceived', Static<typeof AgentHeartbeatReceivedData>>;

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

export const messagingEventSchemas = {
  DirectMessageSent: DirectMessageSentData,
  AgentBlocked: AgentBlockedData,
  AgentUnblocked: AgentUnblockedData,
  PassportKeyIssued: PassportKeyIssuedData,
  A2AMessageSent: A2AMessageSentData,
  MeshThreadCreated: MeshThreadCreatedData,
  MeshThreadMessagePosted: MeshThreadMessagePostedData,
  NotificationsRead: NotificationsReadData,
  NotificationsExpired: NotificationsExpiredData,
  AgentHeartbeatReceived: AgentHeartbeatReceivedData,
};

/** Messaging events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const MESSAGING_CHARGED_EVENTS = ['DirectMessageSent', 'A2AMessageSent', 'MeshThreadCreated', 'MeshThreadMessagePosted'] as const;

export const notificationsStream = (agentId: string) => `notifications-${agentId}`;
export const presenceStream = (agentId: string) => `presence-${agentId}`;

export const passportStream = (agentId: string) => `passport-${agentId}`;
