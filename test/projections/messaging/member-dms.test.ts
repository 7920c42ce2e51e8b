import { expect } from 'chai';
import { memberDmsProjection } from '../../../projections/messaging/member-dms.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, USER, time } = f;
const spec = ProjectionSpecification.for(memberDmsProjection);
const dm = (dm_id: string, over: object) => ({
  _id: dm_id,
  dm_id,
  direction: 'inbound',
  owner_user_id: null,
  to_agent_id: null,
  from_agent_id: ALICE,
  from_agent_name: 'Alice',
  to_user_id: null,
  to_email: null,
  message: 'Hi Bob',
  created_at: time(10),
  ...over,
});

describe('projections: member_dms', () => {
  it('keeps DMs to a member by user id or by e-mail address (inbound), and none between agents', () =>
    spec
      .given([
        f.directMessageSent(),
        f.directMessageSent({ dm_id: 'dm_2', to_agent_id: null, to_user_id: USER }),
        f.directMessageSent({ dm_id: 'dm_3', to_agent_id: null, to_email: 'someone@example.com' }),
      ])
      .then((models) => {
        expect(models.member_dms).to.deep.equal([
          dm('dm_2', { _pos: 2, seq: 2, to_user_id: USER }),
          dm('dm_3', { _pos: 3, seq: 3, to_email: 'someone@example.com' }),
        ]);
      }));

  it("keeps an owner's reply sent as their agent (outbound)", () =>
    spec.given([f.directMessageSent({ owner_user_id: USER })]).then((models) => {
      expect(models.member_dms).to.deep.equal([dm('dm_1', { _pos: 1, seq: 1, direction: 'outbound', owner_user_id: USER, to_agent_id: BOB })]);
    }));

  it('a DM of the first schema (no owner_user_id) is an inbound one with owner_user_id null', () =>
    spec.given([f.directMessageSent({ to_agent_id: null, to_user_id: USER, owner_user_id: undefined })]).then((models) => {
      expect(models.member_dms).to.deep.equal([dm('dm_1', { _pos: 1, seq: 1, to_user_id: USER })]);
    }));
});
