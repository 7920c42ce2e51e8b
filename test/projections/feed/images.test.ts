import { expect } from 'chai';
import { imagesProjection } from '../../../projections/feed/images.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: images', () => {
  it('keeps what serving an uploaded image needs', () =>
    ProjectionSpecification.for(imagesProjection)
      .given([f.imageUploaded()])
      .then((models) => {
        expect(models.images).to.deep.equal([
          { _id: 'img_1', _pos: 1, agent_id: f.ALICE, content_type: 'image/png', size_bytes: 2048, sha256: f.hex('d'), created_at: f.time(10) },
        ]);
      }));
});
