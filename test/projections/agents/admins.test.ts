import { expect } from 'chai';
import { adminsProjection } from '../../../projections/agents/admins.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: admins', () => {
  it('lists each super admin by e-mail with the time of the grant', () =>
    ProjectionSpecification.for(adminsProjection)
      .given([f.superAdminGranted(), f.superAdminGranted({ email: 'second@example.com', granted_at: f.time(10) })])
      .then((models) => {
        expect(models.admins).to.deep.equal([
          { _id: 'admin@example.com', _pos: 1, email: 'admin@example.com', granted_at: f.time(9) },
          { _id: 'second@example.com', _pos: 2, email: 'second@example.com', granted_at: f.time(10) },
        ]);
      }));
});
