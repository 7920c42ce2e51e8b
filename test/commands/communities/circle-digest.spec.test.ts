import { expect } from 'chai';
import type { CircleUserState, CircleUserStreamEvent, ProduceCircleDigest } from '../../../commands/communities/circle-user.ts';
import { circleUserAggregate, decideProduceCircleDigest, digestPeriodOf } from '../../../commands/communities/circle-user.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const mail = f.mailQueued({ mail_id: 'mail_digest', template: 'circle_digest' });
const produce = (over: Partial<ProduceCircleDigest['data']> = {}, now = f.at(9, 30)): ProduceCircleDigest => ({
  type: 'ProduceCircleDigest',
  data: {
    user_id: f.USER,
    frequency: 'daily',
    period: '2026-03-10',
    unread: { notification_ids: ['cnt_b_0', 'cnt_a_0'], count: 2, after_position: 0, through_position: 11 },
    mail,
    ...over,
  },
  metadata: { now },
});

describe('commands: circle notification digests (circle-user-<user_id>)', () => {
  const spec = DeciderSpecification.for<ProduceCircleDigest, CircleUserState, CircleUserStreamEvent>({
    decide: decideProduceCircleDigest,
    ...circleUserAggregate,
  });

  it('produces the digest of a period with its mail in one append (daily by default)', () => {
    spec.given([]).when(produce()).then([f.circleDigestProduced(), mail]);
  });

  it('produces at most one digest per period, and the next one covers only what came after the last', () => {
    spec.given([f.circleDigestProduced(), mail]).when(produce()).thenNothingHappened();
    // The next day: only notifications after position 11 count.
    spec
      .given([f.circleDigestProduced(), mail])
      .when(produce({ period: '2026-03-11', unread: { notification_ids: ['cnt_a_0'], count: 1, after_position: 0, through_position: 11 } }))
      .thenNothingHappened();
    spec
      .given([f.circleDigestProduced(), mail])
      .when(produce({ period: '2026-03-11', unread: { notification_ids: ['cnt_c_0'], count: 1, after_position: 11, through_position: 20 } }))
      .then([f.circleDigestProduced({ period: '2026-03-11', unread_count: 1, notification_ids: ['cnt_c_0'], after_position: 11, through_position: 20 }), mail]);
  });

  it('honours the setting: none produces nothing, a frequency that changed since the worker looked produces nothing', () => {
    spec
      .given([f.circleNotificationSettingsChanged({ digest: 'none' })])
      .when(produce())
      .thenNothingHappened();
    spec
      .given([f.circleNotificationSettingsChanged({ digest: 'weekly' })])
      .when(produce())
      .thenNothingHappened();
    spec
      .given([f.circleNotificationSettingsChanged({ digest: 'weekly' })])
      .when(produce({ frequency: 'weekly', period: '2026-03-09' }))
      .then([f.circleDigestProduced({ frequency: 'weekly', period: '2026-03-09' }), mail]);
  });

  it('produces nothing when nothing is unread', () => {
    spec
      .given([])
      .when(produce({ unread: { notification_ids: [], count: 0, after_position: 0, through_position: 0 } }))
      .thenNothingHappened();
  });

  it('names periods by their start (UTC): the day from 08:00, the week from Monday 08:00', () => {
    // 10 March 2026 is a Tuesday.
    expect(digestPeriodOf(new Date('2026-03-10T09:30:00Z'), 'daily')).to.equal('2026-03-10');
    expect(digestPeriodOf(new Date('2026-03-10T07:59:59.999Z'), 'daily')).to.equal('2026-03-09');
    expect(digestPeriodOf(new Date('2026-03-10T09:30:00Z'), 'weekly')).to.equal('2026-03-09');
    expect(digestPeriodOf(new Date('2026-03-09T07:59:00Z'), 'weekly')).to.equal('2026-03-02');
    expect(digestPeriodOf(new Date('2026-03-16T08:00:00Z'), 'weekly')).to.equal('2026-03-16');
    expect(digestPeriodOf(new Date('2026-03-15T23:00:00Z'), 'weekly')).to.equal('2026-03-09');
  });
});
