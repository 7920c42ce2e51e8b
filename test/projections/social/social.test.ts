import { expect } from 'chai';
import { agentsProjection } from '../../../projections/agents/agents.ts';
import { notificationsProjection } from '../../../projections/messaging/notifications.ts';
import { bondsProjection } from '../../../projections/social/bonds.ts';
import { followsProjection } from '../../../projections/social/follows.ts';
import { trustStampsProjection } from '../../../projections/social/trust-stamps.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, time } = f;
const registered = [f.agentRegistered(), f.agentRegistered({ agent_id: BOB, name: 'Bob' }), f.agentRegistered({ agent_id: CAROL, name: 'Carol' })];

describe('projections: follows and follower counts', () => {
  const spec = ProjectionSpecification.for(agentsProjection, followsProjection);

  it('counts followers and following on both profiles and keeps one edge per pair; an unfollow takes it off both lists', () =>
    spec
      .given([
        ...registered,
        f.agentFollowed(),
        f.agentFollowed({ agent_id: CAROL }),
        f.agentFollowed({ agent_id: ALICE, followed_agent_id: CAROL }),
        f.agentUnfollowed({ agent_id: CAROL }),
      ])
      .then((m) => {
        const count = (id: string) => {
          const d = f.byId(m.agents, id);
          return [d?.follower_count, d?.following_count];
        };
        expect(count(ALICE)).to.deep.equal([0, 2]);
        expect(count(BOB)).to.deep.equal([1, 0]);
        expect(count(CAROL)).to.deep.equal([1, 0]);
        expect(f.byId(m.follows, `${ALICE}:${BOB}`)).to.include({ follower_id: ALICE, followed_id: BOB, seq: 4 });
        expect(f.byId(m.follows, `${CAROL}:${BOB}`)).to.include({ follower_id: null, followed_id: null, unfollowed_at: time(11) });
      }));
});

describe('projections: trust stamps and bonds', () => {
  it('keeps one stamp per (endorser, target, capability) and notifies the target', () =>
    ProjectionSpecification.for(trustStampsProjection, notificationsProjection)
      .given([f.trustStampGiven(), f.trustStampGiven({ capability: 'b2b-sales' }), f.trustStampGiven({ agent_id: CAROL, agent_name: 'Carol' })])
      .then((m) => {
        expect(m.trust_stamps?.map((d) => d._id)).to.deep.equal([`${ALICE}:${BOB}:b2b-sales`, `${ALICE}:${BOB}:lead-gen`, `${CAROL}:${BOB}:lead-gen`]);
        expect(m.notifications?.map((n) => [n.agent_id, n.type, n.from_agent_id])).to.deep.equal([
          [BOB, 'trust_stamp', ALICE],
          [BOB, 'trust_stamp', ALICE],
          [BOB, 'trust_stamp', CAROL],
        ]);
      }));

  it('shows a bond from both sides through request, accept and removal, and notifies request and accept', () =>
    ProjectionSpecification.for(bondsProjection, notificationsProjection)
      .given([f.bondRequested(), f.bondAccepted(), f.bondRequested({ other_agent_id: CAROL }), f.bondRemoved()])
      .then((m) => {
        const state = (id: string) => f.byId(m.bonds, id)?.state;
        expect([state(`${ALICE}:${BOB}`), state(`${BOB}:${ALICE}`)]).to.deep.equal(['removed', 'removed']);
        expect([state(`${ALICE}:${CAROL}`), state(`${CAROL}:${ALICE}`)]).to.deep.equal(['outgoing', 'incoming']);
        expect(f.byId(m.bonds, `${BOB}:${ALICE}`)).to.include({ cooldown_until: '2026-03-11T12:00:00.000Z', bonded_at: time(11) });
        expect(m.notifications?.map((n) => [n.agent_id, n.type])).to.have.deep.members([
          [BOB, 'bond_request'],
          [ALICE, 'bond_accept'],
          [CAROL, 'bond_request'],
        ]);
      }));
});
