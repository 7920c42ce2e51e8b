// Builders for the humans decider specs: each gives a full, valid event (fixtures.spec.test.ts
// checks every default against the catalogue's JSON Schema); a spec overrides only what it is about.
import type { AgentRegistered } from '../../../events/agents.ts';
import type { MonthlyCreditsGranted } from '../../../events/credits.ts';
import type {
  AgentClaimed,
  AgentOwnerLinked,
  DigestProduced,
  DigestRead,
  MailQueued,
  MatchCreated,
  MatchMessageDeleted,
  MatchMessageReported,
  MatchMessageSent,
  MatchMessagesRead,
  OtpAttemptFailed,
  OtpConsumed,
  OtpIssued,
  SessionRefreshed,
  SessionRevoked,
  SessionStarted,
  UserRegistered,
} from '../../../events/humans.ts';
import type { DirectMessageSent } from '../../../events/messaging.ts';

export const USER = 'usr_user0000000000000000';
export const OTHER_USER = 'usr_other000000000000000';
export const ADMIN = 'usr_admin000000000000000';
export const AGENT = 'agt_agent000000000000000';
export const OTHER_AGENT = 'agt_other000000000000000';
export const OTP = 'otp_code0000000000000000';
export const SESSION = 'ses_session0000000000000';
export const MATCH = 'mtc_match000000000000000';
export const MESSAGE = 'msg_message0000000000000';
export const DIGEST = 'dig_digest00000000000000';

/** The specs' clock: `at(9, 30)` is 2026-03-10T09:30:00.000Z, the time every command runs at unless it says otherwise. */
export const at = (h: number, m = 0, s = 0) => new Date(Date.UTC(2026, 2, 10, h, m, s));
export const NOW = at(9, 30);
export const iso = (d: Date) => d.toISOString();
export const later = (ms: number, from = NOW) => new Date(from.getTime() + ms);
export const hex = (c: string) => c.repeat(64).slice(0, 64);

/** A sealed mail as the handler builds it before deciding (its ciphertext is opaque to the decider). */
export const mailQueued = (over: Partial<MailQueued['data']> = {}): MailQueued => ({
  type: 'MailQueued',
  data: { mail_id: 'mail_0000000000000000000', template: 'signup_otp', to: 'ann@example.com', params_enc: 'v1.sealed', queued_at: iso(NOW), ...over },
});

// `otp-<purpose>-<subject>`
export const otpIssued = (over: Partial<OtpIssued['data']> = {}): OtpIssued => ({
  type: 'OtpIssued',
  data: { otp_id: OTP, purpose: 'signup', code_hash: hex('c'), issued_at: iso(at(9, 25)), expires_at: iso(at(9, 35)), ...over },
});
export const otpAttemptFailed = (over: Partial<OtpAttemptFailed['data']> = {}): OtpAttemptFailed => ({
  type: 'OtpAttemptFailed',
  data: { otp_id: OTP, failed_at: iso(at(9, 26)), attempts: 1, ...over },
});
export const otpConsumed = (over: Partial<OtpConsumed['data']> = {}): OtpConsumed => ({
  type: 'OtpConsumed',
  data: { otp_id: OTP, consumed_at: iso(at(9, 26)), ...over },
});

// `user-<id>`
export const userRegistered = (over: Partial<UserRegistered['data']> = {}): UserRegistered => ({
  type: 'UserRegistered',
  data: { user_id: USER, email: 'ann@example.com', full_name: 'Ann Lee', password_hash: 'scrypt$15$8$1$salt$hash', registered_at: iso(at(9)), ...over },
});
export const sessionStarted = (over: Partial<SessionStarted['data']> = {}): SessionStarted => ({
  type: 'SessionStarted',
  data: { user_id: USER, session_id: SESSION, token_hash: hex('1'), started_at: iso(at(9)), expires_at: '2026-03-17T09:00:00.000Z', ...over },
});
export const sessionRefreshed = (over: Partial<SessionRefreshed['data']> = {}): SessionRefreshed => ({
  type: 'SessionRefreshed',
  data: { user_id: USER, session_id: SESSION, token_hash: hex('2'), refreshed_at: iso(at(9, 10)), expires_at: '2026-03-17T09:10:00.000Z', ...over },
});
export const sessionRevoked = (over: Partial<SessionRevoked['data']> = {}): SessionRevoked => ({
  type: 'SessionRevoked',
  data: { user_id: USER, session_id: SESSION, reason: 'refresh_token_reuse', revoked_at: iso(at(9, 10)), ...over },
});
export const digestProduced = (over: Partial<DigestProduced['data']> = {}): DigestProduced => ({
  type: 'DigestProduced',
  data: {
    digest_id: DIGEST,
    user_id: USER,
    agent_id: AGENT,
    items: [{ agent_id: OTHER_AGENT, name: 'Other', shared_capabilities: ['lead-gen'], reason: 'Shares lead-gen with Agent' }],
    since: '2026-03-03T09:00:00.000Z',
    produced_at: iso(at(9)),
    ...over,
  },
});
export const digestRead = (over: Partial<DigestRead['data']> = {}): DigestRead => ({
  type: 'DigestRead',
  data: { digest_id: DIGEST, user_id: USER, read_at: iso(at(9, 10)), ...over },
});

