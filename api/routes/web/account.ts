import type { Context } from 'koa';
import type Router from '@koa/router';
import { DomainError } from '../../../events/kernel/errors.ts';
import { forgotPassword, requestSignupOtp } from '../../../commands/humans/auth.ts';
import { OTP_MINUTES } from '../../../commands/humans/otp.ts';
import { getAgent, publicAgent } from '../../../queries/agents/agents.ts';
import { unreadCount } from '../../../queries/communities/circles.ts';
import { creditAccount } from '../../../queries/credits/credits.ts';
import { agentsOf, getUser } from '../../../queries/humans/users.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import type { Member } from '../../web/member.ts';
import { AUTH_LIMITS, authDeps, authSchemas, completeSignup, resetWithCode, throttledLogin } from '../humans/auth.ts';
import { commandContext } from '../util.ts';
import { doneTo, formField, formProblem, memberOf, memberSession, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, HTML_PAGE, MEMBER_FORM, MEMBER_PAGE, PAGE_ERRORS, SEE_OTHER } from '../../web/page-operations.ts';

const EMAIL_QUERY = {
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254, description: 'The address the code was sent to (fills the form)' } },
};
const emailField = { type: 'string', maxLength: 254 };

/** Signing up, in and out of the site, a forgotten password, and the member's dashboard (docs/WEB.md). */
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
    summary: "The member's dashboard: linked agents with status, credits and tier, and the next step",
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  getSignup: {
    method: 'GET',
    path: '/signup',
    summary: 'The sign-up page: an e-mail address to send a code to',
    tags: ['app'],
    auth: 'none',
    responses: { 200: HTML_PAGE, 303: SEE_OTHER },
  },
  postSignup: {
    method: 'POST',
    path: '/signup',
    summary: 'Sign-up, step one: e-mail a code (the command of POST /api/auth/send-verification-otp)',
    tags: ['app'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf({ email: emailField }, ['email']),
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  getSignupVerify: {
    method: 'GET',
    path: '/signup/verify',
    summary: 'Sign-up, step two: the mailed code, a name and a password',
    tags: ['app'],
    auth: 'none',
    query: EMAIL_QUERY,
    responses: { 200: HTML_PAGE },
  },
  postSignupVerify: {
    method: 'POST',
    path: '/signup/verify',
    summary: 'Sign-up, step two: create the account and sign in (the command of POST /api/auth/verify-email-otp)',
    tags: ['app'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf(
      {
        email: emailField,
        otp: { type: 'string', maxLength: 12 },
        full_name: { type: 'string', maxLength: 100 },
        password: { type: 'string', maxLength: 128 },
      },
      ['email', 'otp', 'full_name', 'password'],
    ),
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  getForgotPassword: {
    method: 'GET',
    path: '/forgot-password',
    summary: 'Forgotten password: an e-mail address to send a reset code to',
    tags: ['app'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  postForgotPassword: {
    method: 'POST',
    path: '/forgot-password',
    summary: 'E-mail a password reset code (the command of POST /api/auth/forgot-password)',
    tags: ['app'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf({ email: emailField }, ['email']),
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
  getResetPassword: {
    method: 'GET',
    path: '/reset-password',
    summary: 'Reset the password: the mailed code and a new password',
    tags: ['app'],
    auth: 'none',
    query: EMAIL_QUERY,
    responses: { 200: HTML_PAGE },
  },
  postResetPassword: {
    method: 'POST',
    path: '/reset-password',
    summary: 'Set a new password with the mailed code (the command of POST /api/auth/reset-password); signs every session out',
    tags: ['app'],
    auth: 'none',
    bodyContentType: FORM,
    body: formOf({ email: emailField, code: { type: 'string', maxLength: 12 }, new_password: { type: 'string', maxLength: 128 } }, [
      'email',
      'code',
      'new_password',
    ]),
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS },
  },
});

/** The member's linked agents as the dashboard shows them: status, credits and tier. */
export async function memberAgents(s: Services, member: Member) {
  const user = await getUser(s.store, member.userId);
  const ids = user?.agent_ids ?? [];
  const docs = await agentsOf(s.store, ids);
  return docs.map((d) => agentCard(s, d));
}

/** One agent's summary: its public profile, its credit account and its status in words. */
export function agentCard(s: Services, d: ReadModel<'agents'>) {
  const credits = creditAccount(d);
  return {
    ...publicAgent(d, s.config.publicBaseUrl),
    credits,
    deactivated: d.deactivated === true,
    status: d.deactivated === true ? 'Deactivated' : d.is_claimed === true ? 'Active, owner verified' : 'Active',
    registered: dayOf(d.created_at),
    renews: dayOf(credits.reset_at),
  };
}

/** The day of a timestamp as people read it (`2026-03-10`), '' when there is none. */
const dayOf = (iso: unknown) => (typeof iso === 'string' ? iso.slice(0, 10) : '');

/** The agent of `agentId` when the member owns it; 404 otherwise (another member's agent looks like no agent). */
export async function ownedAgent(s: Services, member: Member, agentId: string) {
  const user = await getUser(s.store, member.userId);
  const ids = user?.agent_ids ?? [];
  const agent = ids.includes(agentId) ? await getAgent(s.store, agentId) : null;
  if (!agent) throw new DomainError(404, 'agent_not_found', 'No agent of yours has this id.');
  return agent;
}

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
    const [agents, unread] = await Promise.all([memberAgents(s, member), unreadCount(s.store, member.userId)]);
    await page(s, ctx, 'app/dashboard', { title: 'Dashboard', agents, unread });
  });

  /** A public form's checks before its fields: the per-address limit of the auth endpoints, then the page token. */
  const publicForm = (ctx: Context) => {
    s.limiter.hit(AUTH_LIMITS.auth, ctx.ip, ctx);
    memberSession.checkCsrf(ctx, formField(ctx, '_csrf'));
  };
  const emailOf = (ctx: Context, from: 'query' | 'form') =>
    (from === 'query' ? (typeof ctx.query.email === 'string' ? ctx.query.email : '') : formField(ctx, 'email')).trim().slice(0, 254);
  const codeSent = `We sent a 6-digit code to that address if it can receive mail. It is valid for ${OTP_MINUTES} minutes.`;

  const signupPage = (ctx: Context, data: { email?: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'account/signup', { title: 'Create an account', email: '', problem: null, ...data }, status);
  const signupVerifyPage = (ctx: Context, data: { email: string; full_name?: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'account/signup-verify', { title: 'Check your e-mail', full_name: '', problem: null, minutes: OTP_MINUTES, ...data }, status);

  mount(web, accountOperations.getSignup, async (ctx) => {
    if (await memberOf(s, ctx)) return doneTo(ctx, '/app');
    await signupPage(ctx, {});
  });

  mount(web, accountOperations.postSignup, async (ctx) => {
    publicForm(ctx);
    const email = emailOf(ctx, 'form');
    try {
      const input = validate<{ email: string }>(authSchemas.sendOtp, { email });
      await requestSignupOtp(authDeps(s), input.email, commandContext(s, ctx, null));
    } catch (err) {
      const problem = formProblem(err);
      return signupPage(ctx, { email, problem }, problem.status);
    }
    doneTo(ctx, `/signup/verify?email=${encodeURIComponent(email)}`, codeSent);
  });

  mount(web, accountOperations.getSignupVerify, async (ctx) => {
    await signupVerifyPage(ctx, { email: emailOf(ctx, 'query') });
  });

  mount(web, accountOperations.postSignupVerify, async (ctx) => {
    publicForm(ctx);
    const email = emailOf(ctx, 'form');
    const full_name = formField(ctx, 'full_name').trim().slice(0, 100);
    try {
      const input = validate<{ email: string; otp: string; password: string; full_name: string }>(authSchemas.verify, {
        email,
        otp: formField(ctx, 'otp').trim(),
        password: formField(ctx, 'password'),
        full_name,
      });
      memberSession.start(ctx, await completeSignup(s, ctx, input));
    } catch (err) {
      const problem = formProblem(err);
      if (problem.code === 'invalid_otp') problem.next = 'Check the code in the e-mail and type it again, or go back and ask for a new one.';
      return signupVerifyPage(ctx, { email, full_name, problem }, problem.status);
    }
    doneTo(ctx, '/app', `Welcome, ${full_name}. Your account is ready.`);
  });

  const forgotPage = (ctx: Context, data: { email?: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'account/forgot-password', { title: 'Forgotten password', email: '', problem: null, ...data }, status);
  const resetPage = (ctx: Context, data: { email: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'account/reset-password', { title: 'Choose a new password', problem: null, minutes: OTP_MINUTES, ...data }, status);

  mount(web, accountOperations.getForgotPassword, async (ctx) => {
    await forgotPage(ctx, {});
  });

  mount(web, accountOperations.postForgotPassword, async (ctx) => {
    publicForm(ctx);
    const email = emailOf(ctx, 'form');
    try {
      const input = validate<{ email: string }>(authSchemas.forgot, { email });
      await forgotPassword(authDeps(s), input.email, commandContext(s, ctx, null));
    } catch (err) {
      const problem = formProblem(err);
      return forgotPage(ctx, { email, problem }, problem.status);
    }
    doneTo(ctx, `/reset-password?email=${encodeURIComponent(email)}`, codeSent);
  });

  mount(web, accountOperations.getResetPassword, async (ctx) => {
    await resetPage(ctx, { email: emailOf(ctx, 'query') });
  });

  mount(web, accountOperations.postResetPassword, async (ctx) => {
    publicForm(ctx);
    const email = emailOf(ctx, 'form');
    try {
      const input = validate<{ email: string; code: string; new_password: string }>(authSchemas.reset, {
        email,
        code: formField(ctx, 'code').trim(),
        new_password: formField(ctx, 'new_password'),
      });
      await resetWithCode(s, ctx, input);
    } catch (err) {
      const problem = formProblem(err);
      if (problem.code === 'invalid_otp') problem.next = 'Check the code in the e-mail and type it again, or ask for a new one.';
      return resetPage(ctx, { email, problem }, problem.status);
    }
    // Every session of the account was revoked: this browser's too.
    memberSession.end(ctx);
    doneTo(ctx, '/signin', 'Your password was changed and every session was signed out. Sign in with the new password.');
  });

  router.use(web.routes());
}
