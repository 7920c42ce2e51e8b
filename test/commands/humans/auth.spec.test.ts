import { expect } from 'chai';
import type { RefreshSession, RegisterUser, RequestSignupOtp, ResetPassword, StartSession, VerifySignupOtp } from '../../../commands/humans/auth.ts';
import {
  decideRefreshSession,
  decideRegisterUser,
  decideRequestSignupOtp,
  decideResetPassword,
  decideStartSession,
  decideVerifySignupOtp,
} from '../../../commands/humans/auth.ts';
import { otpAggregate } from '../../../commands/humans/otp.ts';
import type { OtpState } from '../../../commands/humans/otp.ts';
import type { ReserveUserEmail, UserState, UserStreamEvent } from '../../../commands/humans/user.ts';
import { decideReserveUserEmail, userAggregate } from '../../../commands/humans/user.ts';
import type { OtpEvent, UserEmailReserved } from '../../../events/humans.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  at,
  digestProduced,
  digestRead,
  hex,
  iso,
  mailQueued,
  NOW,
  OTP,
  otpAttemptFailed,
  otpConsumed,
  otpIssued,
  SESSION,
  sessionRefreshed,
  sessionRevoked,
  sessionStarted,
  USER,
  userRegistered,
} from './fixtures.ts';

const WEEK_MS = 7 * 24 * 3600_000;
const users = <C>(decide: (command: C, state: UserState) => UserStreamEvent[]) =>
  DeciderSpecification.for<C, UserState, UserStreamEvent>({ decide, ...userAggregate });
const otps = <C>(decide: (command: C, state: OtpState) => OtpEvent[]) => DeciderSpecification.for<C, OtpState, OtpEvent>({ decide, ...otpAggregate });
const started = (over: Parameters<typeof sessionStarted>[0] = {}) =>
  sessionStarted({ session_id: 'ses_new', token_hash: hex('9'), started_at: iso(NOW), expires_at: iso(new Date(NOW.getTime() + WEEK_MS)), ...over });
const session = { now: NOW, session_id: 'ses_new', token_hash: hex('9') };

describe('commands: the user aggregate (user-<id>)', () => {
  const fold = (events: UserStreamEvent[]) => events.reduce(userAggregate.evolve, userAggregate.initialState());

  it('replaces the session hash on refresh and keeps a revoked session revoked', () => {
    const s = fold([
      userRegistered(),
      sessionStarted({ session_id: 's1', token_hash: hex('1') }),
      sessionRefreshed({ session_id: 's1', token_hash: hex('2') }),
      sessionStarted({ session_id: 's2', token_hash: hex('3'), started_at: iso(at(9, 5)) }),
      sessionRevoked({ session_id: 's2' }),
      mailQueued(),
    ]);
    expect(s.sessions.s1).to.include({ token_hash: hex('2'), revoked: false });
    expect(s.sessions.s2.revoked).to.equal(true);
  });

  it('drops sessions that expired before a new one starts', () => {
    const s = fold([userRegistered(), sessionStarted({ session_id: 's1' }), sessionStarted({ session_id: 's3', started_at: '2026-04-01T00:00:00.000Z' })]);
    expect(Object.keys(s.sessions)).to.deep.equal(['s3']);
  });

  it('tracks digests and whether each was read', () => {
    const s = fold([userRegistered(), digestProduced({ digest_id: 'dig_1' }), digestProduced({ digest_id: 'dig_2' }), digestRead({ digest_id: 'dig_1' })]);
    expect(s.digests).to.deep.equal({ dig_1: true, dig_2: false });
  });
});

describe('commands: RequestSignupOtp (otp-signup-<address>)', () => {
  const spec = otps(decideRequestSignupOtp);
  const request = (email = 'ann@example.com'): RequestSignupOtp => ({
    type: 'RequestSignupOtp',
    data: { email, mail: mailQueued() },
    metadata: { now: NOW, otp_id: OTP, code_hash: hex('c') },
  });

  it('issues a code with its mail', () => {
    spec
      .given([])
      .when(request())
      .then([otpIssued({ issued_at: iso(NOW), expires_at: iso(at(9, 40)) }), mailQueued()]);
  });

  it('refuses a disposable e-mail domain with 422', () => {
    spec.given([]).when(request('ann@mailinator.com')).thenThrows('validation_failed', 422);
  });
});

describe('commands: VerifySignupOtp (otp-signup-<address>)', () => {
  const spec = otps(decideVerifySignupOtp);
  const verify = (full_name = 'Ann Lee', code_hash = hex('c')): VerifySignupOtp => ({
    type: 'VerifySignupOtp',
    data: { presented: { otp_id: OTP, code_hash }, full_name },
    metadata: { now: NOW },
  });

  it('consumes the right code', () => {
    spec
      .given([otpIssued()])
      .when(verify())
      .then([otpConsumed({ consumed_at: iso(NOW) })]);
  });

  it('records a wrong code', () => {
    spec
      .given([otpIssued()])
      .when(verify('Ann Lee', hex('d')))
      .then([otpAttemptFailed({ failed_at: iso(NOW), attempts: 1 })]);
  });

  it('refuses a blank name with 422 before the code is used', () => {
    spec.given([otpIssued()]).when(verify('   ')).thenThrows('validation_failed', 422);
  });
});

