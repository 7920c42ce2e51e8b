import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { DomainError, ValidationFailed } from '../../events/kernel/errors.ts';
import { getUser } from '../../queries/humans/users.ts';
import { bodyField } from '../guards.ts';
import type { Services } from '../services.ts';
import { screenBody } from '../validation.ts';
import { cookieSession } from './cookie-session.ts';
import type { SessionUser } from './cookie-session.ts';
import type { PageData, PageMember } from './render.ts';
import { renderWeb } from './render.ts';

/**
 * The member app's browser session (docs/WEB.md): the tokens of the normal sign-in flow in
 * HttpOnly, signed, SameSite=Lax cookies on the whole site. The API itself never reads them (it
 * authenticates by header only), so a cookie can never make a cross-site API call; every form post
 * of a page carries the page's CSRF token.
 */
export const memberSession = cookieSession({
  access: 'an_session',
  refresh: 'an_session_refresh',
  csrf: 'an_csrf',
  path: '/',
  sameSite: 'lax',
  csrfDetail: 'This form has expired or did not come from this site. Reload the page and try again.',
});

/** The signed-in person of a page request (the header's name and roles), or null. */
export interface Member extends SessionUser {
  email: string;
  name: string | null;
  /** The linked agent the member acts as (the bearer principal's agentId), or null. */
  agentId: string | null;
}

/** The signed-in person of this request, read once per request; null when nobody is signed in. */
export async function memberOf(s: Services, ctx: Context): Promise<Member | null> {
  if (ctx.state.member !== undefined) return ctx.state.member;
  const user = await memberSession.user(s, ctx);
  const doc = user ? await getUser(s.store, user.userId) : null;
  const member =
    user && doc
      ? {
          ...user,
          email: String(doc.email ?? ''),
          name: typeof doc.full_name === 'string' ? doc.full_name : null,
          agentId: typeof doc.agent_id === 'string' ? doc.agent_id : null,
        }
      : null;
  ctx.state.member = member;
  return member;
}

/**
 * The signed-in person, or 401 (a GET goes to the sign-in page and back). A form post must carry
 * its page's CSRF token (403 `csrf_failed`).
 */
export async function requireMember(s: Services, ctx: Context): Promise<Member> {
  const member = await memberOf(s, ctx);
  if (!member) throw new DomainError(401, 'unauthorized', 'Sign in to continue.');
  if (ctx.method === 'POST') memberSession.checkCsrf(ctx, formField(ctx, '_csrf'));
  return member;
}

/** A form field as a string ('' when missing or not a string). */
export function formField(ctx: Context, name: string): string {
  return bodyField(ctx.request.body, name);
}

const FLASH = 'an_flash';

/** A one-time message for the next page (after a post's redirect): a signed cookie, read once. */
export function flash(ctx: Context, message: string): void {
  ctx.cookies.set(FLASH, encodeURIComponent(message.slice(0, 300)), {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    signed: true,
    secure: ctx.secure,
    maxAge: 60_000,
  });
}

function takeFlash(ctx: Context): string | null {
  const value = ctx.cookies.get(FLASH, { signed: true });
  if (!value) return null;
  ctx.cookies.set(FLASH, null, { path: '/', signed: true, httpOnly: true, sameSite: 'lax', secure: ctx.secure });
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** After a form post: see the page at `location` (303), with a one-time `notice`. */
export function doneTo(ctx: Context, location: string, notice?: string): void {
  if (notice) flash(ctx, notice);
  ctx.status = 303;
  ctx.redirect(location);
}

const pageMember = (m: Member | null): PageMember | null => (m ? { email: m.email, name: m.name, roles: m.roles } : null);

/** Renders a page of the site with the header of whoever is signed in, the CSRF token and any notice. */
export async function page(s: Services, ctx: Context, view: string, data: PageData, status = 200): Promise<void> {
  const member = data.member !== undefined ? data.member : pageMember(await memberOf(s, ctx));
  renderWeb(ctx, view, { csrf: memberSession.csrfToken(ctx), notice: takeFlash(ctx), ...data, member }, status);
}

/** What a person reads when an action fails: the problem in plain words and what to do next. */
export interface Problem {
  status: number;
  code: string;
  message: string;
  next: string;
  /** Field messages of a form, by field name. */
  fields: Record<string, string>;
}

const NEXT_STEP: Record<number, string> = {
  400: 'Check what you entered and try again.',
  401: 'Sign in and try again.',
  402: 'Top up the agent’s credits, then try again.',
  403: 'This needs an account with access to it. If you think you should have it, ask its owner or an admin.',
  404: 'It may have been removed, or the link is mistyped. Go back and pick it again.',
  409: 'Reload the page to see the latest state, then try again.',
  410: 'This has ended or been switched off, so it can no longer be used.',
  413: 'Make it shorter and try again.',
  422: 'Correct the highlighted fields and send the form again.',
  429: 'Too many tries in a short time. Wait a little, then try again.',
};

/** The problem of a failed action, as the pages show it (the API's own detail, with a next step). */
export function problemOf(err: unknown): Problem | null {
  if (err instanceof ValidationFailed) {
    const fields: Record<string, string> = {};
    for (const e of err.errors) {
      const name = e.loc.filter((p) => p !== 'body').join('.');
      fields[name] ??= e.msg;
    }
    return { status: 422, code: 'validation_failed', message: 'Some fields need a change.', next: NEXT_STEP[422], fields };
  }
  if (!(err instanceof DomainError)) return null;
  const retry = err.extra.retry_after;
  const next =
    err.status === 429 && typeof retry === 'number'
      ? `Too many tries in a short time. Try again in ${waitText(retry)}.`
      : (NEXT_STEP[err.status] ?? 'Try again later.');
  return { status: err.status, code: err.code, message: err.message, next, fields: {} };
}

/** The problem a form is shown again with (a 4xx in plain words); anything else is thrown on. */
export function formProblem(err: unknown): Problem {
  const problem = problemOf(err);
  if (!problem || problem.status >= 500) throw err;
  return problem;
}

const waitText = (seconds: number) => (seconds < 90 ? `${Math.max(1, Math.ceil(seconds))} seconds` : `${Math.ceil(seconds / 60)} minutes`);

const parseForm = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '16kb' });

/** Parses a page's URL-encoded form once per request, however many page routers the request passes. */
function parseFormOnce(ctx: Context, next: Next) {
  if (ctx.state.formParsed === true) return next();
  ctx.state.formParsed = true;
  return parseForm(ctx, next);
}

/**
 * A router of the site's pages: URL-encoded forms (16 kB), and errors as pages in plain words: a
 * GET that needs a signed-in person goes to the sign-in page and back; every other failure is the
 * error page with the status, what went wrong and what to do next.
 */
export function webRouter(s: Services, prefix?: string): Router {
  const router = new Router(prefix ? { prefix } : {});
  router.use(parseFormOnce);
  router.use(async (ctx: Context, next: Next) => {
    screenBody(ctx.request.body);
    try {
      await next();
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      if (problem.status === 401 && ctx.method === 'GET') {
        ctx.redirect(`/signin?next=${encodeURIComponent(ctx.originalUrl)}`);
        return;
      }
      if (problem.status === 429 && err instanceof DomainError && typeof err.extra.retry_after === 'number')
        ctx.set('Retry-After', String(err.extra.retry_after));
      await page(
        s,
        ctx,
        'error',
        { title: problem.status === 404 ? 'Not found' : 'Something went wrong', problem, requestId: ctx.state.requestId },
        problem.status,
      );
    }
  });
  return router;
}
