import Tokens from 'csrf';
import type { Context } from 'koa';
import { refreshSession } from '../../commands/humans/auth.ts';
import type { TokenPair } from '../../commands/humans/auth.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import type { Services } from '../services.ts';
import { authDeps } from '../routes/humans/auth.ts';
import { commandContext } from '../routes/util.ts';

/**
 * A browser session over the normal bearer flow: the access and refresh tokens of
 * `POST /api/auth/login` kept in cookies that page script cannot read (HttpOnly), signed with a
 * key derived from the server secret (Koa's cookies, Keygrip), Secure whenever the request came
 * over HTTPS, and refreshed through the normal refresh flow when the access token expires. Form
 * posts carry a CSRF token (the `csrf` package) checked against a secret kept in a cookie of the
 * same kind. The admin console (path /admin, SameSite=Strict) and the member app (path /,
 * SameSite=Lax, so a link from an e-mail opens signed in) are two sessions of this kind.
 */
export interface CookieSessionSpec {
  access: string;
  refresh: string;
  csrf: string;
  path: string;
  sameSite: 'strict' | 'lax';
  /** The 403 detail of a form that fails its CSRF check. */
  csrfDetail: string;
}

export interface SessionUser {
  userId: string;
  roles: string[];
}

const SESSION_MS = 7 * 24 * 3600_000;
const tokens = new Tokens();

export interface CookieSession {
  start(ctx: Context, pair: Pick<TokenPair, 'access_token' | 'refresh_token'>): void;
  end(ctx: Context): void;
  /** The signed-in user of this cookie session (refreshed when its access token expired), or null. */
  user(s: Services, ctx: Context): Promise<SessionUser | null>;
  /** The CSRF token to put in this page's forms (the secret cookie is created on first use). */
  csrfToken(ctx: Context): string;
  /** A form post must carry the token of its page: 403 `csrf_failed` otherwise. */
  checkCsrf(ctx: Context, token: unknown): void;
}

export function cookieSession(spec: CookieSessionSpec): CookieSession {
  const options = (ctx: Context, maxAge: number) => ({
    httpOnly: true,
    sameSite: spec.sameSite,
    path: spec.path,
    signed: true,
    secure: ctx.secure,
    overwrite: true,
    maxAge,
  });
  const session: CookieSession = {
    start(ctx, pair) {
      ctx.cookies.set(spec.access, pair.access_token, options(ctx, SESSION_MS));
      ctx.cookies.set(spec.refresh, pair.refresh_token, options(ctx, SESSION_MS));
    },
    end(ctx) {
      for (const name of [spec.access, spec.refresh]) ctx.cookies.set(name, null, options(ctx, 0));
    },
    async user(s, ctx) {
      const verify = s.bearer;
      if (!verify) return null;
      const access = ctx.cookies.get(spec.access, { signed: true });
      const user = access ? await verify(access) : null;
      if (user) return { userId: user.userId, roles: user.roles };
      const refresh = ctx.cookies.get(spec.refresh, { signed: true });
      if (!refresh) return null;
      try {
        const pair = await refreshSession(authDeps(s), refresh, commandContext(s, ctx, null));
        await s.runner.waitFor(pair.position, 5_000);
        const renewed = await verify(pair.access_token);
        if (!renewed) return null;
        session.start(ctx, pair);
        return { userId: renewed.userId, roles: renewed.roles };
      } catch (err) {
        if (err instanceof DomainError && err.status === 401) {
          session.end(ctx);
          return null;
        }
        throw err;
      }
    },
    csrfToken(ctx) {
      let secret = ctx.cookies.get(spec.csrf, { signed: true });
      if (!secret) {
        secret = tokens.secretSync();
        ctx.cookies.set(spec.csrf, secret, options(ctx, SESSION_MS));
      }
      return tokens.create(secret);
    },
    checkCsrf(ctx, token) {
      const secret = ctx.cookies.get(spec.csrf, { signed: true });
      if (!secret || typeof token !== 'string' || !tokens.verify(secret, token)) throw new DomainError(403, 'csrf_failed', spec.csrfDetail);
    },
  };
  return session;
}
