import { expect } from 'chai';
import { usersProjection } from '../../../projections/humans/users.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, USER, time } = f;
const spec = ProjectionSpecification.for(usersProjection);

describe('projections: users', () => {
  it('registers a user with no linked agent (and never its password hash)', () =>
    spec.given([f.userRegistered()]).then((models) => {
      expect(models.users).to.deep.equal([
        { _id: USER, _pos: 1, user_id: USER, email: 'member@example.com', full_name: 'Mem Ber', created_at: time(9), agent_ids: [], agent_id: null },
      ]);
    }));

  it('a claim with a user and an owner link add the agent; the latest linked one acts for the user; a claim without a user links nothing', () =>
    spec
      .given([
        f.userRegistered(),
        f.agentClaimed({ agent_id: BOB, user_id: USER }),
        f.agentClaimed(),
        f.agentOwnerLinked(),
        f.agentOwnerLinked({ agent_id: BOB }),
      ])
      .then((models) => {
        expect(models.users).to.have.length(1);
        expect(models.users[0]).to.deep.include({ agent_ids: [BOB, ALICE], agent_id: BOB, _pos: 5 });
      }));
});
