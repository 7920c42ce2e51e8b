import { expect } from 'chai';
import { circleNotificationsProjection } from '../../../projections/communities/circle-notifications.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ADMIN_USER, COMMUNITY, USER, time } = f;
const OTHER_ADMIN = 'usr_admin200000000000000';
const on = { mentions: true, replies: true, reactions: true, join_requests: true };

// ProjectionSpecification applies the events a second time (at-least-once delivery): a redelivered
// event must decide under the settings and admins of its own time, not those of today.
describe('projections: circle notifications (settings honoured at the time of the event)', () => {
  it('a mention made while mentions were off stays unrecorded after they are turned back on', () =>
    ProjectionSpecification.for(circleNotificationsProjection)
      .given([
        f.circleNotificationSettingsChanged({ ...on, mentions: false, changed_at: time(9) }),
        f.circlePostPublished({ author_id: ADMIN_USER, author_name: 'Grace Admin', mentions: [USER], published_at: time(10) }),
        f.circleNotificationSettingsChanged({ ...on, changed_at: time(11) }),
        f.circlePostPublished({ post_id: 'cpo_post20000000000000000', author_id: ADMIN_USER, mentions: [USER], published_at: time(12) }),
      ])
      .then((m) => {
        expect(m.circle_notifications.map((n) => [n.kind, n.post_id])).to.deep.equal([['mention', 'cpo_post20000000000000000']]);
      }));

  it('a join request notifies the admins of its time, not one named later', () =>
    ProjectionSpecification.for(circleNotificationsProjection)
      .given([f.communityAdminNamed(), f.circleJoinRequested(), f.communityAdminNamed({ community_id: COMMUNITY, user_id: OTHER_ADMIN, named_at: time(11) })])
      .then((m) => {
        expect(m.circle_notifications.map((n) => [n.kind, n.user_id])).to.deep.equal([['join_request', ADMIN_USER]]);
      }));

  it('"mark all read" reads what came before it; a later notification stays unread', () =>
    ProjectionSpecification.for(circleNotificationsProjection)
      .given([
        f.circleReactionToggled({ toggled_at: time(10) }),
        f.circleNotificationsRead({ read_at: time(11) }),
        f.circleReplyAdded({ replied_at: time(12) }),
      ])
      .then((m) => {
        expect(m.circle_notifications.map((n) => [n.kind, n.read])).to.deep.equal([
          ['reaction', true],
          ['reply', false],
        ]);
      }));
});
