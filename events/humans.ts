import type { Event, JsonSchema } from './types.ts';
import { isoDate, nullable } from './types.ts';

// Humans and ownership: users, sessions, one-time codes, mail, claims and key changes.
// No event holds a secret in plaintext: passwords are scrypt hashes, codes and tokens keyed
// hashes, mail parameters AES-256-GCM ciphertext.

export type OtpPurpose = 'signup' | 'password_reset' | 'claim_lite' | 'claim_full' | 'key_recovery';

/** Queued on the stream of the change that caused it (same append), so no request loses its mail. */
export type MailQueued = Event<
  'MailQueued',
  {
    mail_id: string;
    template: string;
    to: string;
    /** Template parameters, encrypted: they may hold a one-time code. */
    params_enc: string;
    queued_at: string;
  }
>;
export type MailSent = Event<'MailSent', { mail_id: string; attempt: number; transport: string; message_id: string | null; sent_at: string }>;
export type MailSendFailed = Event<'MailSendFailed', { mail_id: string; attempt: number; error: string; final: boolean; failed_at: string }>;

export type OtpIssued = Event<
  'OtpIssued',
  {
    otp_id: string;
    purpose: OtpPurpose;
    code_hash: string;
    issued_at: string;
    expires_at: string;
  }
>;
export type OtpAttemptFailed = Event<'OtpAttemptFailed', { otp_id: string; failed_at: string; attempts: number }>;
export type OtpConsumed = Event<'OtpConsumed', { otp_id: string; consumed_at: string }>;

export type UserEmailReserved = Event<'UserEmailReserved', { email_hash: string; user_id: string; reserved_at: string }>;
export type UserRegistered = Event<
  'UserRegistered',
  {
    user_id: string;
    email: string;
    full_name: string;
    password_hash: string;
    registered_at: string;
  }
>;
export type PasswordChanged = Event<'PasswordChanged', { user_id: string; password_hash: string; reason: 'reset'; changed_at: string }>;
export type SessionStarted = Event<'SessionStarted', { user_id: string; session_id: string; token_hash: string; started_at: string; expires_at: string }>;
export type SessionRefreshed = Event<'SessionRefreshed', { user_id: string; session_id: string; token_hash: string; refreshed_at: string; expires_at: string }>;
export type SessionRevoked = Event<
  'SessionRevoked',
  {
    user_id: string;
    session_id: string;
    reason: 'refresh_token_reuse' | 'password_reset';
    revoked_at: string;
  }
>;

/** On `agent-<id>`: the owner proved control of the owner e-mail. */
export type AgentClaimed = Event<'AgentClaimed', { agent_id: string; claimed_via: 'email_otp'; user_id: string | null; claimed_at: string }>;
/** On `agent-<id>`: a full claim links an (already claimed) agent to a signed-in user. */
export type AgentOwnerLinked = Event<'AgentOwnerLinked', { agent_id: string; user_id: string; linked_at: string }>;
/** On `agent-<id>`: the old key stops working when the read model applies this event. */
export type ApiKeyReplaced = Event<
  'ApiKeyReplaced',
  {
    agent_id: string;
    old_key_hash: string;
    new_key_hash: string;
    reason: 'rotation' | 'recovery' | 'elite_regenerate';
    replaced_at: string;
  }
>;

/** On `user-elite-<user_id>`, appended with "no stream": one auto-provisioned (elite_auto) agent per user. */
export type EliteAgentReserved = Event<'EliteAgentReserved', { user_id: string; agent_id: string; reserved_at: string }>;

/** On `agent-<id>`: the owner's autonomous-post toggles. */
export type AutoPostPrefsChanged = Event<
  'AutoPostPrefsChanged',
  { agent_id: string; auto_post_on_scout?: boolean; auto_post_on_mixer?: boolean; changed_at: string }
>;

/** On `user-<id>`: a passive match digest produced by the digest worker for the user's agent. */
export interface DigestItem {
  agent_id: string;
  name: string;
  shared_capabilities: string[];
  reason: string;
}
export type DigestProduced = Event<
  'DigestProduced',
  { digest_id: string; user_id: string; agent_id: string; items: DigestItem[]; since: string; produced_at: string }
>;
export type DigestRead = Event<'DigestRead', { digest_id: string; user_id: string; read_at: string }>;

