import type {
  MailQueued,
  OtpAttemptFailed,
  OtpConsumed,
  OtpIssued,
  PasswordChanged,
  SessionRefreshed,
  SessionRevoked,
  SessionStarted,
  UserRegistered,
} from '../../events/humans.ts';
import { otpStream, userEmailStream, userStream } from '../../events/humans.ts';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import { isDisposableDomain } from '../agents/email.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Command, CommandBus, CommandContext, CommandResult } from '../handler.ts';
import { sameHash } from './hashes.ts';
import { sealMail } from './mail.ts';
import type { ConsumeOtp, IssueOtpMetadata, OtpState } from './otp.ts';
import {
  assertConsumed,
  consumeOtp,
  consumeOtpCommand,
  decideConsumeOtp,
  decideIssueOtp,
  drawOtp,
  invalidOtp,
  issueOtp,
  OTP_MINUTES,
  otpAggregate,
  otpContext,
} from './otp.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';
import { ACCESS_TTL_S, REFRESH_TTL_S } from './tokens.ts';
import type { UserState } from './user.ts';
import { decideReserveUserEmail, emailKey, userAggregate, userIdForEmail } from './user.ts';

export interface AuthDeps {
  bus: CommandBus;
  secrets: SecretBox;
  tokens: TokenService;
  publicBaseUrl: string;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  user_id: string;
  position: number;
}

const SESSION_TTL_MS = REFRESH_TTL_S * 1000;
const invalidCredentials = () => new DomainError(401, 'invalid_credentials', 'Invalid e-mail or password');
const invalidRefresh = () => new DomainError(401, 'unauthorized', 'Invalid or expired refresh token');
const cleanEmail = (email: string) => email.trim().toLowerCase();

// ---- signup ------------------------------------------------------------------------------------

/** RequestSignupOtp: the address and the sealed mail (a code, or an "account exists" notice for a known address). */
export type RequestSignupOtp = Command<'RequestSignupOtp', { email: string; mail: MailQueued }, IssueOtpMetadata>;

/** Disposable domains are refused (422); otherwise a code is issued (see decideIssueOtp). */
export function decideRequestSignupOtp(command: RequestSignupOtp, state: OtpState): Array<OtpIssued | MailQueued> {
  if (isDisposableDomain(command.data.email)) {
    throw new ValidationFailed([{ loc: ['body', 'email'], msg: 'disposable e-mail domains are not accepted', type: 'value_error.email.disposable' }]);
  }
  return decideIssueOtp({ type: 'IssueOtp', data: { purpose: 'signup', mail: command.data.mail }, metadata: command.metadata }, state);
}

/**
 * Signup step 1. The answer is the same whether or not the address has an account: a known
 * address gets an "account exists" notice instead of a code.
 */
export async function requestSignupOtp(d: AuthDeps, email: string, ctx: CommandContext): Promise<{ position: number }> {
  const key = emailKey(d.secrets, email);
  const known = (await userIdForEmail(d.bus.log, key)) !== null;
  const draw = drawOtp(d.secrets, 'signup', key, ctx);
  const mail = known
    ? sealMail(d.secrets, ctx, 'mail', 'account_exists', cleanEmail(email), { login_url: `${d.publicBaseUrl}/login` })
    : sealMail(d.secrets, ctx, 'mail', 'signup_otp', cleanEmail(email), { code: draw.code, minutes: OTP_MINUTES });
  const command: RequestSignupOtp = {
    type: 'RequestSignupOtp',
    data: { email, mail },
    metadata: { now: ctx.now, otp_id: draw.otp_id, code_hash: draw.code_hash },
  };
  const result = await d.bus.handle(otpStream('signup', key), otpAggregate, (state) => decideRequestSignupOtp(command, state), ctx);
  return { position: result.position };
}

/** VerifySignupOtp: the signup's code check, with the name the account will carry. */
export type VerifySignupOtp = Command<'VerifySignupOtp', ConsumeOtp['data'] & { full_name: string }, ConsumeOtp['metadata']>;

