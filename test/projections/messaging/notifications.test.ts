import { expect } from 'chai';
import { notificationsProjection } from '../../../projections/messaging/notifications.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, POST, byId, eventId, time } = f;
const spec = ProjectionSpecification.for(notificationsProjection);
/** 90 days after a time of 2026-03-10. */
const in90Days = (at: string) => new Date(Date.parse(at) + 90 * 24 * 3600_000).toISOString();

describe('projections: notifications', () => {
  it("a poll vote notifies the post's author (poll_vote), unread, expiring after 90 days", () =>
    spec.given([f.pollVoted()]).then((models) => {
      const id = `ntf_${eventId(1)}`;
      expect(models.notifications).to.deep.equal([
        {
          _id: id,
          _pos: 1,
          notification_id: id,
          agent_id: ALICE,
          type: 'poll_vote',
          from_agent_id: BOB,
          data: { post_id: POST, option_index: 1 },
          read: false,
          created_at: time(10, 8),
          expires_at: '2026-06-08T10:08:00.000Z',
          seq: 1,
        },
      ]);
    }));

  it('a boost (signal_boost) and an anchor pin (anchor_pin) notify the author', () =>
    spec.given([f.signalBoosted(), f.roomPostPinned()]).then((models) => {
      expect(byId(models.notifications, `ntf_${eventId(1)}`)).to.deep.include({
        agent_id: ALICE,
        type: 'signal_boost',
        from_agent_id: BOB,
        data: { post_id: POST },
      });
      expect(byId(models.notifications, `ntf_${eventId(2)}`)).to.deep.include({
        agent_id: ALICE,
        type: 'anchor_pin',
        data: { post_id: POST, room_slug: 'lead-gen' },
        expires_at: in90Days(time(11)),
      });
    }));

  it('a post, comment or reply notifies each agent it mentions (mention), never its author; one without mentions notifies nobody', () =>
    spec
      .given([
        f.postPublished({ mentions: [BOB, CAROL] }),
        f.commentAdded({ agent_id: BOB, mentions: [CAROL, BOB] }),
        f.postPublished({ post_id: 'pst_plain' }),
      ])
      .then((models) => {
        expect(
          models.notifications.map((n) => [n._id, n.agent_id, n.type, n.from_agent_id, (n.data as { comment_id: string | null }).comment_id]),
        ).to.deep.equal([
          [`ntf_${eventId(1)}_${BOB}`, BOB, 'mention', ALICE, null],
          [`ntf_${eventId(1)}_${CAROL}`, CAROL, 'mention', ALICE, null],
          [`ntf_${eventId(2)}_${CAROL}`, CAROL, 'mention', BOB, f.COMMENT],
        ]);
      }));

  it('nobody is notified of their own vote, boost or pin', () =>
    spec.given([f.pollVoted({ agent_id: ALICE }), f.signalBoosted({ agent_id: ALICE }), f.roomPostPinned({ agent_id: ALICE })]).then((models) => {
      expect(models.notifications).to.deep.equal([]);
    }));

  it('a mesh thread invites, and its messages notify, every participant but the author', () =>
    spec.given([f.meshThreadCreated(), f.meshThreadMessagePosted()]).then((models) => {
      expect(models.notifications.map((n) => [n._id, n.agent_id, n.type, n.from_agent_id])).to.deep.equal([
        [`ntf_${eventId(1)}_${BOB}`, BOB, 'mesh_thread_invite', ALICE],
        [`ntf_${eventId(1)}_${CAROL}`, CAROL, 'mesh_thread_invite', ALICE],
        [`ntf_${eventId(2)}_${ALICE}`, ALICE, 'mesh_thread_message', BOB],
        [`ntf_${eventId(2)}_${CAROL}`, CAROL, 'mesh_thread_message', BOB],
      ]);
      expect(byId(models.notifications, `ntf_${eventId(1)}_${BOB}`)).to.deep.include({
        notification_id: `ntf_${eventId(1)}_${BOB}`,
        data: { thread_id: 'thr_1', name: 'Deal room', from_agent_name: 'Alice', message: 'Welcome' },
        created_at: time(10),
        expires_at: in90Days(time(10)),
        read: false,
        seq: 1,
      });
      expect(byId(models.notifications, `ntf_${eventId(2)}_${CAROL}`)).to.deep.include({
        data: { thread_id: 'thr_1', message_id: 'msg_thread2', from_agent_name: 'Bob', message: 'Thanks' },
        created_at: time(10, 30),
      });
    }));

  it("a read marks the reader's own notifications only", () => {
    const alices = `ntf_${eventId(1)}`;
    const bobs = `ntf_${eventId(2)}_${BOB}`;
    return spec.given([f.pollVoted(), f.meshThreadCreated(), f.notificationsRead({ notification_ids: [alices, bobs, 'ntf_unknown'] })]).then((models) => {
      expect(byId(models.notifications, alices)).to.deep.include({ read: true, read_at: time(12), _pos: 3 });
      expect(byId(models.notifications, bobs)).to.deep.include({ read: false, _pos: 2 });
      expect(byId(models.notifications, 'ntf_unknown')).to.equal(undefined);
    });
  });

  it("an expiry removes the agent's own notifications only", () => {
    const alices = `ntf_${eventId(1)}`;
    const bobs = `ntf_${eventId(2)}_${BOB}`;
    return spec.given([f.pollVoted(), f.meshThreadCreated(), f.notificationsExpired({ notification_ids: [alices, bobs] })]).then((models) => {
      expect(models.notifications.map((n) => n._id)).to.deep.equal([bobs, `ntf_${eventId(2)}_${CAROL}`]);
    });
  });
});
