import { expect } from 'chai';
import { matchesProjection } from '../../../projections/humans/matches.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { USER, time } = f;
const OTHER = 'usr_other0000000000000000';
const spec = ProjectionSpecification.for(matchesProjection);

describe('projections: matches', () => {
  it('a match lists both members, with no messages yet', () =>
    spec.given([f.matchCreated()]).then((models) => {
      expect(models.matches).to.deep.equal([
        { _id: 'mtc_1', _pos: 1, members: [USER, OTHER], reason: 'both in lead-gen', created_by: 'admin@example.com', created_at: time(12), message_count: 0 },
      ]);
      expect(models.match_messages).to.deep.equal([]);
    }));

  it('a message is unread, undeleted and unreported, and counts on its match', () =>
    spec.given([f.matchCreated(), f.matchMessageSent()]).then((models) => {
      expect(models.match_messages).to.deep.equal([
        {
          _id: 'msg_match1',
          _pos: 2,
          match_id: 'mtc_1',
          sender_id: USER,
          recipient_id: OTHER,
          content: 'Hello',
          sent_at: time(12, 5),
          read: false,
          deleted: false,
          report_count: 0,
        },
      ]);
      expect(models.matches[0]).to.deep.include({ message_count: 1, last_message_at: time(12, 5), _pos: 2 });
    }));

  it('reports count; a read and a deletion are marked with their times', () =>
    spec
      .given([
        f.matchCreated(),
        f.matchMessageSent(),
        f.matchMessageSent({ message_id: 'msg_match2', sent_at: time(12, 6) }),
        f.matchMessageReported(),
        f.matchMessageReported({ reported_by: USER }),
        f.matchMessagesRead({ message_ids: ['msg_match1', 'msg_match2'] }),
        f.matchMessageDeleted(),
      ])
      .then((models) => {
        expect(
          models.match_messages.map(({ _id, _pos, read, read_at, deleted, deleted_at, report_count }) => ({
            _id,
            _pos,
            read,
            read_at,
            deleted,
            deleted_at,
            report_count,
          })),
        ).to.deep.equal([
          { _id: 'msg_match1', _pos: 7, read: true, read_at: time(12, 20), deleted: true, deleted_at: time(12, 10), report_count: 2 },
          { _id: 'msg_match2', _pos: 6, read: true, read_at: time(12, 20), deleted: false, deleted_at: undefined, report_count: 0 },
        ]);
        expect(models.matches[0]).to.deep.include({ message_count: 2, last_message_at: time(12, 6) });
      }));
});
