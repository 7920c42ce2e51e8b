import { expect } from 'chai';
import { agentsProjection } from '../../../projections/agents/agents.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, OCCURRED_AT, byId, charge, time } = f;
const spec = ProjectionSpecification.for(agentsProjection);

describe('projections: agents', () => {
  it('registers an agent with its profile, an empty credit account and no activity', () =>
    spec.given([f.agentRegistered()]).then((models) => {
      expect(models.agents).to.deep.equal([
        {
          _id: ALICE,
          _pos: 1,
          agent_id: ALICE,
          name: 'Alice',
          handle: 'alice',
          description: 'Finds leads',
          capabilities: ['lead-gen'],
          owner_name: 'Alice Owner',
          owner_email: 'alice@example.com',
          webhook_url: null,
          tier: 'free',
          is_claimed: false,
          claimed_via: null,
          registration_source: 'api',
          intent_type: 'networking',
          auto_post_on_scout: true,
          auto_post_on_mixer: true,
          last_auto_post_at: null,
          created_at: time(9),
          last_active_at: time(9),
          seq: 1,
          balance_mc: 0,
          used_mc: 0,
          cycle: -1,
          next_grant_at: null,
          cycle_start: null,
          paid_until: null,
          renewal_due_at: null,
          post_count: 0,
          trust_score: 0,
          response_rate: 0,
          deal_close_rate: 0,
          follower_count: 0,
          following_count: 0,
          contracts_completed: 0,
          rank_key: `1000:999999999:${ALICE}`,
        },
      ]);
    }));

  it('a paid month: an upgrade sets paid_until and the renewal due 3 days before it, a renewal order clears it, a lapse returns the tier to free', async () => {
    const registered = f.agentRegistered();
    const upgraded = f.agentTierUpgraded({ agent_id: ALICE, to_tier: 'pro', next_grant_at: '2026-04-10T09:05:00.000Z' });
    await spec.given([registered, upgraded]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ tier: 'pro', paid_until: '2026-04-10T09:05:00.000Z', renewal_due_at: '2026-04-07T09:05:00.000Z' });
    });
    const ordered = f.tierRenewalOrdered({ agent_id: ALICE, tier: 'pro' });
    await spec.given([registered, upgraded, ordered]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ renewal_due_at: null, paid_until: '2026-04-10T09:05:00.000Z' });
    });
    await spec.given([registered, upgraded, ordered, f.tierLapsed({ agent_id: ALICE, from_tier: 'pro' })]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ tier: 'free', paid_until: null, renewal_due_at: null });
    });
  });

  it('a monthly grant sets the balance and the cycle and starts the usage again', () =>
    spec
      .given([
        f.agentRegistered(),
        f.monthlyCreditsGranted(),
        f.commentAdded({ agent_id: ALICE, charge: charge(50, 9_950) }),
        f.monthlyCreditsGranted({ cycle: 1, balance_after_mc: 19_950 }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({
          balance_mc: 19_950,
          used_mc: 0,
          cycle: 1,
          cycle_start: time(9),
          next_grant_at: '2026-04-10T09:00:00.000Z',
          _pos: 4,
        });
      }));

  it('a profile update sets only the fields it carries and marks activity at the event time', () =>
    spec.given([f.agentRegistered(), f.agentProfileUpdated({ description: null })]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ name: 'Alice Renamed', description: null, webhook_url: null, last_active_at: OCCURRED_AT });
    }));

  it('a webhook configuration (PATCH .../webhook, PATCH /me or registration) sets the profile webhook_url', () =>
    spec.given([f.agentRegistered({ webhook_url: null }), f.webhookConfigured({ webhook_url: 'https://hooks.example.com/alice' })]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ webhook_url: 'https://hooks.example.com/alice', _pos: 2 });
    }));

  it('a claim sets the e-mail badge; the owner is linked by a claim with a user or by an owner link', () =>
    spec
      .given([f.agentRegistered(), f.agentRegistered({ agent_id: f.BOB }), f.agentClaimed(), f.agentClaimed({ agent_id: f.BOB, user_id: f.USER })])
      .then((models) => {
        const alice = byId(models.agents, ALICE);
        expect(alice).to.deep.include({ is_claimed: true, claimed_via: 'email_otp', claimed_at: time(10) });
        expect(alice).not.to.have.property('owner_user_id');
        expect(byId(models.agents, f.BOB)).to.deep.include({ is_claimed: true, owner_user_id: f.USER });
      }));

  it('an owner link sets the owner user', () =>
    spec.given([f.agentRegistered(), f.agentClaimed(), f.agentOwnerLinked()]).then((models) => {
      expect(byId(models.agents, ALICE)).to.deep.include({ is_claimed: true, owner_user_id: f.USER, _pos: 3 });
    }));

  it('records ghosting, a replaced key and the auto-post toggles (without their time)', () =>
    spec.given([f.agentRegistered(), f.agentGhosted(), f.apiKeyReplaced(), f.autoPostPrefsChanged({ auto_post_on_mixer: false })]).then((models) => {
      const alice = byId(models.agents, ALICE);
      expect(alice).to.deep.include({ ghosted: true, ghosted_at: time(11), key_replaced_at: time(11), auto_post_on_scout: false, auto_post_on_mixer: false });
      expect(alice).not.to.have.property('changed_at');
    }));

  it('a charged event sets the balance after it, adds to the cycle usage and marks activity; a post also counts', () =>
    spec
      .given([
        f.agentRegistered(),
        f.monthlyCreditsGranted(),
        f.postPublished({ charge: charge(100, 9_900) }),
        f.commentAdded({ agent_id: ALICE, charge: charge(50, 9_850) }),
        f.signalBoosted({ agent_id: ALICE, charge: charge(100, 9_750) }),
        f.postScheduled({ charge: charge(100, 9_650) }),
        f.directMessageSent({ charge: charge(250, 9_400) }),
        f.a2aMessageSent({ charge: charge(250, 9_150) }),
        f.meshThreadCreated({ charge: charge(500, 8_650) }),
        f.meshThreadMessagePosted({ agent_id: ALICE, charge: charge(100, 8_550) }),
        f.matchingRunCompleted({ charge: charge(1_000, 7_550) }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({ balance_mc: 7_550, used_mc: 2_450, post_count: 1, last_active_at: OCCURRED_AT, _pos: 11 });
      }));

  it('a refund (cancelled scheduled post) gives the credits back and lowers the usage, never below zero', () =>
    spec
      .given([
        f.agentRegistered(),
        f.monthlyCreditsGranted(),
        f.postScheduled({ charge: charge(100, 9_900) }),
        f.scheduledPostCancelled({ charge: charge(-100, 10_000) }),
        f.scheduledPostCancelled({ charge: charge(-100, 10_100) }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({ balance_mc: 10_100, used_mc: 0, _pos: 5 });
      }));

  it('the publication of a scheduled post and an autonomous post count as posts without a charge', () =>
    spec
      .given([
        f.agentRegistered(),
        f.postPublished({ charge: undefined, scheduled_at: time(9, 45), published_at: time(10) }),
        f.postPublished({ post_id: 'pst_auto00000000000000000', charge: undefined, auto: true, source: 'scout', published_at: time(11) }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({
          post_count: 2,
          used_mc: 0,
          balance_mc: 0,
          last_active_at: OCCURRED_AT,
          last_auto_post_at: time(11),
        });
      }));
});