/** A blank name is refused (422) before the code is used; otherwise the code is checked (see decideConsumeOtp). */
export function decideVerifySignupOtp(command: VerifySignupOtp, state: OtpState): Array<OtpConsumed | OtpAttemptFailed> {
  if (!command.data.full_name.trim())
    throw new ValidationFailed([{ loc: ['body', 'full_name'], msg: 'full_name must not be blank', type: 'value_error.blank' }]);
  return decideConsumeOtp({ type: 'ConsumeOtp', data: { presented: command.data.presented }, metadata: command.metadata }, state);
}

/** What starting a session draws before deciding: the session id and the keyed hash of its first refresh token's id. */
export interface SessionMetadata {
  now: Date;
  session_id: string;
  token_hash: string;
}

/** RegisterUser: the account (its password already hashed) and its first session. */
export type RegisterUser = Command<'RegisterUser', { user_id: string; email: string; full_name: string; password_hash: string }, SessionMetadata>;

const sessionStarted = (userId: string, m: SessionMetadata): SessionStarted => ({
  type: 'SessionStarted',
  data: {
    user_id: userId,
    session_id: m.session_id,
    token_hash: m.token_hash,
    started_at: m.now.toISOString(),
    expires_at: new Date(m.now.getTime() + SESSION_TTL_MS).toISOString(),
  },
});

/** The user is registered (address lower-cased, name trimmed) and signed in, once: an existing user appends nothing. */
export function decideRegisterUser(command: RegisterUser, state: UserState): Array<UserRegistered | SessionStarted> {
  if (state.exists) return [];
  const { user_id, email, full_name, password_hash } = command.data;
  const registered: UserRegistered = {
    type: 'UserRegistered',
    data: { user_id, email: cleanEmail(email), full_name: full_name.trim(), password_hash, registered_at: command.metadata.now.toISOString() },
  };
  return [registered, sessionStarted(user_id, command.metadata)];
}

/** StartSession: a sign-in, with whether the password matched the user's hash (scrypt runs before deciding). */
export type StartSession = Command<'StartSession', { user_id: string; password_verified: boolean }, SessionMetadata>;

/** An unknown user or a wrong password gets 401 (the same for both). */
export function decideStartSession(command: StartSession, state: UserState): SessionStarted[] {
  if (!state.exists || !command.data.password_verified) throw invalidCredentials();
  return [sessionStarted(command.data.user_id, command.metadata)];
}

interface MintedSession {
  access: string;
  refresh: string;
  metadata: SessionMetadata;
}

async function mintSession(d: AuthDeps, userId: string, ctx: CommandContext): Promise<MintedSession> {
  const sessionId = deriveId('ses', ctx.commandId, 'session');
  const refresh = await d.tokens.refresh({ userId, sessionId });
  const access = await d.tokens.access({ userId, sessionId });
  return { access, refresh: refresh.token, metadata: { now: ctx.now, session_id: sessionId, token_hash: d.secrets.hash(`refresh:${refresh.jti}`) } };
}

function tokenPair(session: MintedSession, userId: string, result: CommandResult<UserRegistered | SessionStarted, UserState>): TokenPair {
  if (result.duplicate) throw new DomainError(409, 'already_processed', 'This request was already processed');
  return {
    access_token: session.access,
    refresh_token: session.refresh,
    token_type: 'bearer',
    expires_in: ACCESS_TTL_S,
    user_id: userId,
    position: result.position,
  };
}

