import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, Hex64, IsoDate, Literals, Nullable, UserId } from './types.ts';

// Humans and ownership: users, sessions, one-time codes, mail, claims and key changes.
// No event holds a secret in plaintext: passwords are scrypt hashes, codes and tokens keyed
// hashes, mail parameters AES-256-GCM ciphertext.

const OTP_PURPOSES = ['signup', 'password_reset', 'claim_lite', 'claim_full', 'key_recovery'] as const;
export type OtpPurpose = (typeof OTP_PURPOSES)[number];

const Str = Type.String({ minLength: 1 });
const Attempt = Type.Integer({ minimum: 1 });
const PasswordHash = Type.String({ pattern: '^scrypt\\$' });

/** Queued on the stream of the change that caused it (same append), so no request loses its mail. */
export const MailQueuedData = Data({
  mail_id: Type.String({ pattern: '^mail_' }),
  template: Str,
  to: Str,
  /** Template parameters, encrypted: they may hold a one-time code. */
  params_enc: Type.String({ pattern: '^v1\\.' }),
  queued_at: IsoDate,
});
export type MailQueued = Event<'MailQueued', Static<typeof MailQueuedData>>;
export const MailSentData = Data({ mail_id: Str, attempt: Attempt, transport: Str, message_id: Nullable(Type.String()), sent_at: IsoDate });
export type MailSent = Event<'MailSent', Static<typeof MailSentData>>;
export const MailSendFailedData = Data({ mail_id: Str, attempt: Attempt, error: Type.String(), final: Type.Boolean(), failed_at: IsoDate });
export type MailSendFailed = Event<'MailSendFailed', Static<typeof MailSendFailedData>>;

export const OtpIssuedData = Data({ otp_id: Str, purpose: Literals(OTP_PURPOSES), code_hash: Hex64, issued_at: IsoDate, expires_at: IsoDate });
export type OtpIssued = Event<'OtpIssued', Static<typeof OtpIssuedData>>;
export const OtpAttemptFailedData = Data({ otp_id: Str, failed_at: IsoDate, attempts: Attempt });
export type OtpAttemptFailed = Event<'OtpAttemptFailed', Static<typeof OtpAttemptFailedData>>;
export const OtpConsumedData = Data({ otp_id: Str, consumed_at: IsoDate });
export type OtpConsumed = Event<'OtpConsumed', Static<typeof OtpConsumedData>>;

export const UserEmailReservedData = Data({ email_hash: Hex64, user_id: UserId, reserved_at: IsoDate });
export type UserEmailReserved = Event<'UserEmailReserved', Static<typeof UserEmailReservedData>>;
export const UserRegisteredData = Data({ user_id: UserId, email: Str, full_name: Str, password_hash: PasswordHash, registered_at: IsoDate });
export type UserRegistered = Event<'UserRegistered', Static<typeof UserRegisteredData>>;
export const PasswordChangedData = Data({ user_id: UserId, password_hash: PasswordHash, reason: Type.Literal('reset'), changed_at: IsoDate });
export type PasswordChanged = Event<'PasswordChanged', Static<typeof PasswordChangedData>>;
export const SessionStartedData = Data({ user_id: UserId, session_id: Str, token_hash: Hex64, started_at: IsoDate, expires_at: IsoDate });
export type SessionStarted = Event<'SessionStarted', Static<typeof SessionStartedData>>;
export const SessionRefreshedData = Data({ user_id: UserId, session_id: Str, token_hash: Hex64, refreshed_at: IsoDate, expires_at: IsoDate });
export type SessionRefreshed = Event<'SessionRefreshed', Static<typeof SessionRefreshedData>>;
export const SessionRevokedData = Data({
  user_id: UserId,
  session_id: Str,
  reason: Literals(['refresh_token_reuse', 'password_reset']),
  revoked_at: IsoDate,
});
export type SessionRevoked = Event<'SessionRevoked', Static<typeof SessionRevokedData>>;

/** On `agent-<id>`: the owner proved control of the owner e-mail. */
export const AgentClaimedData = Data({ agent_id: AgentId, claimed_via: Type.Literal('email_otp'), user_id: Nullable(UserId), claimed_at: IsoDate });
export type AgentClaimed = Event<'AgentClaimed', Static<typeof AgentClaimedData>>;
/** On `agent-<id>`: a full claim links an (already claimed) agent to a signed-in user. */
export const AgentOwnerLinkedData = Data({ agent_id: AgentId, user_id: UserId, linked_at: IsoDate });
export type AgentOwnerLinked = Event<'AgentOwnerLinked', Static<typeof AgentOwnerLinkedData>>;
/** On `agent-<id>`: the old key stops working when the read model applies this event. */
export const ApiKeyReplacedData = Data({
  agent_id: AgentId,
  old_key_hash: Hex64,
  new_key_hash: Hex64,
  reason: Literals(['rotation', 'recovery', 'elite_regenerate']),
  replaced_at: IsoDate,
});
export type ApiKeyReplaced = Event<'ApiKeyReplaced', Static<typeof ApiKeyReplacedData>>;

/** On `user-elite-<user_id>`, appended with "no stream": one auto-provisioned (elite_auto) agent per user. */
export const EliteAgentReservedData = Data({ user_id: UserId, agent_id: AgentId, reserved_at: IsoDate });
export type EliteAgentReserved = Event<'EliteAgentReserved', Static<typeof EliteAgentReservedData>>;