describe('commands: ReserveUserEmail (user-email-<hash>)', () => {
  it('reserves the address for the user (the append expects no stream)', () => {
    const command: ReserveUserEmail = { type: 'ReserveUserEmail', data: { email_hash: hex('e'), user_id: USER }, metadata: { now: NOW } };
    const expected: UserEmailReserved = { type: 'UserEmailReserved', data: { email_hash: hex('e'), user_id: USER, reserved_at: iso(NOW) } };
    expect(decideReserveUserEmail(command)).to.deep.equal([expected]);
  });
});

describe('commands: RegisterUser (user-<id>)', () => {
  const spec = users(decideRegisterUser);
  const register = (over: Partial<RegisterUser['data']> = {}): RegisterUser => ({
    type: 'RegisterUser',
    data: { user_id: USER, email: 'ann@example.com', full_name: 'Ann Lee', password_hash: 'scrypt$15$8$1$salt$hash', ...over },
    metadata: session,
  });

  it('registers the user and starts the first session', () => {
    spec
      .given([])
      .when(register())
      .then([userRegistered({ registered_at: iso(NOW) }), started()]);
  });

  it('stores the address lower-cased and the name trimmed', () => {
    spec
      .given([])
      .when(register({ email: '  Ann@Example.COM ', full_name: '  Ann Lee ' }))
      .then([userRegistered({ registered_at: iso(NOW) }), started()]);
  });

  it('appends nothing for a user that exists (a retried signup)', () => {
    spec.given([userRegistered()]).when(register()).thenNothingHappened();
  });
});

describe('commands: StartSession (user-<id>)', () => {
  const spec = users(decideStartSession);
  const signIn = (password_verified = true): StartSession => ({ type: 'StartSession', data: { user_id: USER, password_verified }, metadata: session });

  it('starts a session valid for 7 days', () => {
    spec.given([userRegistered()]).when(signIn()).then([started()]);
  });

  it('refuses a wrong password with 401', () => {
    spec.given([userRegistered()]).when(signIn(false)).thenThrows('invalid_credentials', 401);
  });

  it('refuses a user that does not exist with 401', () => {
    spec.given([]).when(signIn()).thenThrows('invalid_credentials', 401);
  });
});

describe('commands: RefreshSession (user-<id>)', () => {
  const spec = users(decideRefreshSession);
  const refresh = (presented_token_hash = hex('1'), now = NOW): RefreshSession => ({
    type: 'RefreshSession',
    data: { user_id: USER, session_id: SESSION, presented_token_hash },
    metadata: { now, token_hash: hex('9') },
  });

  it('rotates the refresh token of the session', () => {
    spec
      .given([userRegistered(), sessionStarted()])
      .when(refresh())
      .then([sessionRefreshed({ token_hash: hex('9'), refreshed_at: iso(NOW), expires_at: iso(new Date(NOW.getTime() + WEEK_MS)) })]);
  });

  it('revokes the whole session when a replaced token is presented again', () => {
    spec
      .given([userRegistered(), sessionStarted(), sessionRefreshed()])
      .when(refresh(hex('1')))
      .then([sessionRevoked({ revoked_at: iso(NOW) })]);
  });

  it('refuses a revoked session with 401', () => {
    spec.given([userRegistered(), sessionStarted(), sessionRevoked()]).when(refresh()).thenThrows('unauthorized', 401);
  });

  it('refuses an expired session with 401', () => {
    spec
      .given([userRegistered(), sessionStarted()])
      .when(refresh(hex('1'), new Date('2026-03-17T09:00:00.000Z')))
      .thenThrows('unauthorized', 401);
  });

  it('refuses an unknown session with 401', () => {
    spec.given([userRegistered()]).when(refresh()).thenThrows('unauthorized', 401);
  });
});

describe('commands: ResetPassword (user-<id>)', () => {
  const spec = users(decideResetPassword);
  const reset = (mail = mailQueued({ template: 'password_changed' })): ResetPassword => ({
    type: 'ResetPassword',
    data: { user_id: USER, password_hash: 'scrypt$15$8$1$salt$new', mail },
    metadata: { now: NOW },
  });

  it('changes the password, revokes every live session and tells the owner', () => {
    spec
      .given([userRegistered(), sessionStarted({ session_id: 's1' }), sessionStarted({ session_id: 's2' }), sessionRevoked({ session_id: 's2' })])
      .when(reset())
      .then([
        { type: 'PasswordChanged', data: { user_id: USER, password_hash: 'scrypt$15$8$1$salt$new', reason: 'reset', changed_at: iso(NOW) } },
        sessionRevoked({ session_id: 's1', reason: 'password_reset', revoked_at: iso(NOW) }),
        mailQueued({ template: 'password_changed' }),
      ]);
  });

  it('refuses a user that does not exist with 400 (as a wrong code)', () => {
    spec.given([]).when(reset()).thenThrows('invalid_otp', 400);
  });
});