/** Signup step 2: the code proves the address; creates the user (address reserved first) and signs in. */
export async function verifySignup(
  d: AuthDeps,
  input: { email: string; otp: string; password: string; full_name: string },
  ctx: CommandContext,
): Promise<TokenPair> {
  const key = emailKey(d.secrets, input.email);
  const otp = otpStream('signup', key);
  const check = await consumeOtpCommand(d.bus, d.secrets, otp, input.otp, ctx.now);
  const verify: VerifySignupOtp = { type: 'VerifySignupOtp', data: { ...check.data, full_name: input.full_name }, metadata: check.metadata };
  assertConsumed(
    await d.bus.handle<OtpState, OtpConsumed | OtpAttemptFailed>(otp, otpAggregate, (state) => decideVerifySignupOtp(verify, state), otpContext(ctx)),
  );
  const userId = deriveId('usr', ctx.commandId);
  const reservation = decideReserveUserEmail({ type: 'ReserveUserEmail', data: { email_hash: key, user_id: userId }, metadata: { now: ctx.now } });
  try {
    await d.bus.appendRaw(userEmailStream(key), reservation, 'no_stream', ctx);
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    throw new DomainError(409, 'email_taken', 'An account already exists for this e-mail; sign in instead');
  }
  const passwordHash = await hashPassword(input.password);
  const session = await mintSession(d, userId, ctx);
  const command: RegisterUser = {
    type: 'RegisterUser',
    data: { user_id: userId, email: input.email, full_name: input.full_name, password_hash: passwordHash },
    metadata: session.metadata,
  };
  const result = await d.bus.handle<UserState, UserRegistered | SessionStarted>(
    userStream(userId),
    userAggregate,
    (state) => decideRegisterUser(command, state),
    ctx,
  );
  return tokenPair(session, userId, result);
}

// ---- sessions ----------------------------------------------------------------------------------

export async function login(d: AuthDeps, input: { email: string; password: string }, ctx: CommandContext): Promise<TokenPair> {
  const userId = await userIdForEmail(d.bus.log, emailKey(d.secrets, input.email));
  if (!userId) {
    await burnPasswordCheck(input.password);
    throw invalidCredentials();
  }
  const { state: user } = await d.bus.load(userStream(userId), userAggregate);
  // An unknown user costs the same scrypt time as a known one.
  const verified = user.exists ? await verifyPassword(input.password, user.password_hash) : await burnPasswordCheck(input.password).then(() => false);
  const session = await mintSession(d, userId, ctx);
  const command: StartSession = { type: 'StartSession', data: { user_id: userId, password_verified: verified }, metadata: session.metadata };
  const result = await d.bus.handle<UserState, SessionStarted>(userStream(userId), userAggregate, (state) => decideStartSession(command, state), ctx);
  return tokenPair(session, userId, result);
}

/**
 * RefreshSession: the keyed hash of the presented refresh token's id, and in the metadata the
 * keyed hash of the next token's id (random, minted before deciding).
 */
export type RefreshSession = Command<
  'RefreshSession',
  { user_id: string; session_id: string; presented_token_hash: string },
  { now: Date; token_hash: string }
>;

/**
 * Rotation: each refresh token works once and is replaced by a new one of the same session.
 * Presenting a replaced token again means it was copied: the whole session (family) is revoked.
 * An unknown, revoked or expired session gets 401.
 */
export function decideRefreshSession(command: RefreshSession, state: UserState): Array<SessionRefreshed | SessionRevoked> {
  const { user_id, session_id, presented_token_hash } = command.data;
  const at = command.metadata.now.toISOString();
  const session = state.sessions[session_id];
  if (!state.exists || !session || session.revoked || session.expires_at <= at) throw invalidRefresh();
  if (!sameHash(presented_token_hash, session.token_hash)) {
    return [{ type: 'SessionRevoked', data: { user_id, session_id, reason: 'refresh_token_reuse', revoked_at: at } }];
  }
  const expires_at = new Date(command.metadata.now.getTime() + SESSION_TTL_MS).toISOString();
  return [{ type: 'SessionRefreshed', data: { user_id, session_id, token_hash: command.metadata.token_hash, refreshed_at: at, expires_at } }];
}

