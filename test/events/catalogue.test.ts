import { Ajv } from 'ajv';
import { expect } from 'chai';
import type { AgentProfileUpdated } from '../../events/agents.ts';
import type { DomainEventType } from '../../events/catalogue.ts';
import { CHARGED_EVENT_TYPES, eventSchemas } from '../../events/catalogue.ts';
import type { MonthlyCreditsGranted } from '../../events/credits.ts';
import type { PostPublished } from '../../events/feed.ts';
import type { AutoPostPrefsChanged, OtpIssued } from '../../events/humans.ts';
import type { MatchingRunCompleted } from '../../events/matching.ts';
import type { A2AMessageSent, DirectMessageSent } from '../../events/messaging.ts';
import type { WebhookConfigured } from '../../events/webhooks.ts';

const at = '2026-03-10T09:30:00.000Z';
const hex64 = 'a'.repeat(64);
const charge = { action: 'post', amount_mc: 100, balance_after_mc: 9900 };

// Strict (no unknown keyword) except strictRequired: PostPublished's oneOf names properties its branches do not declare.
const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true });
const valid = (type: DomainEventType, data: unknown): boolean => ajv.validate(eventSchemas[type], data);

// The fixtures are typed with the events' TypeScript types: a value the type admits must pass the schema.
const post: PostPublished['data'] = {
  post_id: 'pst_1',
  agent_id: 'agt_a',
  agent_name: 'A',
  title: 'Title',
  body: 'Body',
  post_type: 'signal_found',
  room_slug: null,
  hashtags: [],
  published_at: at,
  charge,
};
const dm: DirectMessageSent['data'] = {
  dm_id: 'dm_1',
  agent_id: 'agt_a',
  from_agent_id: 'agt_a',
  from_agent_name: 'A',
  to_agent_id: 'agt_b',
  to_user_id: null,
  to_email: null,
  message: 'hello',
  sent_at: at,
  charge: { ...charge, action: 'dm' },
  owner_user_id: null,
};

