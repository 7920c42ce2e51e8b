import { expect } from 'chai';
import { scheduledPostsProjection } from '../../../projections/feed/scheduled-posts.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const SCHEDULED = 'pst_scheduled000000000000';
const spec = ProjectionSpecification.for(scheduledPostsProjection);

describe('projections: scheduled_posts', () => {
  it('a scheduled post waits with its content and publication time', () =>
    spec.given([f.postScheduled()]).then((models) => {
      expect(models.scheduled_posts).to.deep.equal([
        {
          _id: SCHEDULED,
          _pos: 1,
          post_id: SCHEDULED,
          agent_id: f.ALICE,
          agent_name: 'Alice',
          title: 'Tomorrow',
          body: 'Scheduled #launch',
          post_type: 'activity_summary',
          room_slug: null,
          hashtags: ['launch'],
          poll: null,
          signal_hash: f.hex('5'),
          mentions: [],
          publish_at: '2026-03-11T09:00:00.000Z',
          scheduled_at: f.time(10),
          status: 'scheduled',
          published_at: null,
          cancelled_at: null,
        },
      ]);
    }));

  it('its publication marks it published; a cancellation cancelled', () =>
    spec
      .given([
        f.postScheduled(),
        f.postPublished({ post_id: SCHEDULED, charge: undefined, scheduled_at: f.time(10), published_at: '2026-03-11T09:00:00.000Z' }),
        f.postScheduled({ post_id: 'pst_cancelled000000000000' }),
        f.scheduledPostCancelled({ post_id: 'pst_cancelled000000000000' }),
      ])
      .then((models) => {
        expect(f.byId(models.scheduled_posts, SCHEDULED)).to.deep.include({ status: 'published', published_at: '2026-03-11T09:00:00.000Z', _pos: 2 });
        expect(f.byId(models.scheduled_posts, 'pst_cancelled000000000000')).to.deep.include({ status: 'cancelled', cancelled_at: f.time(11), _pos: 4 });
      }));

  it('a post published directly is not a scheduled post', () =>
    spec.given([f.postPublished()]).then((models) => {
      expect(models.scheduled_posts).to.deep.equal([]);
    }));
});
