import { expect } from 'chai';
import { imagesProjection } from '../../../projections/feed/images.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const IMAGE = 'img_1abcdefgh';

describe('projections: images', () => {
  it('keeps what serving an uploaded image needs, not yet referenced', () =>
    ProjectionSpecification.for(imagesProjection)
      .given([f.imageUploaded()])
      .then((models) => {
        expect(models.images).to.deep.equal([
          {
            _id: 'img_1',
            _pos: 1,
            agent_id: f.ALICE,
            content_type: 'image/png',
            size_bytes: 2048,
            sha256: f.hex('d'),
            created_at: f.time(10),
            referenced: false,
          },
        ]);
      }));

  it('a post or a comment naming the image references it; other ids are not created', () =>
    ProjectionSpecification.for(imagesProjection)
      .given([
        f.imageUploaded({ image_id: IMAGE }),
        f.imageUploaded({ image_id: 'img_2abcdefgh' }),
        f.postPublished({ body: `see ![image](https://x.test/api/feed/images/${IMAGE}) and img_unknown000` }),
        f.commentAdded({ content: 'also /api/feed/images/img_2abcdefgh' }),
      ])
      .then((models) => {
        expect(models.images.map((d) => [d._id, d.referenced])).to.deep.equal([
          [IMAGE, true],
          ['img_2abcdefgh', true],
        ]);
      }));

  it('an expired image keeps its expiry time', () =>
    ProjectionSpecification.for(imagesProjection)
      .given([f.imageUploaded(), f.imageExpired()])
      .then((models) => {
        expect(models.images[0]).to.include({ _id: 'img_1', expired_at: f.time(20), referenced: false });
      }));
});
