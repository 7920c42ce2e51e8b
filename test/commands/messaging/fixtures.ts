// The messaging decider specs' events: the shared builders (test/fixtures/events.ts) with this area's
// ids, names and times as defaults; a spec overrides only what it is about.
import type { A2ASignature, DirectMessageSent } from '../../../events/messaging.ts';
import * as events from '../../fixtures/events.ts';
import { NOW, time } from '../../fixtures/events.ts';

export { HOUR_MS, NOW, at } from '../../fixtures/events.ts';

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

export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });
const nameOf = (agentId: string) => (agentId === SENDER ? 'Sender' : agentId === RECIPIENT ? 'Recipient' : 'Third');

// `agent-<id>`: registered (by default 90 minutes before NOW, past the first-hour DM lock), then granted credits.
export const agentRegistered = events.agentRegistered.with(() => ({
  agent_id: SENDER,
  name: 'Sender',
  description: null,
  owner_name: 'Sender Owner',
  owner_email: 'sender@example.com',
  registered_at: time(8),
}));
export const monthlyCreditsGranted = events.monthlyCreditsGranted.with(() => ({
  agent_id: SENDER,
  amount_mc: 50_000,
  balance_after_mc: 50_000,
  cycle_start: time(8),
  next_grant_at: '2026-04-10T08:00:00.000Z',
}));
/** A registered agent with `balance_mc` to spend, registered at `registered_at`. */
export const funded = (agentId = SENDER, balance_mc = 50_000, registered_at = time(8)) => [
  agentRegistered({ agent_id: agentId, name: nameOf(agentId), registered_at }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc, cycle_start: registered_at }),
];
export const agentClaimed = events.agentClaimed.with(() => ({ agent_id: SENDER, user_id: OWNER, claimed_at: time(9, 10) }));

export const directMessageSent = events.directMessageSent.with(() => ({
  dm_id: DM,
  agent_id: SENDER,
  from_agent_id: SENDER,
  from_agent_name: 'Sender',
  to_agent_id: RECIPIENT,
  message: 'Hello',
  sent_at: time(9),
  charge: charge('dm', 250, 49_750),
}));
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
export const agentBlocked = events.agentBlocked.with(() => ({ agent_id: RECIPIENT, blocked_agent_id: SENDER, blocked_at: time(9) }));
export const agentUnblocked = events.agentUnblocked.with(() => ({ agent_id: RECIPIENT, blocked_agent_id: SENDER, unblocked_at: time(9, 10) }));

export const signature = (over: Partial<A2ASignature> = {}): A2ASignature => ({
  alg: 'Ed25519',
  key_id: KEY,
  public_key: 'A'.repeat(43),
  signed_at: NOW.toISOString(),
  value: 'B'.repeat(86),
  ...over,
});
export const a2aMessageSent = events.a2aMessageSent.with(() => ({
  message_id: MESSAGE,
  from_agent_id: SENDER,
  to_agent_id: RECIPIENT,
  intent: 'deal_offer',
  payload: { offer: 'pilot' },
  agent_id: SENDER,
  from_agent_name: 'Sender',
  sent_at: time(9),
  charge: charge('a2a_message', 250, 49_750),
}));

export const meshThreadCreated = events.meshThreadCreated.with(() => ({
  thread_id: THREAD,
  agent_id: SENDER,
  agent_name: 'Sender',
  participant_agent_ids: [SENDER, RECIPIENT, THIRD],
  first_message_id: FIRST_MESSAGE,
  created_at: time(9),
  charge: charge('mesh_thread_create', 250, 49_750),
}));
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
export const meshThreadMessagePosted = events.meshThreadMessagePosted.with(() => ({
  thread_id: THREAD,
  message_id: MESSAGE,
  agent_id: SENDER,
  agent_name: 'Sender',
  participant_agent_ids: [SENDER, RECIPIENT, THIRD],
  message: 'Any news?',
  posted_at: time(9),
  charge: charge('mesh_thread_message', 250, 49_750),
}));

// `passport-<agent_id>`
export const passportKeyIssued = events.passportKeyIssued.with(() => ({ agent_id: SENDER, key_id: KEY, private_key_enc: 'v1.first-key' }));

// `notifications-<agent_id>` and `presence-<agent_id>`
export const notificationsRead = events.notificationsRead.with(() => ({
  agent_id: SENDER,
  notification_ids: ['ntf_1', 'ntf_2'],
  read_at: NOW.toISOString(),
}));
export const notificationsExpired = events.notificationsExpired.with(() => ({
  agent_id: SENDER,
  notification_ids: ['ntf_1'],
  expired_at: NOW.toISOString(),
}));
export const agentHeartbeatReceived = events.agentHeartbeatReceived.with(() => ({ agent_id: SENDER, capacity: 80, received_at: NOW.toISOString() }));