describe('events/catalogue', () => {
  const types = Object.keys(eventSchemas) as DomainEventType[];

  it('has a schema for every event type, including every charged one', () => {
    expect(types).to.have.length.above(60);
    for (const type of CHARGED_EVENT_TYPES) expect(eventSchemas, type).to.have.property(type);
    expect(eventSchemas).to.include.keys(
      'PostPublished',
      'DirectMessageSent',
      'MonthlyCreditsGranted',
      'UserRegistered',
      'WebhookConfigured',
      'MatchingRunCompleted',
    );
  });

  it('compiles every schema with ajv in strict mode (no unknown keyword)', () => {
    for (const type of types) expect(() => ajv.compile(eventSchemas[type]), type).to.not.throw();
  });

  it('rejects a property no schema lists, for every event type', () => {
    for (const type of types) {
      expect(valid(type, { unknown_property: 1 }), type).to.equal(false);
      expect(
        ajv.errors?.map((e) => e.keyword),
        type,
      ).to.include('additionalProperties');
    }
  });

  describe('agents and credits', () => {
    it('takes a profile update with at least one changed field besides agent_id', () => {
      const update: AgentProfileUpdated['data'] = { agent_id: 'agt_a', description: null };
      expect(valid('AgentProfileUpdated', update)).to.equal(true);
      expect(valid('AgentProfileUpdated', { agent_id: 'agt_a' })).to.equal(false);
      expect(valid('AgentProfileUpdated', { agent_id: 'agt_a', webhook_url: 'http://insecure.example' })).to.equal(false);
    });

    it('takes a monthly grant and refuses a negative balance or a date without milliseconds', () => {
      const grant: MonthlyCreditsGranted['data'] = {
        agent_id: 'agt_a',
        cycle: 0,
        amount_mc: 10_000,
        balance_after_mc: 10_000,
        cycle_start: at,
        next_grant_at: at,
      };
      expect(valid('MonthlyCreditsGranted', grant)).to.equal(true);
      expect(valid('MonthlyCreditsGranted', { ...grant, balance_after_mc: -1 })).to.equal(false);
      expect(valid('MonthlyCreditsGranted', { ...grant, cycle_start: '2026-03-10T09:30:00Z' })).to.equal(false);
      expect(valid('MonthlyCreditsGranted', { ...grant, agent_id: 'usr_a' })).to.equal(false);
    });
  });

  describe('feed: PostPublished carries exactly one of charge, scheduled_at, or auto with source and signal_hash', () => {
    it('takes a charged post, the publication of a scheduled post and an autonomous post', () => {
      const { charge: _charge, ...unpaid } = post;
      expect(valid('PostPublished', post)).to.equal(true);
      expect(valid('PostPublished', { ...unpaid, scheduled_at: at, poll: { options: ['a', 'b'], expires_at: at }, signal_hash: hex64 })).to.equal(true);
      const auto: PostPublished['data'] = { ...unpaid, auto: true, source: 'mixer', signal_hash: hex64 };
      expect(valid('PostPublished', auto)).to.equal(true);
    });

    it('refuses a post with none of them, or with two of them', () => {
      const { charge: _charge, ...unpaid } = post;
      expect(valid('PostPublished', unpaid)).to.equal(false);
      expect(valid('PostPublished', { ...post, scheduled_at: at })).to.equal(false);
      expect(valid('PostPublished', { ...post, auto: true, source: 'scout', signal_hash: hex64 })).to.equal(false);
      expect(valid('PostPublished', { ...unpaid, auto: true, signal_hash: hex64 }), 'auto without source').to.equal(false);
    });

    it('refuses an unknown post type, an empty title and a one-option poll', () => {
      expect(valid('PostPublished', { ...post, post_type: 'rant' })).to.equal(false);
      expect(valid('PostPublished', { ...post, title: '' })).to.equal(false);
      expect(valid('PostPublished', { ...post, poll: { options: ['only'], expires_at: at } })).to.equal(false);
      expect(valid('PostPublished', { ...post, poll: null })).to.equal(true);
    });
  });

  describe('humans', () => {
    it('takes a toggle change with at least one toggle, and an OTP of a known purpose', () => {
      const prefs: AutoPostPrefsChanged['data'] = { agent_id: 'agt_a', auto_post_on_mixer: false, changed_at: at };
      expect(valid('AutoPostPrefsChanged', prefs)).to.equal(true);
      expect(valid('AutoPostPrefsChanged', { agent_id: 'agt_a', changed_at: at })).to.equal(false);
      const otp: OtpIssued['data'] = { otp_id: 'otp_1', purpose: 'claim_full', code_hash: hex64, issued_at: at, expires_at: at };
      expect(valid('OtpIssued', otp)).to.equal(true);
      expect(valid('OtpIssued', { ...otp, purpose: 'login' })).to.equal(false);
      expect(valid('AgentClaimed', { agent_id: 'agt_a', claimed_via: 'email_otp', user_id: null, claimed_at: at })).to.equal(true);
      expect(valid('AgentClaimed', { agent_id: 'agt_a', claimed_via: 'sms', user_id: null, claimed_at: at })).to.equal(false);
    });
  });

  describe('matching', () => {
    it('takes a published or a skipped auto-post outcome, not a mix of both', () => {
      const run: MatchingRunCompleted['data'] = {
        run_id: 'run_1',
        agent_id: 'agt_a',
        agent_name: 'A',
        gives: ['lead-gen'],
        asks: ['b2b-sales'],
        limit: 10,
        matches: [{ agent_id: 'agt_b', name: 'B', they_give: ['b2b-sales'], they_ask: ['lead-gen'], score: 2 }],
        auto_post: { status: 'skipped', reason: 'no_matches' },
        completed_at: at,
        charge: { ...charge, action: 'matching_run' },
      };
      expect(valid('MatchingRunCompleted', run)).to.equal(true);
      expect(valid('MatchingRunCompleted', { ...run, auto_post: { status: 'published', post_id: 'pst_1' } })).to.equal(true);
      expect(valid('MatchingRunCompleted', { ...run, auto_post: { status: 'published', reason: 'no_matches' } })).to.equal(false);
      expect(valid('MatchingRunCompleted', { ...run, asks: [] })).to.equal(false);
    });
  });

  describe('messaging', () => {
    it('requires DirectMessageSent owner_user_id (schema version 2): null or a user id', () => {
      expect(valid('DirectMessageSent', dm)).to.equal(true);
      expect(valid('DirectMessageSent', { ...dm, owner_user_id: 'usr_owner', charge: { ...dm.charge, action: 'owner_dm_reply' } })).to.equal(true);
      const { owner_user_id: _owner, ...v1 } = dm;
      expect(valid('DirectMessageSent', v1)).to.equal(false);
      expect(valid('DirectMessageSent', { ...dm, owner_user_id: '' })).to.equal(false);
    });

    it('takes any JSON object as an A2A payload, not an array', () => {
      const a2a: A2AMessageSent['data'] = {
        message_id: 'msg_1',
        agent_id: 'agt_a',
        from_agent_id: 'agt_a',
        from_agent_name: 'A',
        to_agent_id: 'agt_b',
        intent: 'deal_offer',
        payload: { terms: { split: [1, 2] } },
        signature: null,
        sent_at: at,
        charge: { ...charge, action: 'a2a_message' },
      };
      expect(valid('A2AMessageSent', a2a)).to.equal(true);
      expect(valid('A2AMessageSent', { ...a2a, payload: {} })).to.equal(true);
      expect(valid('A2AMessageSent', { ...a2a, payload: [1] })).to.equal(false);
      expect(valid('A2AMessageSent', { ...a2a, intent: 'spam' })).to.equal(false);
    });
  });

  describe('webhooks', () => {
    it('takes a filter of known, distinct inbox event names or null', () => {
      const config: WebhookConfigured['data'] = {
        agent_id: 'agt_a',
        webhook_url: 'https://x.example/hook',
        events: ['new_dm'],
        signature_scheme: 'body',
        configured_at: at,
      };
      expect(valid('WebhookConfigured', config)).to.equal(true);
      expect(valid('WebhookConfigured', { ...config, events: null, webhook_url: null })).to.equal(true);
      expect(valid('WebhookConfigured', { ...config, events: ['new_dm', 'new_dm'] })).to.equal(false);
      expect(valid('WebhookConfigured', { ...config, events: ['everything'] })).to.equal(false);
      expect(valid('WebhookConfigured', { ...config, signature_scheme: 'none' })).to.equal(false);
    });
  });
});
