// The agents, credits, webhooks and matching decider specs' events: the shared builders
// (test/fixtures/events.ts) with this area's ids, names and times as defaults; a spec overrides only
// the fields it is about.
import * as events from '../../fixtures/events.ts';
import { hex, time } from '../../fixtures/events.ts';

export { HOUR_MS, NOW, at, hex, later } from '../../fixtures/events.ts';

export const AGENT = 'agt_agent000000000000000';
export const OTHER = 'agt_other000000000000000';
export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });

export const agentRegistered = events.agentRegistered.with(() => ({
  agent_id: AGENT,
  name: 'Agent',
  description: null,
  owner_name: 'Owner',
  owner_email: 'owner@example.com',
  intent_type: 'seeker',
}));
export const monthlyCreditsGranted = events.monthlyCreditsGranted.with(() => ({ agent_id: AGENT, amount_mc: 50_000, balance_after_mc: 50_000 }));
/** A registered agent (at 09:00) with `balance_mc` to spend. */
export const funded = (agentId = AGENT, balance_mc = 50_000) => [
  agentRegistered({ agent_id: agentId }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc }),
];
export const agentDeactivated = events.agentDeactivated.with(() => ({ agent_id: AGENT }));
export const agentBanned = events.agentBanned.with(() => ({ agent_id: AGENT }));
export const agentProfileUpdated = events.agentProfileUpdated.with(() => ({ agent_id: AGENT, name: 'Renamed' }));
export const agentClaimed = events.agentClaimed.with(() => ({ agent_id: AGENT, claimed_at: time(9, 10) }));
export const autoPostPrefsChanged = events.autoPostPrefsChanged.with(() => ({ agent_id: AGENT, changed_at: time(9, 10) }));
/** A paid post of the agent (the feed's PublishPost), 0.1 credits. */
export const postPublished = events.postPublished.with(() => ({
  agent_id: AGENT,
  agent_name: 'Agent',
  body: 'In #saas',
  room_slug: null,
  hashtags: ['saas'],
  published_at: time(9, 10),
  charge: charge('post', 100, 49_900),
  poll: null,
}));

// `owner-email-<hash>`
export const EMAIL_HASH = hex('e');
export const ownerEmailReserved = events.ownerEmailReserved.with(() => ({ email_hash: EMAIL_HASH, agent_id: OTHER }));

// What the other areas append to `agent-<id>` (the aggregate's fold is specified against them).
export const agentOwnerLinked = events.agentOwnerLinked.with(() => ({ agent_id: AGENT, user_id: 'usr_owner000000000000000', linked_at: time(9, 20) }));
export const apiKeyReplaced = events.apiKeyReplaced.with(() => ({ agent_id: AGENT, replaced_at: time(9, 20) }));
export const mailQueued = events.mailQueued.with(() => ({
  mail_id: 'mail_0000000000000000000',
  template: 'agent_claimed',
  to: 'owner@example.com',
  queued_at: time(9, 20),
}));
export const directMessageSent = events.directMessageSent.with(() => ({
  dm_id: 'dm_dm000000000000000000',
  agent_id: AGENT,
  from_agent_id: AGENT,
  from_agent_name: 'Agent',
  to_agent_id: OTHER,
  message: 'Hello',
  sent_at: time(9, 10),
  charge: charge('dm', 250, 49_750),
}));
export const agentBlocked = events.agentBlocked.with(() => ({ agent_id: AGENT, blocked_agent_id: OTHER, blocked_at: time(9, 10) }));
export const agentUnblocked = events.agentUnblocked.with(() => ({ agent_id: AGENT, blocked_agent_id: OTHER, unblocked_at: time(9, 20) }));
export const postScheduled = events.postScheduled.with(() => ({
  post_id: 'pst_later0000000000000000',
  agent_id: AGENT,
  agent_name: 'Agent',
  title: 'Later',
  body: 'Tomorrow #saas',
  post_type: 'intro_sent',
  hashtags: ['saas'],
  signal_hash: hex('d'),
  publish_at: '2026-03-11T00:00:00.000Z',
  scheduled_at: time(9, 10),
  charge: charge('schedule_post', 100, 49_900),
}));
export const scheduledPostCancelled = events.scheduledPostCancelled.with(() => ({
  post_id: 'pst_later0000000000000000',
  agent_id: AGENT,
  cancelled_at: time(9, 20),
  charge: charge('schedule_post_refund', -100, 50_000),
}));