/** On `match-<id>`: a member match between two users, and the messages exchanged in it. */
export type MatchCreated = Event<
  'MatchCreated',
  { match_id: string; user_a_id: string; user_b_id: string; reason: string | null; created_by: string; created_at: string }
>;
export type MatchMessageSent = Event<
  'MatchMessageSent',
  { match_id: string; message_id: string; sender_id: string; recipient_id: string; content: string; sent_at: string }
>;
export type MatchMessageDeleted = Event<'MatchMessageDeleted', { match_id: string; message_id: string; deleted_by: string; deleted_at: string }>;
export type MatchMessageReported = Event<
  'MatchMessageReported',
  { match_id: string; message_id: string; reported_by: string; reason: string; details: string | null; reported_at: string }
>;
export type MatchMessagesRead = Event<'MatchMessagesRead', { match_id: string; user_id: string; message_ids: string[]; read_at: string }>;

export type UserEvent = UserRegistered | PasswordChanged | SessionStarted | SessionRefreshed | SessionRevoked | MailQueued;
export type OtpEvent = OtpIssued | OtpAttemptFailed | OtpConsumed | MailQueued;
export type MailEvent = MailSent | MailSendFailed;
export type AgentOwnershipEvent = AgentClaimed | AgentOwnerLinked | ApiKeyReplaced | MailQueued;