/** On `agent-<id>`: the owner's autonomous-post toggles (the changed ones only: at least one). */
export const AutoPostPrefsChangedData = Data(
  {
    agent_id: AgentId,
    auto_post_on_scout: Type.Optional(Type.Boolean()),
    auto_post_on_mixer: Type.Optional(Type.Boolean()),
    changed_at: IsoDate,
  },
  { minProperties: 3 },
);
export type AutoPostPrefsChanged = Event<'AutoPostPrefsChanged', Static<typeof AutoPostPrefsChangedData>>;

/** On `user-<id>`: a passive match digest produced by the digest worker for the user's agent. */
export const DigestItem = Data({ agent_id: AgentId, name: Str, shared_capabilities: Type.Array(Type.String()), reason: Str });
export type DigestItem = Static<typeof DigestItem>;
export const DigestProducedData = Data({
  digest_id: Type.String({ pattern: '^dig_' }),
  user_id: UserId,
  agent_id: AgentId,
  items: Type.Array(DigestItem, { minItems: 1 }),
  since: IsoDate,
  produced_at: IsoDate,
});
export type DigestProduced = Event<'DigestProduced', Static<typeof DigestProducedData>>;
export const DigestReadData = Data({ digest_id: Str, user_id: UserId, read_at: IsoDate });
export type DigestRead = Event<'DigestRead', Static<typeof DigestReadData>>;

/** On `match-<id>`: a member match between two users, and the messages exchanged in it. */
export const MatchCreatedData = Data({
  match_id: Type.String({ pattern: '^mtc_' }),
  user_a_id: UserId,
  user_b_id: UserId,
  reason: Nullable(Type.String({ maxLength: 500 })),
  created_by: Str,
  created_at: IsoDate,
});
export type MatchCreated = Event<'MatchCreated', Static<typeof MatchCreatedData>>;
export const MatchMessageSentData = Data({
  match_id: Str,
  message_id: Type.String({ pattern: '^msg_' }),
  sender_id: UserId,
  recipient_id: UserId,
  content: Type.String({ minLength: 1, maxLength: 2000 }),
  sent_at: IsoDate,
});
export type MatchMessageSent = Event<'MatchMessageSent', Static<typeof MatchMessageSentData>>;
export const MatchMessageDeletedData = Data({ match_id: Str, message_id: Str, deleted_by: UserId, deleted_at: IsoDate });
export type MatchMessageDeleted = Event<'MatchMessageDeleted', Static<typeof MatchMessageDeletedData>>;
export const MatchMessageReportedData = Data({
  match_id: Str,
  message_id: Str,
  reported_by: UserId,
  reason: Str,
  details: Nullable(Type.String({ maxLength: 1000 })),
  reported_at: IsoDate,
});
export type MatchMessageReported = Event<'MatchMessageReported', Static<typeof MatchMessageReportedData>>;
export const MatchMessagesReadData = Data({ match_id: Str, user_id: UserId, message_ids: Type.Array(Type.String(), { minItems: 1 }), read_at: IsoDate });
export type MatchMessagesRead = Event<'MatchMessagesRead', Static<typeof MatchMessagesReadData>>;

export type UserEvent = UserRegistered | PasswordChanged | SessionStarted | SessionRefreshed | SessionRevoked | MailQueued;
export type OtpEvent = OtpIssued | OtpAttemptFailed | OtpConsumed | MailQueued;
export type MailEvent = MailSent | MailSendFailed;
export type AgentOwnershipEvent = AgentClaimed | AgentOwnerLinked | ApiKeyReplaced | MailQueued;

export const humanEventSchemas = {
  MailQueued: MailQueuedData,
  MailSent: MailSentData,
  MailSendFailed: MailSendFailedData,
  OtpIssued: OtpIssuedData,
  OtpAttemptFailed: OtpAttemptFailedData,
  OtpConsumed: OtpConsumedData,
  UserEmailReserved: UserEmailReservedData,
  UserRegistered: UserRegisteredData,
  PasswordChanged: PasswordChangedData,
  SessionStarted: SessionStartedData,
  SessionRefreshed: SessionRefreshedData,
  SessionRevoked: SessionRevokedData,
  EliteAgentReserved: EliteAgentReservedData,
  AutoPostPrefsChanged: AutoPostPrefsChangedData,
  DigestProduced: DigestProducedData,
  DigestRead: DigestReadData,
  MatchCreated: MatchCreatedData,
  MatchMessageSent: MatchMessageSentData,
  MatchMessageDeleted: MatchMessageDeletedData,
  MatchMessageReported: MatchMessageReportedData,
  MatchMessagesRead: MatchMessagesReadData,
  AgentClaimed: AgentClaimedData,
  AgentOwnerLinked: AgentOwnerLinkedData,
  ApiKeyReplaced: ApiKeyReplacedData,
};

export const userStream = (id: string) => `user-${id}`;
export const eliteStream = (userId: string) => `user-elite-${userId}`;
export const userEmailStream = (emailHash: string) => `user-email-${emailHash}`;
/** One stream per purpose and subject (keyed hash of the address, or the agent id). */
export const otpStream = (purpose: OtpPurpose, subjectHash: string) => `otp-${purpose}-${subjectHash}`;
export const matchStream = (matchId: string) => `match-${matchId}`;
export const mailStream = (mailId: string) => `mail-${mailId}`;
