import { expect } from 'chai';
import { roomPinsProjection } from '../../../projections/feed/room-pins.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: room_pins', () => {
  it('lists the pinned posts of a room in pin order; an unpinned post leaves the list', () =>
    ProjectionSpecification.for(roomPinsProjection)
      .given([
        f.roomPostPinned(),
        f.roomPostPinned({ post_id: 'pst_b' }),
        f.roomPostPinned({ post_id: 'pst_c' }),
        f.roomPostUnpinned(),
        f.roomPostPinned({ room_slug: 'design' }),
      ])
      .then((models) => {
        expect(models.room_pins).to.deep.equal([
          { _id: 'design', _pos: 5, post_ids: [f.POST] },
          { _id: 'lead-gen', _pos: 4, post_ids: ['pst_b', 'pst_c'] },
        ]);
      }));
});
