import Tokens from 'csrf';
import type { Context } from 'koa';
import { refreshSession } from '../../commands/humans/auth.ts';
import type { TokenPair } from '../../commands/humans/auth.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import { principalOf } from '../auth.ts';
import type { Services } from '../services.ts';
import { authDeps } from '../routes/humans/auth.ts';
import { commandContext } from '../routes/util.ts';

/**
 * The admin console's browser session: the access and refresh tokens of the normal bearer flow,
 * kept in cookies that scripts cannot read (HttpOnly), that no other site's request carries
 * (SameSite=Strict), limited to /admin, signed with a key derived from the server secret (Koa's
 * cookies, Keygrip) and Secure whenever the request came over HTTPS. Forms carry a CSRF token
 * (the `csrf` package) checked against a secret in a cookie of the same kind.
 */
const ACCESS = 'an_admin';
const REFRESH = 'an_admin_refresh';
const CSRF_SECRET = 'an_admin_csrf';
const SESSION_MS = 7 * 24 * 3600_000;

const tokens = new Tokens();

/** The keys Koa signs cookies with: derived from the server secret, so every process agrees. */
export function cookieKeys(s: Services): string[] {
  return [s.secrets.hash('admin-console-cookie-key/v1')];
}

function cookieOptions(ctx: Context, maxAge: number) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/admin', signed: true, secure: ctx.secure, overwrite: true, maxAge };
}

export function startConsoleSession(ctx: Context, pair: Pick<TokenPair, 'access_token' | 'refresh_token'>): void {
  ctx.cookies.set(ACCESS, pair.access_token, cookieOptions(ctx, SESSION_MS));
  ctx.cookies.set(REFRESH, pair.refresh_token, cookieOptions(ctx, SESSION_MS));
}

export function endConsoleSession(ctx: Context): void {
  for (const name of [ACCESS, REFRESH]) ctx.cookies.set(name, null, cookieOptions(ctx, 0));
}

export interface ConsoleUser {
  userId: string;
  roles: string[];
  /** Signed in by the console's cookie (forms need a CSRF token) rather than an Authorization header. */
  viaCookie: boolean;
}

/**
 * Who is using the console: a bearer header (API clients and tests), else the cookie session,
 * refreshed through the normal refresh flow when its access token has expired. Null: nobody.
 */
export async function consoleUser(s: Services, ctx: Context): Promise<ConsoleUser | null> {
  const principal = principalOf(ctx);
  if (principal?.kind === 'user') return { userId: principal.userId, roles: principal.roles, viaCookie: false };
  const verify = s.bearer;
  if (!verify) return null;
  const access = ctx.cookies.get(ACCESS, { signed: true });
  const user = access ? await verify(access) : null;
  if (user) return { userId: user.userId, roles: user.roles, viaCookie: true };
  const refresh = ctx.cookies.get(REFRESH, { signed: true });
  if (!refresh) return null;
  try {
    const pair = await refreshSession(authDeps(s), refresh, commandContext(s, ctx, null));
    await s.runner.waitFor(pair.position, 5_000);
    const renewed = await verify(pair.access_token);
    if (!renewed) return null;
    startConsoleSession(ctx, pair);
    return { userId: renewed.userId, roles: renewed.roles, viaCookie: true };
  } catch (err) {
    if (err instanceof DomainError && err.status === 401) {
      endConsoleSession(ctx);
      return null;
    }
    throw err;
  }
}

/** The CSRF token to put in this page's forms (the secret cookie is created on first use). */
export function csrfToken(ctx: Context): string {
  let secret = ctx.cookies.get(CSRF_SECRET, { signed: true });
  if (!secret) {
    secret = tokens.secretSync();
    ctx.cookies.set(CSRF_SECRET, secret, cookieOptions(ctx, SESSION_MS));
  }
  return tokens.create(secret);
}

/** A form post must carry the token of its page: 403 `csrf_failed` otherwise. */
export function checkCsrf(ctx: Context, token: unknown): void {
  const secret = ctx.cookies.get(CSRF_SECRET, { signed: true });
  if (!secret || typeof token !== 'string' || !tokens.verify(secret, token)) {
    throw new DomainError(403, 'csrf_failed', 'The form expired or did not come from this console; reload the page and try again');
  }
}
