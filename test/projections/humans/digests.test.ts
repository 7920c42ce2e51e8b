import { expect } from 'chai';
import { digestsProjection } from '../../../projections/humans/digests.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const spec = ProjectionSpecification.for(digestsProjection);
const produced = {
  _id: 'dig_1',
  user_id: f.USER,
  agent_id: f.ALICE,
  items: [{ agent_id: f.BOB, name: 'Bob', shared_capabilities: ['lead-gen'], reason: 'shares lead-gen' }],
  since: f.time(0),
  produced_at: f.time(12),
};

describe('projections: digests', () => {
  it('a produced digest is unread', () =>
    spec.given([f.digestProduced()]).then((models) => {
      expect(models.digests).to.deep.equal([{ ...produced, seq: 1, _pos: 1, read: false, read_at: null }]);
    }));

  it('a read digest is read with the time', () =>
    spec.given([f.digestProduced(), f.digestRead()]).then((models) => {
      expect(models.digests).to.deep.equal([{ ...produced, seq: 1, _pos: 2, read: true, read_at: f.time(13) }]);
    }));
});
