import type { Context } from 'koa';
import type Router from '@koa/router';
import { DomainError } from '../../../events/kernel/errors.ts';
import { agentsOf, getUser } from '../../../queries/humans/users.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { AUTH_LIMITS, throttledLogin } from '../humans/auth.ts';
import { doneTo, formField, memberOf, memberSession, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, HTML_PAGE, MEMBER_FORM, MEMBER_PAGE, PAGE_ERRORS, SEE_OTHER } from '../../web/page-operations.ts';

/** Signing in and out of the site, and the member's dashboard (docs/WEB.md). */
export const accountOperations = operations({
  getSignin: {
    method: 'GET',
    path: '/signin',
    summary: 'The sign-in page',
    tags: ['app'],
    auth: 'none',
    query: { type: 'object', properties: { next: { type: 'string', maxLength: 2000, description: 'The page of this site to go to after signing in' } } },
    responses: { 200: HTML_PAGE },
  },
  postSignin: {
    method: 'POST',
    path: '/signin',
    summary: 'Sign in (the password flow of POST /api/auth/login; starts the browser session)',
    tags: ['app'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf({ email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 200 }, next: { type: 'string', maxLength: 2000 } }, [
      'email',
      'password',
    ]),
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  postSignout: {
    method: 'POST',
    path: '/signout',
    summary: 'Sign out (ends the browser session)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  getApp: {
    method: 'GET',
    path: '/app',
    summary: "The member's dashboard: linked agents with status, credits and tier",
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
});

/** A page of this site to go to after signing in: a local path only (never another site). */
export function localNext(value: unknown): string {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : '/app';
}

export function accountRoutes(router: Router, s: Services): void {
  const web = webRouter(s);

  const signinPage = (ctx: Context, data: { email?: string; next?: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'signin', { title: 'Sign in', email: '', next: '/app', problem: null, ...data }, status);

  mount(web, accountOperations.getSignin, async (ctx) => {
    const next = localNext(ctx.query.next);
    if (await memberOf(s, ctx)) return doneTo(ctx, next);
    await signinPage(ctx, { next });
  });

  mount(web, accountOperations.postSignin, async (ctx) => {
    s.limiter.hit(AUTH_LIMITS.auth, ctx.ip, ctx);
    memberSession.checkCsrf(ctx, formField(ctx, '_csrf'));
    const email = formField(ctx, 'email').trim().slice(0, 254);
    const next = localNext(formField(ctx, 'next'));
    try {
      const pair = await throttledLogin(s, ctx, { email, password: formField(ctx, 'password').slice(0, 200) });
      memberSession.start(ctx, pair);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem || problem.status >= 500) throw err;
      if (problem.code === 'invalid_credentials') {
        problem.message = 'That e-mail address and password do not match an account.';
        problem.next = 'Check both and try again, or reset your password.';
      }
      if (err instanceof DomainError && typeof err.extra.retry_after === 'number') ctx.set('Retry-After', String(err.extra.retry_after));
      return signinPage(ctx, { email, next, problem }, problem.status);
    }
    doneTo(ctx, next);
  });

  mount(web, accountOperations.postSignout, async (ctx) => {
    await requireMember(s, ctx);
    memberSession.end(ctx);
    ctx.state.member = null;
    doneTo(ctx, '/', 'You are signed out.');
  });

  mount(web, accountOperations.getApp, async (ctx) => {
    const member = await requireMember(s, ctx);
    const user = await getUser(s.store, member.userId);
    const agents = await agentsOf(s.store, Array.isArray(user?.agent_ids) ? (user.agent_ids as string[]) : []);
    await page(s, ctx, 'app/dashboard', { title: 'Dashboard', agents });
  });

  router.use(web.routes());
}
