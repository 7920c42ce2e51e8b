import Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthDeps } from '../../../commands/humans/auth.ts';
import { forgotPassword, login, refreshSession, requestSignupOtp, resetPassword, verifySignup } from '../../../commands/humans/auth.ts';
import { OTP_MINUTES } from '../../../commands/humans/otp.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { publicAgent } from '../../../queries/agents/agents.ts';
import { agentsOf, getUser } from '../../../queries/humans/users.ts';
import { principalOf } from '../../auth.ts';
import type { LimitRule } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';
import {
  GetAuthMeAnswer,
  PostAuthForgotPasswordAnswer,
  PostAuthLoginAnswer,
  PostAuthRefreshAnswer,
  PostAuthResetPasswordAnswer,
  PostAuthSendVerificationOtpAnswer,
  PostAuthVerifyEmailOtpAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/**
 * Per client address on every auth endpoint; failed sign-ins per account and client address
 * together, and a looser ceiling per account that applies only to addresses the account has not
 * signed in from (NIST SP 800-63B 5.2.2: at most 100 failures; OWASP: no lockout an attacker can
 * trigger). All scale with RATE_LIMIT_SCALE.
 */
export const AUTH_LIMITS = {
  auth: { name: 'auth_requests', points: 30, windowMs: 60_000, per: 'address' },
  loginFailures: { name: 'failed_logins', points: 10, windowMs: 15 * 60_000 },
  accountFailures: { name: 'failed_logins_per_account', points: 100, windowMs: 3600_000 },
} satisfies Record<string, LimitRule>;

/** An address an account signed in (or signed up) from stays known for 30 days. */
export const KNOWN_ADDRESS_MS = 30 * 24 * 3600_000;
const knownAddress = (account: string, ip: string) => `login_ok\n${account}\n${ip}`;

const email = { type: 'string', minLength: 3, maxLength: 254, format: 'email' };
const password = { type: 'string', minLength: 8, maxLength: 128 };
const otp = { type: 'string', minLength: 1, maxLength: 12 };
const body = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties });

/** The bodies of the auth endpoints (the site's forms validate against the same schemas). */
export const authSchemas = {
  sendOtp: typed<{ email: string }>(body(['email'], { email })),
  verify: typed<{ email: string; otp: string; password: string; full_name: string }>(
    body(['email', 'otp', 'password', 'full_name'], { email, otp, password, full_name: { type: 'string', minLength: 1, maxLength: 100 } }),
  ),
  login: typed<{ email: string; password: string }>(body(['email', 'password'], { email, password: { type: 'string', minLength: 1, maxLength: 128 } })),
  refresh: typed<{ refresh_token: string }>(body(['refresh_token'], { refresh_token: { type: 'string', minLength: 1, maxLength: 4096 } })),
  forgot: typed<{ email: string }>(body(['email'], { email })),
  reset: typed<{ email: string; code: string; new_password: string }>(body(['email', 'code', 'new_password'], { email, code: otp, new_password: password })),
};

/** J: a signed-in user (bearer token). */
export function requireUser(ctx: Context): { userId: string; agentId: string | null; roles: string[] } {
  const p = principalOf(ctx);
  if (!p || p.kind !== 'user') throw new DomainError(401, 'unauthorized', 'A bearer token is required (Authorization: Bearer <ACCESS_TOKEN>)');
  return { userId: p.userId, agentId: p.agentId, roles: p.roles };
}

export function authDeps(s: Services): AuthDeps {
  return { bus: s.bus, secrets: s.secrets, tokens: s.tokens, publicBaseUrl: s.config.publicBaseUrl };
}

export const CODE_SENT = `If the address can receive mail, a 6-digit code is on its way. It is valid for ${OTP_MINUTES} minutes.`;

/**
 * Password sign-in with its throttles (the API and the admin console; the caller counts the request
 * against the per-address auth limit first): per account and address pair, and per account from
 * addresses it never signed in from. Answers once the session is in the read models.
 */
export async function throttledLogin(s: Services, ctx: Context, input: { email: string; password: string }) {
  const account = input.email.trim().toLowerCase();
  const pair = `${account}\n${ctx.ip}`;
  // hit() on a full window answers 429 with Retry-After and this rule's RateLimit-* headers.
  if (s.limiter.full(AUTH_LIMITS.loginFailures, pair)) s.limiter.hit(AUTH_LIMITS.loginFailures, pair, ctx);
  const known = s.limiter.marked(knownAddress(account, ctx.ip));
  if (!known && s.limiter.full(AUTH_LIMITS.accountFailures, account)) s.limiter.hit(AUTH_LIMITS.accountFailures, account, ctx);
  try {
    const tokens = await login(authDeps(s), input, commandContext(s, ctx, null));
    s.limiter.mark(knownAddress(account, ctx.ip), KNOWN_ADDRESS_MS);
    await settled(s, tokens.position);
    return tokens;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'invalid_credentials') {
      s.limiter.add(AUTH_LIMITS.loginFailures, pair);
      s.limiter.add(AUTH_LIMITS.accountFailures, account);
    }
    throw err;
  }
}

