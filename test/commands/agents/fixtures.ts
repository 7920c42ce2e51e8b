// Builders for the agents, credits, webhooks and matching decider specs: each gives a full, valid
// event (fixtures.spec.test.ts checks every default against the catalogue's JSON Schema); a spec
// overrides only the fields it is about.
import type { AgentProfileUpdated, AgentRegistered, OwnerEmailReserved } from '../../../events/agents.ts';
import type { MonthlyCreditsGranted } from '../../../events/credits.ts';
import type { PostPublished, PostScheduled, ScheduledPostCancelled } from '../../../events/feed.ts';
import type { AgentClaimed, AgentOwnerLinked, ApiKeyReplaced, AutoPostPrefsChanged, MailQueued } from '../../../events/humans.ts';
import type { AgentBlocked, AgentUnblocked, DirectMessageSent } from '../../../events/messaging.ts';

export const AGENT = 'agt_agent000000000000000';
export const OTHER = 'agt_other000000000000000';

/** The specs' clock: `at(9, 30)` is 2026-03-10T09:30:00.000Z, the time every command runs at unless it says otherwise. */
export const at = (h: number, m = 0, s = 0) => new Date(Date.UTC(2026, 2, 10, h, m, s));
export const NOW = at(9, 30);
export const HOUR_MS = 3600_000;
export const later = (ms: number, from = NOW) => new Date(from.getTime() + ms);
export const hex = (c: string) => c.repeat(64).slice(0, 64);
export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });

export const agentRegistered = (over: Partial<AgentRegistered['data']> = {}): AgentRegistered => ({
  type: 'AgentRegistered',
  data: {
    agent_id: AGENT,
    name: 'Agent',
    description: null,
    capabilities: ['lead-gen'],
    owner_name: 'Owner',
    owner_email: 'owner@example.com',
    webhook_url: null,
    webhook_secret_enc: 'v1.secret',
    api_key_hash: hex('a'),
    claim_token_hash: hex('c'),
    tier: 'free',
    registration_source: 'api',
    intent_type: 'seeker',
    registered_at: at(9).toISOString(),
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
    cycle_start: at(9).toISOString(),
    next_grant_at: '2026-04-10T09:00:00.000Z',
    ...over,
  },
});
/** A registered agent (at 09:00) with `balance_mc` to spend. */
export const funded = (agentId = AGENT, balance_mc = 50_000) => [
  agentRegistered({ agent_id: agentId }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc }),
];
export const agentProfileUpdated = (over: Partial<AgentProfileUpdated['data']> = {}): AgentProfileUpdated => ({
  type: 'AgentProfileUpdated',
  data: { agent_id: AGENT, name: 'Renamed', ...over },
});
export const agentClaimed = (over: Partial<AgentClaimed['data']> = {}): AgentClaimed => ({
  type: 'AgentClaimed',
  data: { agent_id: AGENT, claimed_via: 'email_otp', user_id: null, claimed_at: at(9, 10).toISOString(), ...over },
});
export const autoPostPrefsChanged = (over: Partial<AutoPostPrefsChanged['data']> = {}): AutoPostPrefsChanged => ({
  type: 'AutoPostPrefsChanged',
  data: { agent_id: AGENT, auto_post_on_scout: false, changed_at: at(9, 10).toISOString(), ...over },
});
/** A paid post of the agent (the feed's PublishPost), 0.1 credits. */
export const postPublished = (over: Partial<PostPublished['data']> = {}): PostPublished => ({
  type: 'PostPublished',
  data: {
    post_id: 'pst_post00000000000000000',
    agent_id: AGENT,
    agent_name: 'Agent',
    title: 'Looking for leads',
    body: 'In #saas',
    post_type: 'signal_found',
    room_slug: null,
    hashtags: ['saas'],
    published_at: at(9, 10).toISOString(),
    charge: charge('post', 100, 49_900),
    poll: null,
    ...over,
  },
});

// `owner-email-<hash>`
export const EMAIL_HASH = hex('e');
export const ownerEmailReserved = (over: Partial<OwnerEmailReserved['data']> = {}): OwnerEmailReserved => ({
  type: 'OwnerEmailReserved',
  data: { email_hash: EMAIL_HASH, agent_id: OTHER, reserved_at: at(9).toISOString(), ...over },
});

// What the other areas append to `agent-<id>` (the aggregate's fold is specified against them).
export const agentOwnerLinked = (over: Partial<AgentOwnerLinked['data']> = {}): AgentOwnerLinked => ({
  type: 'AgentOwnerLinked',
  data: { agent_id: AGENT, user_id: 'usr_owner000000000000000', linked_at: at(9, 20).toISOString(), ...over },
});
export const apiKeyReplaced = (over: Partial<ApiKeyReplaced['data']> = {}): ApiKeyReplaced => ({
  type: 'ApiKeyReplaced',
  data: { agent_id: AGENT, old_key_hash: hex('a'), new_key_hash: hex('b'), reason: 'rotation', replaced_at: at(9, 20).toISOString(), ...over },
});
export const mailQueued = (over: Partial<MailQueued['data']> = {}): MailQueued => ({
  type: 'MailQueued',
  data: {
    mail_id: 'mail_0000000000000000000',
    template: 'agent_claimed',
    to: 'owner@example.com',
    params_enc: 'v1.params',
    queued_at: at(9, 20).toISOString(),
    ...over,
  },
});
export const directMessageSent = (over: Partial<DirectMessageSent['data']> = {}): DirectMessageSent => ({
  type: 'DirectMessageSent',
  data: {
    dm_id: 'dm_dm000000000000000000',
    agent_id: AGENT,
    from_agent_id: AGENT,
    from_agent_name: 'Agent',
    to_agent_id: OTHER,
    to_user_id: null,
    to_email: null,
    message: 'Hello',
    sent_at: at(9, 10).toISOString(),
    charge: charge('dm', 250, 49_750),
    owner_user_id: null,
    ...over,
  },
});
export const agentBlocked = (over: Partial<AgentBlocked['data']> = {}): AgentBlocked => ({
  type: 'AgentBlocked',
  data: { agent_id: AGENT, blocked_agent_id: OTHER, blocked_at: at(9, 10).toISOString(), ...over },
});
export const agentUnblocked = (over: Partial<AgentUnblocked['data']> = {}): AgentUnblocked => ({
  type: 'AgentUnblocked',
  data: { agent_id: AGENT, blocked_agent_id: OTHER, unblocked_at: at(9, 20).toISOString(), ...over },
});
export const postScheduled = (over: Partial<PostScheduled['data']> = {}): PostScheduled => ({
  type: 'PostScheduled',
  data: {
    post_id: 'pst_later0000000000000000',
    agent_id: AGENT,
    agent_name: 'Agent',
    title: 'Later',
    body: 'Tomorrow #saas',
    post_type: 'intro_sent',
    room_slug: null,
    hashtags: ['saas'],
    poll: null,
    signal_hash: hex('d'),
    publish_at: '2026-03-11T00:00:00.000Z',
    scheduled_at: at(9, 10).toISOString(),
    charge: charge('schedule_post', 100, 49_900),
    ...over,
  },
});
export const scheduledPostCancelled = (over: Partial<ScheduledPostCancelled['data']> = {}): ScheduledPostCancelled => ({
  type: 'ScheduledPostCancelled',
  data: {
    post_id: 'pst_later0000000000000000',
    agent_id: AGENT,
    cancelled_at: at(9, 20).toISOString(),
    charge: charge('schedule_post_refund', -100, 50_000),
    ...over,
  },
});
