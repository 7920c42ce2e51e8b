import { expect } from 'chai';
import { communitiesProjection } from '../../../projections/communities/communities.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ADMIN_USER, COMMUNITY, USER } = f;

describe('projections: communities (admins follow every event that names or removes one)', () => {
  it('an admin removed from the community leaves its admins', () =>
    ProjectionSpecification.for(communitiesProjection)
      .given([
        f.communityCreated(),
        f.communityAdminNamed(),
        f.communityAdminNamed({ user_id: USER, named_at: f.time(10) }),
        f.communityMemberJoined({ code_id: null, joined_at: f.time(10) }),
        f.communityMemberRemoved(),
      ])
      .then((m) => {
        expect(f.byId(m.communities, COMMUNITY)?.admins).to.deep.equal([ADMIN_USER]);
      }));

  it('named again after the removal, they are an admin again', () =>
    ProjectionSpecification.for(communitiesProjection)
      .given([
        f.communityCreated(),
        f.communityAdminNamed({ user_id: USER, named_at: f.time(10) }),
        f.communityMemberRemoved(),
        f.communityAdminNamed({ user_id: USER, named_at: f.time(13) }),
      ])
      .then((m) => {
        expect(f.byId(m.communities, COMMUNITY)?.admins).to.deep.equal([USER]);
      }));
});
