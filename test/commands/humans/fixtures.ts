// The humans decider specs' events: the shared builders (test/fixtures/events.ts) with this area's ids,
// names and times as defaults; a spec overrides only what it is about.
import type { AgentRegistered } from '../../../events/agents.ts';
import * as events from '../../fixtures/events.ts';
import { NOW, hex, time } from '../../fixtures/events.ts';

export { NOW, at, hex, later } from '../../fixtures/events.ts';

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

export const iso = (d: Date) => d.toISOString();

/** A sealed mail as the handler builds it before deciding (its ciphertext is opaque to the decider). */
export const mailQueued = events.mailQueued.with(() => ({
  mail_id: 'mail_0000000000000000000',
  template: 'signup_otp',
  to: 'ann@example.com',
  params_enc: 'v1.sealed',
  queued_at: iso(NOW),
}));

// `otp-<purpose>-<subject>`
export const otpIssued = events.otpIssued.with(() => ({ otp_id: OTP, issued_at: time(9, 25), expires_at: time(9, 35) }));
export const otpAttemptFailed = events.otpAttemptFailed.with(() => ({ otp_id: OTP, failed_at: time(9, 26) }));
export const otpConsumed = events.otpConsumed.with(() => ({ otp_id: OTP, consumed_at: time(9, 26) }));

// `user-<id>`
export const userRegistered = events.userRegistered.with(() => ({
  user_id: USER,
  email: 'ann@example.com',
  full_name: 'Ann Lee',
  password_hash: 'scrypt$15$8$1$salt$hash',
}));
export const sessionStarted = events.sessionStarted.with(() => ({ session_id: SESSION, user_id: USER }));
export const sessionRefreshed = events.sessionRefreshed.with(() => ({
  session_id: SESSION,
  user_id: USER,
  refreshed_at: time(9, 10),
  expires_at: '2026-03-17T09:10:00.000Z',
}));
export const sessionRevoked = events.sessionRevoked.with(() => ({ session_id: SESSION, user_id: USER, revoked_at: time(9, 10) }));
export const digestProduced = events.digestProduced.with(() => ({
  digest_id: DIGEST,
  user_id: USER,
  agent_id: AGENT,
  items: [{ agent_id: OTHER_AGENT, name: 'Other', shared_capabilities: ['lead-gen'], reason: 'Shares lead-gen with Agent' }],
  since: '2026-03-03T09:00:00.000Z',
  produced_at: time(9),
}));
export const digestRead = events.digestRead.with(() => ({ digest_id: DIGEST, user_id: USER, read_at: time(9, 10) }));

// `agent-<id>`
export const agentRegistered = events.agentRegistered.with(() => ({
  agent_id: AGENT,
  name: 'Agent',
  description: null,
  owner_name: 'Ann Lee',
  owner_email: 'owner@example.com',
  claim_token_hash: hex('b'),
  intent_type: 'seeker',
}));
export const monthlyCreditsGranted = events.monthlyCreditsGranted.with(() => ({ agent_id: AGENT, amount_mc: 50_000, balance_after_mc: 50_000 }));
export const agentClaimed = events.agentClaimed.with(() => ({ agent_id: AGENT, claimed_at: time(9, 10) }));
export const agentOwnerLinked = events.agentOwnerLinked.with(() => ({ agent_id: AGENT, user_id: USER, linked_at: time(9, 20) }));
export const directMessageSent = events.directMessageSent.with(() => ({
  dm_id: 'dm_dm000000000000000000',
  agent_id: OTHER_AGENT,
  from_agent_id: OTHER_AGENT,
  from_agent_name: 'Other',
  to_agent_id: null,
  to_user_id: USER,
  message: 'Hello',
  sent_at: time(9, 10),
  charge: events.charge(250, 49_750, 'dm'),
}));
/** A registered agent (at 09:00) with 50 credits. */
export const registered = (over: Partial<AgentRegistered['data']> = {}) => [agentRegistered(over), monthlyCreditsGranted({ agent_id: over.agent_id ?? AGENT })];

// `match-<id>`
export const matchCreated = events.matchCreated.with(() => ({
  match_id: MATCH,
  user_a_id: USER,
  user_b_id: OTHER_USER,
  reason: 'Both in SaaS',
  created_by: ADMIN,
  created_at: time(9),
}));
export const matchMessageSent = events.matchMessageSent.with(() => ({
  match_id: MATCH,
  message_id: MESSAGE,
  sender_id: USER,
  recipient_id: OTHER_USER,
  content: 'Hi there',
  sent_at: time(9, 10),
}));
export const matchMessageDeleted = events.matchMessageDeleted.with(() => ({
  match_id: MATCH,
  message_id: MESSAGE,
  deleted_by: USER,
  deleted_at: time(9, 20),
}));
export const matchMessageReported = events.matchMessageReported.with(() => ({
  match_id: MATCH,
  message_id: MESSAGE,
  reported_by: OTHER_USER,
  reported_at: time(9, 20),
}));
export const matchMessagesRead = events.matchMessagesRead.with(() => ({
  match_id: MATCH,
  user_id: OTHER_USER,
  message_ids: [MESSAGE],
  read_at: time(9, 20),
}));