export async function refreshSession(d: AuthDeps, token: string, ctx: CommandContext): Promise<TokenPair> {
  const claims = await d.tokens.verifyRefresh(token);
  if (!claims) throw invalidRefresh();
  const next = await d.tokens.refresh({ userId: claims.userId, sessionId: claims.sessionId });
  const command: RefreshSession = {
    type: 'RefreshSession',
    data: { user_id: claims.userId, session_id: claims.sessionId, presented_token_hash: d.secrets.hash(`refresh:${claims.jti}`) },
    metadata: { now: ctx.now, token_hash: d.secrets.hash(`refresh:${next.jti}`) },
  };
  const result = await d.bus.handle<UserState, SessionRefreshed | SessionRevoked>(
    userStream(claims.userId),
    userAggregate,
    (state) => decideRefreshSession(command, state),
    ctx,
  );
  if (result.events.some((e) => e.type === 'SessionRevoked')) {
    throw new DomainError(401, 'refresh_token_reused', 'This refresh token was already used; the session has been revoked, sign in again');
  }
  const access = await d.tokens.access({ userId: claims.userId, sessionId: claims.sessionId });
  return { access_token: access, refresh_token: next.token, token_type: 'bearer', expires_in: ACCESS_TTL_S, user_id: claims.userId, position: result.position };
}

// ---- password reset ------------------------------------------------------------------------------

/** Same answer for known and unknown addresses: a code is issued either way, mailed only to a known one. */
export async function forgotPassword(d: AuthDeps, email: string, ctx: CommandContext): Promise<{ position: number }> {
  const key = emailKey(d.secrets, email);
  const known = (await userIdForEmail(d.bus.log, key)) !== null;
  return issueOtp(d.bus, d.secrets, 'password_reset', key, ctx, (code) =>
    known
      ? sealMail(d.secrets, ctx, 'mail', 'password_reset_otp', cleanEmail(email), {
          code,
          minutes: OTP_MINUTES,
          reset_url: `${d.publicBaseUrl}/reset-password?email=${encodeURIComponent(cleanEmail(email))}`,
        })
      : null,
  );
}

/** ResetPassword: the new password's hash (scrypt runs before deciding) and the sealed "password changed" notice. */
export type ResetPassword = Command<'ResetPassword', { user_id: string; password_hash: string; mail: MailQueued | null }, { now: Date }>;

/** A reset changes the password, revokes every live session (all refresh tokens) and tells the owner. */
export function decideResetPassword(command: ResetPassword, state: UserState): Array<PasswordChanged | SessionRevoked | MailQueued> {
  if (!state.exists) throw invalidOtp();
  const { user_id, password_hash, mail } = command.data;
  const at = command.metadata.now.toISOString();
  const changed: PasswordChanged = { type: 'PasswordChanged', data: { user_id, password_hash, reason: 'reset', changed_at: at } };
  const revoked: SessionRevoked[] = Object.entries(state.sessions)
    .filter(([, s]) => !s.revoked && s.expires_at > at)
    .map(([session_id]) => ({ type: 'SessionRevoked', data: { user_id, session_id, reason: 'password_reset', revoked_at: at } }));
  return mail ? [changed, ...revoked, mail] : [changed, ...revoked];
}

export async function resetPassword(
  d: AuthDeps,
  input: { email: string; code: string; new_password: string },
  ctx: CommandContext,
): Promise<{ position: number }> {
  const key = emailKey(d.secrets, input.email);
  await consumeOtp(d.bus, d.secrets, 'password_reset', key, input.code, ctx);
  const userId = await userIdForEmail(d.bus.log, key);
  if (!userId) throw invalidOtp();
  const passwordHash = await hashPassword(input.new_password);
  const { state: user } = await d.bus.load(userStream(userId), userAggregate);
  const mail = user.exists ? sealMail(d.secrets, ctx, 'mail', 'password_changed', user.email, { full_name: user.full_name }) : null;
  const command: ResetPassword = { type: 'ResetPassword', data: { user_id: userId, password_hash: passwordHash, mail }, metadata: { now: ctx.now } };
  const result = await d.bus.handle<UserState, PasswordChanged | SessionRevoked | MailQueued>(
    userStream(userId),
    userAggregate,
    (state) => decideResetPassword(command, state),
    ctx,
  );
  return { position: result.position };
}