// `agent-<id>`
export const agentRegistered = (over: Partial<AgentRegistered['data']> = {}): AgentRegistered => ({
  type: 'AgentRegistered',
  data: {
    agent_id: AGENT,
    name: 'Agent',
    description: null,
    capabilities: ['lead-gen'],
    owner_name: 'Ann Lee',
    owner_email: 'owner@example.com',
    webhook_url: null,
    webhook_secret_enc: 'v1.secret',
    api_key_hash: hex('a'),
    claim_token_hash: hex('b'),
    tier: 'free',
    registration_source: 'api',
    intent_type: 'seeker',
    registered_at: iso(at(9)),
    ...over,
  },
});
export const monthlyCreditsGranted = (over: Partial<MonthlyCreditsGranted['data']> = {}): MonthlyCreditsGranted => ({
  type: 'MonthlyCreditsGranted',
  data: {
    agent_id: AGENT,
    cycle: 0,
    amount_mc: 50_000,
    balance_after_mc: 50_000,
    cycle_start: iso(at(9)),
    next_grant_at: '2026-04-10T09:00:00.000Z',
    ...over,
  },
});
export const agentClaimed = (over: Partial<AgentClaimed['data']> = {}): AgentClaimed => ({
  type: 'AgentClaimed',
  data: { agent_id: AGENT, claimed_via: 'email_otp', user_id: null, claimed_at: iso(at(9, 10)), ...over },
});
export const agentOwnerLinked = (over: Partial<AgentOwnerLinked['data']> = {}): AgentOwnerLinked => ({
  type: 'AgentOwnerLinked',
  data: { agent_id: AGENT, user_id: USER, linked_at: iso(at(9, 20)), ...over },
});
export const directMessageSent = (over: Partial<DirectMessageSent['data']> = {}): DirectMessageSent => ({
  type: 'DirectMessageSent',
  data: {
    dm_id: 'dm_dm000000000000000000',
    agent_id: OTHER_AGENT,
    from_agent_id: OTHER_AGENT,
    from_agent_name: 'Other',
    to_agent_id: null,
    to_user_id: USER,
    to_email: null,
    message: 'Hello',
    sent_at: iso(at(9, 10)),
    charge: { action: 'dm', amount_mc: 250, balance_after_mc: 49_750 },
    owner_user_id: null,
    ...over,
  },
});
/** A registered agent (at 09:00) with 50 credits. */
export const registered = (over: Partial<AgentRegistered['data']> = {}) => [agentRegistered(over), monthlyCreditsGranted({ agent_id: over.agent_id ?? AGENT })];

// `match-<id>`
export const matchCreated = (over: Partial<MatchCreated['data']> = {}): MatchCreated => ({
  type: 'MatchCreated',
  data: { match_id: MATCH, user_a_id: USER, user_b_id: OTHER_USER, reason: 'Both in SaaS', created_by: ADMIN, created_at: iso(at(9)), ...over },
});
export const matchMessageSent = (over: Partial<MatchMessageSent['data']> = {}): MatchMessageSent => ({
  type: 'MatchMessageSent',
  data: { match_id: MATCH, message_id: MESSAGE, sender_id: USER, recipient_id: OTHER_USER, content: 'Hi there', sent_at: iso(at(9, 10)), ...over },
});
export const matchMessageDeleted = (over: Partial<MatchMessageDeleted['data']> = {}): MatchMessageDeleted => ({
  type: 'MatchMessageDeleted',
  data: { match_id: MATCH, message_id: MESSAGE, deleted_by: USER, deleted_at: iso(at(9, 20)), ...over },
});
export const matchMessageReported = (over: Partial<MatchMessageReported['data']> = {}): MatchMessageReported => ({
  type: 'MatchMessageReported',
  data: { match_id: MATCH, message_id: MESSAGE, reported_by: OTHER_USER, reason: 'spam', details: null, reported_at: iso(at(9, 20)), ...over },
});
export const matchMessagesRead = (over: Partial<MatchMessagesRead['data']> = {}): MatchMessagesRead => ({
  type: 'MatchMessagesRead',
  data: { match_id: MATCH, user_id: OTHER_USER, message_ids: [MESSAGE], read_at: iso(at(9, 20)), ...over },
});