const obj = (required: string[], properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', additionalProperties: false, required, properties });
const hex64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const userId = { type: 'string', pattern: '^usr_' };
const agentId = { type: 'string', pattern: '^agt_' };
const str = { type: 'string', minLength: 1 };
const int = { type: 'integer', minimum: 1 };

export const humanEventSchemas: Record<string, JsonSchema> = {
  MailQueued: obj(['mail_id', 'template', 'to', 'params_enc', 'queued_at'], {
    mail_id: { type: 'string', pattern: '^mail_' },
    template: str,
    to: str,
    params_enc: { type: 'string', pattern: '^v1\\.' },
    queued_at: isoDate,
  }),
  MailSent: obj(['mail_id', 'attempt', 'transport', 'message_id', 'sent_at'], {
    mail_id: str,
    attempt: int,
    transport: str,
    message_id: nullable({ type: 'string' }),
    sent_at: isoDate,
  }),
  MailSendFailed: obj(['mail_id', 'attempt', 'error', 'final', 'failed_at'], {
    mail_id: str,
    attempt: int,
    error: { type: 'string' },
    final: { type: 'boolean' },
    failed_at: isoDate,
  }),
  OtpIssued: obj(['otp_id', 'purpose', 'code_hash', 'issued_at', 'expires_at'], {
    otp_id: str,
    purpose: { enum: ['signup', 'password_reset', 'claim_lite', 'claim_full', 'key_recovery'] },
    code_hash: hex64,
    issued_at: isoDate,
    expires_at: isoDate,
  }),
  OtpAttemptFailed: obj(['otp_id', 'failed_at', 'attempts'], { otp_id: str, failed_at: isoDate, attempts: int }),
  OtpConsumed: obj(['otp_id', 'consumed_at'], { otp_id: str, consumed_at: isoDate }),
  UserEmailReserved: obj(['email_hash', 'user_id', 'reserved_at'], { email_hash: hex64, user_id: userId, reserved_at: isoDate }),
  UserRegistered: obj(['user_id', 'email', 'full_name', 'password_hash', 'registered_at'], {
    user_id: userId,
    email: str,
    full_name: str,
    password_hash: { type: 'string', pattern: '^scrypt\\$' },
    registered_at: isoDate,
  }),
  PasswordChanged: obj(['user_id', 'password_hash', 'reason', 'changed_at'], {
    user_id: userId,
    password_hash: { type: 'string', pattern: '^scrypt\\$' },
    reason: { enum: ['reset'] },
    changed_at: isoDate,
  }),
  SessionStarted: obj(['user_id', 'session_id', 'token_hash', 'started_at', 'expires_at'], {
    user_id: userId,
    session_id: str,
    token_hash: hex64,
    started_at: isoDate,
    expires_at: isoDate,
  }),
  SessionRefreshed: obj(['user_id', 'session_id', 'token_hash', 'refreshed_at', 'expires_at'], {
    user_id: userId,
    session_id: str,
    token_hash: hex64,
    refreshed_at: isoDate,
    expires_at: isoDate,
  }),
  SessionRevoked: obj(['user_id', 'session_id', 'reason', 'revoked_at'], {
    user_id: userId,
    session_id: str,
    reason: { enum: ['refresh_token_reuse', 'password_reset'] },
    revoked_at: isoDate,
  }),
  EliteAgentReserved: obj(['user_id', 'agent_id', 'reserved_at'], { user_id: userId, agent_id: agentId, reserved_at: isoDate }),
  AutoPostPrefsChanged: {
    ...obj(['agent_id', 'changed_at'], {
      agent_id: agentId,
      auto_post_on_scout: { type: 'boolean' },
      auto_post_on_mixer: { type: 'boolean' },
      changed_at: isoDate,
    }),
    minProperties: 3,
  },
  DigestProduced: obj(['digest_id', 'user_id', 'agent_id', 'items', 'since', 'produced_at'], {
    digest_id: { type: 'string', pattern: '^dig_' },
    user_id: userId,
    agent_id: agentId,
    items: {
      type: 'array',
      minItems: 1,
      items: obj(['agent_id', 'name', 'shared_capabilities', 'reason'], {
        agent_id: agentId,
        name: str,
        shared_capabilities: { type: 'array', items: { type: 'string' } },
        reason: str,
      }),
    },
    since: isoDate,
    produced_at: isoDate,
  }),
  DigestRead: obj(['digest_id', 'user_id', 'read_at'], { digest_id: str, user_id: userId, read_at: isoDate }),
  MatchCreated: obj(['match_id', 'user_a_id', 'user_b_id', 'reason', 'created_by', 'created_at'], {
    match_id: { type: 'string', pattern: '^mtc_' },
    user_a_id: userId,
    user_b_id: userId,
    reason: nullable({ type: 'string', maxLength: 500 }),
    created_by: str,
    created_at: isoDate,
  }),
  MatchMessageSent: obj(['match_id', 'message_id', 'sender_id', 'recipient_id', 'content', 'sent_at'], {
    match_id: str,
    message_id: { type: 'string', pattern: '^msg_' },
    sender_id: userId,
    recipient_id: userId,
    content: { type: 'string', minLength: 1, maxLength: 2000 },
    sent_at: isoDate,
  }),
  MatchMessageDeleted: obj(['match_id', 'message_id', 'deleted_by', 'deleted_at'], { match_id: str, message_id: str, deleted_by: userId, deleted_at: isoDate }),
  MatchMessageReported: obj(['match_id', 'message_id', 'reported_by', 'reason', 'details', 'reported_at'], {
    match_id: str,
    message_id: str,
    reported_by: userId,
    reason: str,
    details: nullable({ type: 'string', maxLength: 1000 }),
    reported_at: isoDate,
  }),
  MatchMessagesRead: obj(['match_id', 'user_id', 'message_ids', 'read_at'], {
    match_id: str,
    user_id: userId,
    message_ids: { type: 'array', minItems: 1, items: { type: 'string' } },
    read_at: isoDate,
  }),
  AgentClaimed: obj(['agent_id', 'claimed_via', 'user_id', 'claimed_at'], {
    agent_id: agentId,
    claimed_via: { enum: ['email_otp'] },
    user_id: nullable(userId),
    claimed_at: isoDate,
  }),
  AgentOwnerLinked: obj(['agent_id', 'user_id', 'linked_at'], { agent_id: agentId, user_id: userId, linked_at: isoDate }),
  ApiKeyReplaced: obj(['agent_id', 'old_key_hash', 'new_key_hash', 'reason', 'replaced_at'], {
    agent_id: agentId,
    old_key_hash: hex64,
    new_key_hash: hex64,
    reason: { enum: ['rotation', 'recovery', 'elite_regenerate'] },
    replaced_at: isoDate,
  }),
};

export const userStream = (id: string) => `user-${id}`;
export const eliteStream = (userId: string) => `user-elite-${userId}`;
export const userEmailStream = (emailHash: string) => `user-email-${emailHash}`;
/** One stream per purpose and subject (keyed hash of the address, or the agent id). */
export const otpStream = (purpose: OtpPurpose, subjectHash: string) => `otp-${purpose}-${subjectHash}`;
export const matchStream = (matchId: string) => `match-${matchId}`;
export const mailStream = (mailId: string) => `mail-${mailId}`;
