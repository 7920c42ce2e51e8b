// Builders for the messaging decider specs: each gives a full, valid event (fixtures.spec.test.ts
// checks every default against the catalogue's JSON Schema); a spec overrides only what it is about.
import type { AgentRegistered } from '../../../events/agents.ts';
import type { MonthlyCreditsGranted } from '../../../events/credits.ts';
import type { AgentClaimed } from '../../../events/humans.ts';
import type {
  A2AMessageSent,
  A2ASignature,
  AgentBlocked,
  AgentHeartbeatReceived,
  AgentUnblocked,
  DirectMessageSent,
  MeshThreadCreated,
  MeshThreadMessagePosted,
  NotificationsExpired,
  NotificationsRead,
  PassportKeyIssued,
} from '../../../events/messaging.ts';

export const SENDER = 'agt_sender00000000000000';
export const RECIPIENT = 'agt_recipient00000000000';
export const THIRD = 'agt_third000000000000000';
export const OWNER = 'usr_owner000000000000000';
export const MEMBER = 'usr_member00000000000000';
export const DM = 'dm_dm0000000000000000000';
export const MESSAGE = 'msg_message0000000000000';
export const FIRST_MESSAGE = 'msg_first000000000000000';
export const THREAD = 'thr_thread00000000000000';
export const KEY = 'key_key00000000000000000';
export const NEXT_KEY = 'key_next0000000000000000';

/** The specs' clock: `at(9, 30)` is 2026-03-10T09:30:00.000Z, the time every command runs at unless it says otherwise. */
export const at = (h: number, m = 0) => new Date(Date.UTC(2026, 2, 10, h, m));
export const NOW = at(9, 30);
export const HOUR_MS = 3600_000;
const hex = (c: string) => c.repeat(64).slice(0, 64);
export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });
const nameOf = (agentId: string) => (agentId === SENDER ? 'Sender' : agentId === RECIPIENT ? 'Recipient' : 'Third');

// `agent-<id>`: registered (by default 90 minutes before NOW, past the first-hour DM lock), then granted credits.
export const agentRegistered = (over: Partial<AgentRegistered['data']> = {}): AgentRegistered => ({
  type: 'AgentRegistered',
  data: {
    agent_id: SENDER,
    name: 'Sender',
    description: null,
    capabilities: ['lead-gen'],
    owner_name: 'Sender Owner',
    owner_email: 'sender@example.com',
    webhook_url: null,
    webhook_secret_enc: 'v1.secret',
    api_key_hash: hex('a'),
    claim_token_hash: hex('c'),
    tier: 'free',
    registration_source: 'api',
    intent_type: 'networking',
    registered_at: at(8).toISOString(),
    ...over,
  },
});
export const monthlyCreditsGranted = (over: Partial<MonthlyCreditsGranted['data']> = {}): MonthlyCreditsGranted => ({
  type: 'MonthlyCreditsGranted',
  data: {
    agent_id: SENDER,
    cycle: 0,
    amount_mc: 50_000,
    balance_after_mc: 50_000,
    cycle_start: at(8).toISOString(),
    next_grant_at: '2026-04-10T08:00:00.000Z',
    ...over,
  },
});
/** A registered agent with `balance_mc` to spend, registered at `registered_at`. */
export const funded = (agentId = SENDER, balance_mc = 50_000, registered_at = at(8).toISOString()) => [
  agentRegistered({ agent_id: agentId, name: nameOf(agentId), registered_at }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc, cycle_start: registered_at }),
];
export const agentClaimed = (over: Partial<AgentClaimed['data']> = {}): AgentClaimed => ({
  type: 'AgentClaimed',
  data: { agent_id: SENDER, claimed_via: 'email_otp', user_id: OWNER, claimed_at: at(9, 10).toISOString(), ...over },
});

export const directMessageSent = (over: Partial<DirectMessageSent['data']> = {}): DirectMessageSent => ({
  type: 'DirectMessageSent',
  data: {
    dm_id: DM,
    agent_id: SENDER,
    from_agent_id: SENDER,
    from_agent_name: 'Sender',
    to_agent_id: RECIPIENT,
    to_user_id: null,
    to_email: null,
    message: 'Hello',
    sent_at: at(9).toISOString(),
    charge: charge('dm', 250, 49_750),
    owner_user_id: null,
    ...over,
  },
});
/** `n` DMs to `to`, one a minute from `from` on (balances follow 50 credits down). */
export const dmsSent = (n: number, from: Date, to: Partial<DirectMessageSent['data']> = {}) =>
  Array.from({ length: n }, (_, i) =>
    directMessageSent({
      dm_id: `dm_sent${i}`,
      sent_at: new Date(from.getTime() + i * 60_000).toISOString(),
      charge: charge('dm', 250, 50_000 - 250 * (i + 1)),
      ...to,
    }),
  );
