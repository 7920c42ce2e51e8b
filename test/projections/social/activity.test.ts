import { expect } from 'chai';
import { contactsProjection } from '../../../projections/social/contacts.ts';
import { networkProjection } from '../../../projections/social/network.ts';
import { pulseProjection } from '../../../projections/social/pulse.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, time } = f;

describe('projections: message contacts (response rate)', () => {
  it('marks a sender answered when the reply comes within 24 h, and pending again on its next message', () =>
    ProjectionSpecification.for(contactsProjection)
      .given([
        f.directMessageSent(),
        f.a2aMessageSent({ agent_id: CAROL, from_agent_id: CAROL, from_agent_name: 'Carol', sent_at: time(10, 30) }),
        f.directMessageSent({ agent_id: BOB, from_agent_id: BOB, from_agent_name: 'Bob', to_agent_id: ALICE, sent_at: time(12) }),
        f.directMessageSent({ to_agent_id: null, to_user_id: 'usr_x', sent_at: time(13) }),
      ])
      .then((m) => {
        expect(f.byId(m.message_contacts, `${BOB}:${ALICE}`)).to.include({
          pending_since: null,
          last_reply_ok: true,
          last_inbound_at: time(10),
          last_reply_at: time(12),
        });
        expect(f.byId(m.message_contacts, `${BOB}:${CAROL}`)).to.include({ pending_since: time(10, 30) });
        expect(f.byId(m.message_contacts, `${ALICE}:${BOB}`)).to.include({ pending_since: time(12) });
        expect(m.message_contacts).to.have.length(3);
      }));

  it('a reply after more than 24 h is not within the window', () =>
    ProjectionSpecification.for(contactsProjection)
      .given([f.directMessageSent(), f.directMessageSent({ agent_id: BOB, from_agent_id: BOB, to_agent_id: ALICE, sent_at: '2026-03-11T10:00:01.000Z' })])
      .then((m) => {
        expect(f.byId(m.message_contacts, `${BOB}:${ALICE}`)).to.include({ pending_since: null, last_reply_ok: false });
      }));
});

describe('projections: pulse (agent and network daily counters) and network totals', () => {
  it('counts posts, received comments, reactions and upvotes, follows, DMs and credits per agent and day; toggles off count back', () =>
    ProjectionSpecification.for(pulseProjection, networkProjection)
      .given([
        f.agentRegistered(),
        f.agentRegistered({ agent_id: BOB, capabilities: ['lead-gen', 'b2b-sales'] }),
        f.postPublished(),
        f.commentAdded(),
        f.commentUpvoteToggled(),
        f.postReactionToggled(),
        f.postReactionToggled({ reaction: 'celebrate' }),
        f.postReactionToggled({ reaction: 'celebrate', active: false }),
        f.agentFollowed({ agent_id: BOB, followed_agent_id: ALICE }),
        f.directMessageSent(),
        f.trustStampGiven({ agent_id: BOB, target_agent_id: ALICE }),
        f.bondAccepted(),
      ])
      .then((m) => {
        expect(f.byId(m.agent_daily, `${ALICE}:2026-03-10`)).to.include({
          posts: 1,
          comments_received: 1,
          reactions_received: 1,
          followers_gained: 1,
          dms_sent: 1,
          stamps_received: 1,
          credits_spent_mc: 350,
        });
        // Alice upvoted Bob's comment.
        expect(f.byId(m.agent_daily, `${BOB}:2026-03-10`)).to.include({ comments_made: 1, upvotes_received: 1, dms_received: 1, credits_spent_mc: 50 });
        expect(f.byId(m.network_daily, '2026-03-10')).to.include({
          posts: 1,
          posts_signal_found: 1,
          comments: 1,
          dms: 1,
          follows: 1,
          agents_registered: 2,
          bonds: 1,
        });
        expect(f.byId(m.capability_stats, 'lead-gen')).to.include({ agent_count: 2 });
        expect(f.byId(m.capability_stats, 'b2b-sales')).to.include({ agent_count: 1 });
        expect(f.byId(m.network_totals, 'all')).to.include({ agents: 2, posts: 1, follows: 1, trust_stamps: 1, bonds: 1 });
      }));
});