/** Sign-up's second step (the API and the site): the mailed code, the password and the name; signs in. */
export async function completeSignup(s: Services, ctx: Context, input: { email: string; otp: string; password: string; full_name: string }) {
  const tokens = await verifySignup(authDeps(s), input, commandContext(s, ctx, null));
  s.limiter.mark(knownAddress(input.email.trim().toLowerCase(), ctx.ip), KNOWN_ADDRESS_MS);
  await settled(s, tokens.position);
  return tokens;
}

/** A new password with the mailed reset code (the API and the site); every session is signed out. */
export async function resetWithCode(s: Services, ctx: Context, input: { email: string; code: string; new_password: string }): Promise<void> {
  const result = await resetPassword(authDeps(s), input, commandContext(s, ctx, null));
  await settled(s, result.position);
}

export const authOperations = operations({
  postAuthSendVerificationOtp: {
    method: 'POST',
    path: '/api/auth/send-verification-otp',
    summary: 'Sign-up: e-mail a verification code',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthSendVerificationOtpAnswer),
    body: authSchemas.sendOtp,
    rateLimit: AUTH_LIMITS.auth,
  },
  postAuthVerifyEmailOtp: {
    method: 'POST',
    path: '/api/auth/verify-email-otp',
    summary: 'Sign-up: verify the code and set a password (signs in)',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthVerifyEmailOtpAnswer),
    body: authSchemas.verify,
    rateLimit: AUTH_LIMITS.auth,
  },
  postAuthLogin: {
    method: 'POST',
    path: '/api/auth/login',
    summary: 'Sign in with e-mail and password',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthLoginAnswer),
    body: authSchemas.login,
    // Failures are counted (throttledLogin); every request counts against the address's auth limit.
    rateLimit: AUTH_LIMITS.loginFailures,
    limitCountedBy: 'handler',
    alsoLimits: [AUTH_LIMITS.auth],
  },
  postAuthRefresh: {
    method: 'POST',
    path: '/api/auth/refresh',
    summary: 'Exchange a refresh token for new tokens',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthRefreshAnswer),
    body: authSchemas.refresh,
    rateLimit: AUTH_LIMITS.auth,
  },
  postAuthForgotPassword: {
    method: 'POST',
    path: '/api/auth/forgot-password',
    summary: 'E-mail a password reset code',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthForgotPasswordAnswer),
    body: authSchemas.forgot,
    rateLimit: AUTH_LIMITS.auth,
  },
  postAuthResetPassword: {
    method: 'POST',
    path: '/api/auth/reset-password',
    summary: 'Reset the password with the code',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostAuthResetPasswordAnswer),
    body: authSchemas.reset,
    rateLimit: AUTH_LIMITS.auth,
  },
  getAuthMe: { method: 'GET', path: '/api/auth/me', summary: 'The signed-in user', tags: ['humans'], auth: 'bearer', responses: ok(GetAuthMeAnswer) },
});

export function authRoutes(router: Router, s: Services): void {
  const deps = authDeps(s);
  const tokenBody = (t: { access_token: string; refresh_token: string; token_type: string; expires_in: number; user_id: string }) => ({
    access_token: t.access_token,
    refresh_token: t.refresh_token,
    token_type: t.token_type,
    expires_in: t.expires_in,
    user_id: t.user_id,
  });

  const auth = new Router({ prefix: '/api/auth' });
  mount(auth, authOperations.postAuthSendVerificationOtp, async (ctx, input) => {
    await requestSignupOtp(deps, input.body.email, commandContext(s, ctx, null));
    ctx.body = { message: CODE_SENT, expires_in_minutes: OTP_MINUTES };
  });

  mount(auth, authOperations.postAuthVerifyEmailOtp, async (ctx, input) => {
    ctx.body = tokenBody(await completeSignup(s, ctx, input.body));
  });

  mount(auth, authOperations.postAuthLogin, async (ctx, input) => {
    ctx.body = tokenBody(await throttledLogin(s, ctx, input.body));
  });

  mount(auth, authOperations.postAuthRefresh, async (ctx, input) => {
    const tokens = await refreshSession(deps, input.body.refresh_token, commandContext(s, ctx, null));
    await settled(s, tokens.position);
    ctx.body = tokenBody(tokens);
  });

  mount(auth, authOperations.postAuthForgotPassword, async (ctx, input) => {
    await forgotPassword(deps, input.body.email, commandContext(s, ctx, null));
    ctx.body = { message: CODE_SENT, expires_in_minutes: OTP_MINUTES };
  });

  mount(auth, authOperations.postAuthResetPassword, async (ctx, input) => {
    await resetWithCode(s, ctx, input.body);
    ctx.body = { message: 'Password changed. Every session was signed out; sign in with the new password.' };
  });

  mount(auth, authOperations.getAuthMe, async (ctx) => {
    const who = requireUser(ctx);
    const user = await getUser(s.store, who.userId);
    if (!user) throw new DomainError(401, 'unauthorized', 'Invalid or expired token');
    const agents = await agentsOf(s.store, user.agent_ids ?? []);
    ctx.body = {
      user_id: who.userId,
      email: user.email,
      full_name: user.full_name,
      roles: who.roles,
      created_at: user.created_at,
      active_agent_id: who.agentId,
      agents: agents.map((a) => ({
        ...publicAgent(a, s.config.publicBaseUrl),
        owner_email: a.owner_email,
        auto_post_on_scout: a.auto_post_on_scout,
        auto_post_on_mixer: a.auto_post_on_mixer,
      })),
    };
  });

  router.use(auth.routes());
}