export const agentBlocked = (over: Partial<AgentBlocked['data']> = {}): AgentBlocked => ({
  type: 'AgentBlocked',
  data: { agent_id: RECIPIENT, blocked_agent_id: SENDER, blocked_at: at(9).toISOString(), ...over },
});
export const agentUnblocked = (over: Partial<AgentUnblocked['data']> = {}): AgentUnblocked => ({
  type: 'AgentUnblocked',
  data: { agent_id: RECIPIENT, blocked_agent_id: SENDER, unblocked_at: at(9, 10).toISOString(), ...over },
});

export const signature = (over: Partial<A2ASignature> = {}): A2ASignature => ({
  alg: 'Ed25519',
  key_id: KEY,
  public_key: 'A'.repeat(43),
  signed_at: NOW.toISOString(),
  value: 'B'.repeat(86),
  ...over,
});
export const a2aMessageSent = (over: Partial<A2AMessageSent['data']> = {}): A2AMessageSent => ({
  type: 'A2AMessageSent',
  data: {
    message_id: MESSAGE,
    from_agent_id: SENDER,
    to_agent_id: RECIPIENT,
    intent: 'deal_offer',
    payload: { offer: 'pilot' },
    agent_id: SENDER,
    from_agent_name: 'Sender',
    signature: null,
    sent_at: at(9).toISOString(),
    charge: charge('a2a_message', 250, 49_750),
    ...over,
  },
});

export const meshThreadCreated = (over: Partial<MeshThreadCreated['data']> = {}): MeshThreadCreated => ({
  type: 'MeshThreadCreated',
  data: {
    thread_id: THREAD,
    agent_id: SENDER,
    agent_name: 'Sender',
    name: 'Deal room',
    participant_agent_ids: [SENDER, RECIPIENT, THIRD],
    first_message_id: FIRST_MESSAGE,
    first_message: 'Welcome',
    created_at: at(9).toISOString(),
    charge: charge('mesh_thread_create', 250, 49_750),
    ...over,
  },
});
/** `n` threads created one a minute from `from` on. */
export const threadsCreated = (n: number, from: Date) =>
  Array.from({ length: n }, (_, i) =>
    meshThreadCreated({
      thread_id: `thr_created${i}`,
      first_message_id: `msg_created${i}`,
      created_at: new Date(from.getTime() + i * 60_000).toISOString(),
      charge: charge('mesh_thread_create', 250, 50_000 - 250 * (i + 1)),
    }),
  );
export const meshThreadMessagePosted = (over: Partial<MeshThreadMessagePosted['data']> = {}): MeshThreadMessagePosted => ({
  type: 'MeshThreadMessagePosted',
  data: {
    thread_id: THREAD,
    message_id: MESSAGE,
    agent_id: SENDER,
    agent_name: 'Sender',
    participant_agent_ids: [SENDER, RECIPIENT, THIRD],
    message: 'Any news?',
    posted_at: at(9).toISOString(),
    charge: charge('mesh_thread_message', 250, 49_750),
    ...over,
  },
});

// `passport-<agent_id>`
export const passportKeyIssued = (over: Partial<PassportKeyIssued['data']> = {}): PassportKeyIssued => ({
  type: 'PassportKeyIssued',
  data: {
    agent_id: SENDER,
    key_id: KEY,
    public_key: 'A'.repeat(43),
    private_key_enc: 'v1.first-key',
    issued_at: at(9).toISOString(),
    replaces_key_id: null,
    ...over,
  },
});

// `notifications-<agent_id>` and `presence-<agent_id>`
export const notificationsRead = (over: Partial<NotificationsRead['data']> = {}): NotificationsRead => ({
  type: 'NotificationsRead',
  data: { agent_id: SENDER, notification_ids: ['ntf_1', 'ntf_2'], read_at: NOW.toISOString(), ...over },
});
export const notificationsExpired = (over: Partial<NotificationsExpired['data']> = {}): NotificationsExpired => ({
  type: 'NotificationsExpired',
  data: { agent_id: SENDER, notification_ids: ['ntf_1'], expired_at: NOW.toISOString(), ...over },
});
export const agentHeartbeatReceived = (over: Partial<AgentHeartbeatReceived['data']> = {}): AgentHeartbeatReceived => ({
  type: 'AgentHeartbeatReceived',
  data: { agent_id: SENDER, status: 'online', capacity: 80, received_at: NOW.toISOString(), ...over },
});
