import type { SessionRefreshed, SessionRevoked, SessionStarted, UserEmailReserved, UserRegistered, PasswordChanged } from '../../events/humans.ts';
import { userEmailStream, userStream } from '../../events/humans.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { mailEvent } from './mail.ts';
import { consumeOtp, issueOtp, OTP_MINUTES } from './otp.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';
import { ACCESS_TTL_S } from './tokens.ts';
import { emailKey, userAggregate, userIdForEmail } from './user.ts';

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

const invalidCredentials = () => new DomainError(401, 'invalid_credentials', 'Invalid e-mail or password');
const invalidRefresh = () => new DomainError(401, 'unauthorized', 'Invalid or expired refresh token');
const cleanEmail = (email: string) => email.trim().toLowerCase();

/**
 * Signup step 1. The answer is the same whether or not the address has an account: a known
 * address gets an "account exists" notice instead of a code.
 */
export async function requestSignupOtp(d: AuthDeps, email: string, ctx: CommandContext) {
  const key = emailKey(d.secrets, email);
  const known = (await userIdForEmail(d.bus.log, key)) !== null;
  return issueOtp(d.bus, d.secrets, 'signup', key, ctx, (code) =>
    known
      ? mailEvent(d.secrets, ctx, 'mail', 'account_exists', cleanEmail(email), { login_url: `${d.publicBaseUrl}/login` })
      : mailEvent(d.secrets, ctx, 'mail', 'signup_otp', cleanEmail(email), { code, minutes: OTP_MINUTES }),
  );
}

async function startSession(d: AuthDeps, userId: string, ctx: CommandContext, extra: Array<UserRegistered>): Promise<TokenPair> {
  const sessionId = deriveId('ses', ctx.commandId, 'session');
  const refresh = await d.tokens.refresh({ userId, sessionId });
  const access = await d.tokens.access({ userId, sessionId });
  const started: SessionStarted = {
    type: 'SessionStarted',
    data: {
      user_id: userId,
      session_id: sessionId,
      token_hash: d.secrets.hash(`refresh:${refresh.jti}`),
      started_at: ctx.now.toISOString(),
      expires_at: new Date(ctx.now.getTime() + 7 * 24 * 3600_000).toISOString(),
    },
  };
  const result = await d.bus.handle(
    userStream(userId),
    userAggregate,
    (state) => {
      if (extra.length === 0 && !state.exists) throw invalidCredentials();
      if (extra.length > 0 && state.exists) return [];
      return [...extra, started];
    },
    ctx,
  );
  if (result.duplicate) throw new DomainError(409, 'already_processed', 'This request was already processed');
  return { access_token: access, refresh_token: refresh.token, token_type: 'bearer', expires_in: ACCESS_TTL_S, user_id: userId, position: result.position };
}

/** Signup step 2: the code proves the address; creates the user (address reserved first) and signs in. */
export async function verifySignup(
  d: AuthDeps,
  input: { email: string; otp: string; password: string; full_name: string },
  ctx: CommandContext,
): Promise<TokenPair> {
  const key = emailKey(d.secrets, input.email);
  await consumeOtp(d.bus, d.secrets, 'signup', key, input.otp, ctx);
  const userId = deriveId('usr', ctx.commandId);
  const reservation: UserEmailReserved = { type: 'UserEmailReserved', data: { email_hash: key, user_id: userId, reserved_at: ctx.now.toISOString() } };
  try {
    await d.bus.appendRaw(userEmailStream(key), [reservation], 'no_stream', ctx);
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    throw new DomainError(409, 'email_taken', 'An account already exists for this e-mail; sign in instead');
  }
  const passwordHash = await hashPassword(input.password);
  const registered: UserRegistered = {
    type: 'UserRegistered',
    data: {
      user_id: userId,
      email: cleanEmail(input.email),
      full_name: input.full_name.trim(),
      password_hash: passwordHash,
      registered_at: ctx.now.toISOString(),
    },
  };
  return startSession(d, userId, ctx, [registered]);
}

export async function login(d: AuthDeps, input: { email: string; password: string }, ctx: CommandContext): Promise<TokenPair> {
  const userId = await userIdForEmail(d.bus.log, emailKey(d.secrets, input.email));
  if (!userId) {
    await burnPasswordCheck(input.password);
    throw invalidCredentials();
  }
  const { state } = await d.bus.load(userStream(userId), userAggregate);
  if (!state.exists) {
    await burnPasswordCheck(input.password);
    throw invalidCredentials();
  }
  if (!(await verifyPassword(input.password, state.password_hash))) throw invalidCredentials();
  return startSession(d, userId, ctx, []);
}

