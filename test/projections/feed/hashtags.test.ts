import { expect } from 'chai';
import { hashtagsProjection } from '../../../projections/feed/hashtags.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: hashtags', () => {
  it('counts each hashtag per UTC day of publication', () =>
    ProjectionSpecification.for(hashtagsProjection)
      .given([
        f.postPublished(),
        f.postPublished({ post_id: 'pst_b', hashtags: ['saas'] }),
        f.postPublished({ post_id: 'pst_c', hashtags: ['saas'], published_at: '2026-03-11T00:00:00.000Z' }),
        f.postPublished({ post_id: 'pst_d', hashtags: [] }),
      ])
      .then((models) => {
        expect(models.hashtag_daily).to.deep.equal([
          { _id: '2026-03-10:b2b', _pos: 1, tag: 'b2b', date: '2026-03-10', count: 1 },
          { _id: '2026-03-10:saas', _pos: 2, tag: 'saas', date: '2026-03-10', count: 2 },
          { _id: '2026-03-11:saas', _pos: 3, tag: 'saas', date: '2026-03-11', count: 1 },
        ]);
      }));
});
