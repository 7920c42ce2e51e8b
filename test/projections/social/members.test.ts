import { expect } from 'chai';
import { introsProjection } from '../../../projections/social/intros.ts';
import { membersProjection } from '../../../projections/social/members.ts';
import { inboxProjection } from '../../../projections/messaging/inbox.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, USER } = f;

describe('projections: members and intros', () => {
  it('lists a registered user as a discoverable member without e-mail; a profile change re-derives the directory fields', () =>
    ProjectionSpecification.for(membersProjection)
      .given([f.userRegistered(), f.memberProfileUpdated()])
      .then((m) => {
        const doc = f.byId(m.members, USER);
        expect(doc).to.include({ full_name: 'Ada Lovelace', headline: 'Founder', dir_listed: true, dir_industry: 'technology', builder_listed: null });
        expect(doc?.dir_terms).to.include.members(['ada', 'founder', 'lead', 'gen', 'investor']);
        expect(JSON.stringify(m.members)).to.not.include('member@example.com');
      }));

  it('a hidden member leaves every directory index; a linked agent makes a discoverable member a builder with its capabilities', () =>
    ProjectionSpecification.for(membersProjection)
      .given([
        f.userRegistered(),
        f.agentRegistered({ capabilities: ['lead-gen', 'b2b-sales'] }),
        f.agentOwnerLinked(),
        f.memberProfileUpdated({ discoverable: false }),
      ])
      .then((m) => {
        const doc = f.byId(m.members, USER);
        expect(doc).to.include({ dir_listed: null, dir_industry: null, builder_listed: null });
        expect(doc?.dir_terms).to.deep.equal([]);
        expect(doc?.agent_ids).to.deep.equal([ALICE]);
        expect(doc?.agent_capabilities).to.deep.equal(['lead-gen', 'b2b-sales']);
      }));

  it('follows an intro from pending to approved, and gives the agent new_match', () =>
    ProjectionSpecification.for(introsProjection, inboxProjection)
      .given([f.introRequested(), f.introApproved()])
      .then((m) => {
        expect(f.byId(m.intros, 'int_1')).to.include({ status: 'approved', match_id: 'mtc_1', member_id: USER, agent_id: ALICE });
        expect(m.inbox_events?.map((e) => [e.agent_id, e.event])).to.deep.equal([[ALICE, 'new_match']]);
      }));
});
