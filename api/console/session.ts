import type { Context } from 'koa';
import type { TokenPair } from '../../commands/humans/auth.ts';
import { principalOf } from '../auth.ts';
import type { Services } from '../services.ts';
import { cookieSession } from '../web/cookie-session.ts';

/** The admin console's browser session (api/web/cookie-session.ts): path /admin, SameSite=Strict. */
const session = cookieSession({
  access: 'an_admin',
  refresh: 'an_admin_refresh',
  csrf: 'an_admin_csrf',
  path: '/admin',
  sameSite: 'strict',
  csrfDetail: 'The form expired or did not come from this console; reload the page and try again',
});

/** The keys Koa signs cookies with: derived from the server secret, so every process agrees. */
export function cookieKeys(s: Services): string[] {
  return [s.secrets.hash('admin-console-cookie-key/v1')];
}

export function startConsoleSession(ctx: Context, pair: Pick<TokenPair, 'access_token' | 'refresh_token'>): void {
  session.start(ctx, pair);
}

export function endConsoleSession(ctx: Context): void {
  session.end(ctx);
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
  const user = await session.user(s, ctx);
  return user ? { ...user, viaCookie: true } : null;
}

/** The CSRF token to put in this page's forms (the secret cookie is created on first use). */
export const csrfToken = (ctx: Context): string => session.csrfToken(ctx);

/** A form post must carry the token of its page: 403 `csrf_failed` otherwise. */
export const checkCsrf = (ctx: Context, token: unknown): void => session.checkCsrf(ctx, token);