/**
 * Rotation: each refresh token works once and is replaced by a new one of the same session.
 * Presenting a replaced token again means it was copied: the whole session (family) is revoked.
 */
export async function refreshSession(d: AuthDeps, token: string, ctx: CommandContext): Promise<TokenPair> {
  const claims = await d.tokens.verifyRefresh(token);
  if (!claims) throw invalidRefresh();
  const next = await d.tokens.refresh({ userId: claims.userId, sessionId: claims.sessionId });
  let reused = false;
  const result = await d.bus.handle(
    userStream(claims.userId),
    userAggregate,
    (state) => {
      reused = false;
      const session = state.sessions[claims.sessionId];
      if (!state.exists || !session || session.revoked || session.expires_at <= ctx.now.toISOString()) throw invalidRefresh();
      if (!d.secrets.verify(`refresh:${claims.jti}`, session.token_hash)) {
        reused = true;
        return [
          {
            type: 'SessionRevoked',
            data: { user_id: claims.userId, session_id: claims.sessionId, reason: 'refresh_token_reuse', revoked_at: ctx.now.toISOString() },
          } satisfies SessionRevoked,
        ];
      }
      return [
        {
          type: 'SessionRefreshed',
          data: {
            user_id: claims.userId,
            session_id: claims.sessionId,
            token_hash: d.secrets.hash(`refresh:${next.jti}`),
            refreshed_at: ctx.now.toISOString(),
            expires_at: new Date(ctx.now.getTime() + 7 * 24 * 3600_000).toISOString(),
          },
        } satisfies SessionRefreshed,
      ];
    },
    ctx,
  );
  if (reused) throw new DomainError(401, 'refresh_token_reused', 'This refresh token was already used; the session has been revoked, sign in again');
  const access = await d.tokens.access({ userId: claims.userId, sessionId: claims.sessionId });
  return { access_token: access, refresh_token: next.token, token_type: 'bearer', expires_in: ACCESS_TTL_S, user_id: claims.userId, position: result.position };
}

/** Same answer for known and unknown addresses: a code is issued either way, mailed only to a known one. */
export async function forgotPassword(d: AuthDeps, email: string, ctx: CommandContext) {
  const key = emailKey(d.secrets, email);
  const known = (await userIdForEmail(d.bus.log, key)) !== null;
  return issueOtp(d.bus, d.secrets, 'password_reset', key, ctx, (code) =>
    known ? mailEvent(d.secrets, ctx, 'mail', 'password_reset_otp', cleanEmail(email), { code, minutes: OTP_MINUTES }) : null,
  );
}

/** A reset changes the password, revokes every session (all refresh tokens) and tells the owner. */
export async function resetPassword(d: AuthDeps, input: { email: string; code: string; new_password: string }, ctx: CommandContext) {
  const key = emailKey(d.secrets, input.email);
  await consumeOtp(d.bus, d.secrets, 'password_reset', key, input.code, ctx);
  const userId = await userIdForEmail(d.bus.log, key);
  if (!userId) throw new DomainError(400, 'invalid_otp', 'The code is wrong, expired or already used; request a new one');
  const passwordHash = await hashPassword(input.new_password);
  return d.bus.handle(
    userStream(userId),
    userAggregate,
    (state) => {
      if (!state.exists) throw new DomainError(400, 'invalid_otp', 'The code is wrong, expired or already used; request a new one');
      const at = ctx.now.toISOString();
      const changed: PasswordChanged = { type: 'PasswordChanged', data: { user_id: userId, password_hash: passwordHash, reason: 'reset', changed_at: at } };
      const revoked: SessionRevoked[] = Object.entries(state.sessions)
        .filter(([, s]) => !s.revoked && s.expires_at > at)
        .map(([sid]) => ({ type: 'SessionRevoked', data: { user_id: userId, session_id: sid, reason: 'password_reset', revoked_at: at } }));
      return [changed, ...revoked, mailEvent(d.secrets, ctx, 'mail', 'password_changed', state.email, { full_name: state.full_name })];
    },
    ctx,
  );
}
