import { expect } from 'chai';
import type { ConsumeOtp, IssueOtp, OtpState } from '../../../commands/humans/otp.ts';
import { decideConsumeOtp, decideIssueOtp, OTP_PER_HOUR, OTP_TTL_MS, otpAggregate } from '../../../commands/humans/otp.ts';
import type { OtpEvent } from '../../../events/humans.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { at, hex, iso, later, mailQueued, NOW, OTP, otpAttemptFailed, otpConsumed, otpIssued } from './fixtures.ts';

const fold = (events: OtpEvent[]) => events.reduce(otpAggregate.evolve, otpAggregate.initialState());

describe('commands: the OTP aggregate (otp-<purpose>-<subject>)', () => {
  it('a new code replaces the previous one; failures and consumption apply to the current code only', () => {
    const s = fold([
      otpIssued({ otp_id: 'otp_1', issued_at: iso(at(9)), expires_at: iso(at(9, 10)) }),
      otpAttemptFailed({ otp_id: 'otp_1', attempts: 1 }),
      otpIssued({ otp_id: 'otp_2', issued_at: iso(at(9, 2)), expires_at: iso(at(9, 12)) }),
      otpConsumed({ otp_id: 'otp_1' }),
      mailQueued(),
    ]);
    expect(s.current).to.include({ otp_id: 'otp_2', attempts: 0, consumed: false });
    expect(s.issued).to.have.length(2);
  });

  it('keeps only the issue times of the last hour', () => {
    const s = fold([otpIssued({ issued_at: iso(at(8)) }), otpIssued({ otp_id: 'otp_3', issued_at: iso(at(9, 3)) })]);
    expect(s.issued).to.deep.equal([iso(at(9, 3))]);
  });
});

describe('commands: IssueOtp (otp-<purpose>-<subject>)', () => {
  const spec = DeciderSpecification.for<IssueOtp, OtpState, OtpEvent>({ decide: decideIssueOtp, ...otpAggregate });
  const issue = (mail = mailQueued(), now = NOW): IssueOtp => ({
    type: 'IssueOtp',
    data: { purpose: 'signup', mail },
    metadata: { now, otp_id: OTP, code_hash: hex('c') },
  });
  const issued = otpIssued({ issued_at: iso(NOW), expires_at: iso(later(OTP_TTL_MS)) });
  const earlier = (n: number) =>
    Array.from({ length: n }, (_, i) => otpIssued({ otp_id: `otp_${i}`, issued_at: iso(at(9, i)), expires_at: iso(at(9, 10 + i)) }));

  it('issues a code valid for 10 minutes and commits its sealed mail in the same append', () => {
    spec.given([]).when(issue()).then([issued, mailQueued()]);
  });

  it('issues a code without a mail when there is nobody to send it to', () => {
    spec
      .given([])
      .when({ ...issue(), data: { purpose: 'signup', mail: null } })
      .then([issued]);
  });

  it('allows a fifth code within the hour', () => {
    spec.given(earlier(4)).when(issue()).then([issued, mailQueued()]);
  });

  it('refuses a sixth code within the hour with 429', () => {
    spec.given(earlier(5)).when(issue()).thenThrows('otp_rate_limited', 429);
  });

  it('says when the oldest code of the hour leaves the window', () => {
    let thrown: unknown;
    try {
      decideIssueOtp(issue(), fold(earlier(5)));
    } catch (err) {
      thrown = err;
    }
    // The oldest was issued at 09:00; the command runs at 09:30.
    expect((thrown as { extra?: unknown }).extra).to.deep.equal({ retry_after: 30 * 60, limit: OTP_PER_HOUR });
  });

  it('allows a code again once an hour has passed since the fifth oldest', () => {
    spec
      .given(earlier(5))
      .when(issue(mailQueued(), at(10, 0, 1)))
      .then([otpIssued({ issued_at: iso(at(10, 0, 1)), expires_at: iso(at(10, 10, 1)) }), mailQueued()]);
  });

  it('appends nothing for a retried command (the same code id)', () => {
    spec.given([issued]).when(issue()).thenNothingHappened();
  });
});

describe('commands: ConsumeOtp (otp-<purpose>-<subject>)', () => {
  const spec = DeciderSpecification.for<ConsumeOtp, OtpState, OtpEvent>({ decide: decideConsumeOtp, ...otpAggregate });
  const consume = (presented: ConsumeOtp['data']['presented'] = { otp_id: OTP, code_hash: hex('c') }, now = NOW): ConsumeOtp => ({
    type: 'ConsumeOtp',
    data: { presented },
    metadata: { now },
  });

  it('consumes the right code', () => {
    spec
      .given([otpIssued()])
      .when(consume())
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
  });

  it('records a wrong code as a failed attempt', () => {
    spec
      .given([otpIssued(), otpAttemptFailed({ attempts: 1 })])
      .when(consume({ otp_id: OTP, code_hash: hex('d') }))
      .then([otpAttemptFailed({ failed_at: iso(NOW), attempts: 2 })]);
  });

  it('records a code that is not 6 digits (nothing presented) as a failed attempt', () => {
    spec
      .given([otpIssued()])
      .when(consume(null))
      .then([otpAttemptFailed({ failed_at: iso(NOW), attempts: 1 })]);
  });

  it('records a code checked against a replaced code as a failed attempt on the current one', () => {
    spec
      .given([otpIssued({ otp_id: 'otp_old' }), otpIssued()])
      .when(consume({ otp_id: 'otp_old', code_hash: hex('c') }))
      .then([otpAttemptFailed({ failed_at: iso(NOW), attempts: 1 })]);
  });

  it('does nothing without a code', () => {
    spec.given([]).when(consume()).thenNothingHappened();
  });

  it('does nothing with a used code (it works once)', () => {
    spec.given([otpIssued(), otpConsumed()]).when(consume()).thenNothingHappened();
  });

  it('does nothing with a code killed by 5 wrong tries, even the right one', () => {
    spec
      .given([otpIssued(), otpAttemptFailed({ attempts: 5 })])
      .when(consume())
      .thenNothingHappened();
  });

  it('does nothing with an expired code, even the right one', () => {
    spec
      .given([otpIssued()])
      .when(consume(undefined, at(9, 35)))
      .thenNothingHappened();
  });
});
