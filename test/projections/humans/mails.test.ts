import { expect } from 'chai';
import { mailsProjection } from '../../../projections/humans/mails.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const spec = ProjectionSpecification.for(mailsProjection);
const queued = { template: 'signup_code', to: 'member@example.com', params_enc: 'v1.params', queued_at: f.time(9), stream: 'user-1' };

describe('projections: mails', () => {
  it('a queued mail waits (with its encrypted parameters and the stream that queued it)', () =>
    spec.given([{ event: f.mailQueued(), stream: 'user-1' }]).then((models) => {
      expect(models.mails).to.deep.equal([{ _id: 'mail_1', _pos: 1, ...queued, status: 'queued', attempts: 0 }]);
    }));

  it('a failed attempt is retried, a final failure is failed, a sent mail is sent with its transport', () =>
    spec
      .given([
        { event: f.mailQueued(), stream: 'user-1' },
        f.mailSendFailed(),
        f.mailSent({ attempt: 2 }),
        { event: f.mailQueued({ mail_id: 'mail_2' }), stream: 'user-1' },
        f.mailSendFailed({ mail_id: 'mail_2', attempt: 5, final: true }),
      ])
      .then((models) => {
        expect(models.mails).to.deep.equal([
          {
            _id: 'mail_1',
            _pos: 3,
            ...queued,
            status: 'sent',
            attempts: 2,
            last_error: 'connection refused',
            failed_at: f.time(9, 1),
            sent_at: f.time(9, 1),
            transport: 'outbox',
          },
          { _id: 'mail_2', _pos: 5, ...queued, status: 'failed', attempts: 5, last_error: 'connection refused', failed_at: f.time(9, 1) },
        ]);
      }));

  it('a failure that is not final is retrying', () =>
    spec.given([f.mailQueued(), f.mailSendFailed()]).then((models) => {
      expect(models.mails[0]).to.deep.include({ status: 'retrying', attempts: 1 });
    }));
});
