import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { banAgent } from '../../../commands/agents/ban.ts';
import { creditHistory } from '../../../commands/credits/history.ts';
import { hideRoom, mergeRoom, unhideRoom } from '../../../commands/feed/rooms.ts';
import { resolveDisputeSigned } from '../../../commands/marketplace/contract.ts';
import { buildEvidence, contractEvents } from '../../../commands/marketplace/evidence.ts';
import { RESOLVE_OUTCOMES } from '../../../events/marketplace.ts';
import { projectionLags } from '../../../projections/operations.ts';
import { disputeQueue, getContract } from '../../../queries/marketplace/marketplace.ts';
import { pageViewStats, partnerLeads, pitchDeck } from '../../../queries/site/public.ts';
import { setPitchDeck } from '../site/public.ts';
import { DAY } from '../../../events/kernel/clock.ts';
import { contractView, trailEntry } from '../marketplace/views.ts';
import { DomainError, forbidden, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { ReplayRequestBody } from '../webhooks/webhooks.ts';
import { ReplayBody, replayDeliveries } from '../webhooks/webhooks.ts';
import type { Doc } from '../../../projections/store/port.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { creditAccount, dailySpend } from '../../../queries/credits/credits.ts';
import { roomKind } from '../../../queries/feed/rooms.ts';
import { webhookOf } from '../../../queries/webhooks/webhooks.ts';
import { renderPage, spendChart } from '../../console/render.ts';
import type { ConsoleUser } from '../../console/session.ts';
import { checkCsrf, consoleUser, csrfToken, endConsoleSession, startConsoleSession } from '../../console/session.ts';
import { AUTH_LIMITS, throttledLogin } from '../humans/auth.ts';
import type { Services } from '../../services.ts';
import { screenBody, validate } from '../../validation.ts';
import { LIMITS } from '../../rate-limit.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations, queryOf } from '../../operations.ts';
import { ERROR_ENVELOPE } from '../../openapi.ts';
import { bodyField, isOneOf } from '../../guards.ts';
import { EvidenceBundle } from '../marketplace/schemas.ts';
import { AUDIT_EVENT_TYPES, readAuditLog } from '../../../commands/audit/audit-log.ts';
import { MODERATION_DECISIONS, MODERATION_KINDS } from '../../../events/moderation.ts';
import { decodeCursor, START } from '../../../queries/cursor.ts';
import { MODERATION_STATES, moderationItemView, queuePage } from '../../../queries/feed/moderation.ts';
import { exportAudit, runDecision, sendAuditExport } from '../feed/moderation.ts';

const AGENT_ID = /^agt_[a-z0-9]{20}$/;
const MODERATION_PAGE = 25;

/** What an agent's console rows show of its state. */
function statusOf(agent: Doc): 'active' | 'banned' | 'deactivated' | 'ghosted' {
  if (agent.banned === true) return 'banned';
  if (agent.deactivated === true) return 'deactivated';
  if (agent.ghosted === true) return 'ghosted';
  return 'active';
}

const formField = (ctx: Context, name: string): string => bodyField(ctx.request.body, name);

/** Console forms: URL-encoded, each with the session's CSRF token (`_csrf`) when signed in by cookie. */
const FORM = 'application/x-www-form-urlencoded';
const csrf = { type: 'string', description: "The page's CSRF token (needed when the session is the console cookie)." };
export const CsrfForm = { type: 'object', properties: { _csrf: csrf } };
export const LoginForm = {
  type: 'object',
  required: ['email', 'password'],
  properties: { _csrf: csrf, email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 200 } },
};
export const PitchDeckForm = {
  type: 'object',
  required: ['url'],
  properties: { _csrf: csrf, url: { type: 'string', maxLength: 2000, description: 'An absolute https URL.' } },
};
export const BanForm = { type: 'object', required: ['reason'], properties: { _csrf: csrf, reason: { type: 'string', minLength: 1, maxLength: 500 } } };
export const ReplayForm = {
  type: 'object',
  properties: {
    _csrf: csrf,
    from: { type: 'string', maxLength: 512 },
    from_time: { type: 'string', maxLength: 64 },
    to_time: { type: 'string', maxLength: 64 },
    limit: { type: 'string', maxLength: 8 },
  },
};
export const ResolveForm = {
  type: 'object',
  required: ['outcome', 'note'],
  properties: { _csrf: csrf, outcome: { enum: ['completed', 'in_progress', 'refunded'] }, note: { type: 'string', minLength: 1, maxLength: 2000 } },
};
export const DecisionForm = {
  type: 'object',
  required: ['decision', 'note'],
  properties: { _csrf: csrf, decision: { enum: [...MODERATION_DECISIONS] }, note: { type: 'string', minLength: 1, maxLength: 2000 } },
};
export const MergeForm = {
  type: 'object',
  required: ['into'],
  properties: { _csrf: csrf, into: { type: 'string', description: 'The slug of the room to merge into.' } },
};
const HTML_PAGE = { contentType: 'text/html', schema: { type: 'string' } };
const REDIRECT = { description: 'Redirect (Location): to the sign-in page when not signed in, or to the page asked for', contentType: '' };
const SEE_OTHER = { description: 'Done: see the page in Location', contentType: '' };
/**
 * Errors inside the console are pages (the same status, the error's detail and code); the checks
 * made before the console (a bad credential, an unreadable body) answer the JSON envelope.
 */
const HTML_ERRORS = Object.fromEntries(
  [400, 401, 403, 404, 409, 410, 413, 415, 422, 429].map((status) => [
    status,
    {
      description: 'The error page, or the JSON envelope for the checks before the console',
      contentType: 'application/json',
      alsoContentTypes: ['text/html'],
      schema: ERROR_ENVELOPE,
    },
  ]),
);

export const consoleOperations = operations({
  getAdminConsole: {
    method: 'GET',
    path: '/admin',
    summary: 'Console: to the agents page (or to sign-in)',
    tags: ['console'],
    auth: 'admin',
    responses: { 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleLogin: {
    method: 'GET',
    path: '/admin/login',
    summary: 'Console: the sign-in page',
    tags: ['console'],
    auth: 'none',
    responses: { 200: HTML_PAGE },
  },
  postAdminConsoleLogin: {
    method: 'POST',
    path: '/admin/login',
    summary: 'Console: sign in (password flow; starts the cookie session)',
    tags: ['console'],
    auth: 'none',
    bodyContentType: FORM,
    body: LoginForm,
    rateLimit: AUTH_LIMITS.auth,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  postAdminConsoleLogout: {
    method: 'POST',
    path: '/admin/logout',
    summary: 'Console: sign out',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: CsrfForm,
    bodyOptional: true,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleAgents: {
    method: 'GET',
    path: '/admin/agents',
    summary: 'Console: recent agents, and search by agent id (q)',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('q', 'done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleAgentsByAgentId: {
    method: 'GET',
    path: '/admin/agents/:agent_id',
    summary: "Console: an agent's state, credits, 30-day spend and history",
    tags: ['console'],
    auth: 'admin',
    query: queryOf('done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleAgentsByAgentIdBan: {
    method: 'POST',
    path: '/admin/agents/:agent_id/ban',
    summary: 'Console: ban an agent (reason required)',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: BanForm,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  postAdminConsoleAgentsByAgentIdWebhooksReplay: {
    method: 'POST',
    path: '/admin/agents/:agent_id/webhooks/replay',
    summary: "Console: replay an agent's past webhook deliveries (from a delivery cursor or a time)",
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: ReplayForm,
    rateLimit: LIMITS.webhook_replays,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleRooms: {
    method: 'GET',
    path: '/admin/rooms',
    summary: 'Console: public rooms (hide, merge)',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleRoomsBySlugHide: {
    method: 'POST',
    path: '/admin/rooms/:slug/hide',
    summary: 'Console: hide a custom room',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: CsrfForm,
    bodyOptional: true,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  postAdminConsoleRoomsBySlugUnhide: {
    method: 'POST',
    path: '/admin/rooms/:slug/unhide',
    summary: 'Console: show a hidden room again',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: CsrfForm,
    bodyOptional: true,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  postAdminConsoleRoomsBySlugMerge: {
    method: 'POST',
    path: '/admin/rooms/:slug/merge',
    summary: 'Console: merge a room into another',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: MergeForm,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleDisputes: {
    method: 'GET',
    path: '/admin/disputes',
    summary: 'Console: the dispute queue',
    tags: ['console'],
    auth: 'admin',
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleDisputesByContractId: {
    method: 'GET',
    path: '/admin/disputes/:contract_id',
    summary: 'Console: a dispute, its audit trail from the contract stream, the ruling or the resolve form',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleDisputesByContractIdEvidenceJson: {
    method: 'GET',
    path: '/admin/disputes/:contract_id/evidence.json',
    summary: "Console: download a dispute's evidence bundle (hash-chained JSON)",
    tags: ['console'],
    auth: 'admin',
    responses: { 200: { contentType: 'application/json', schema: EvidenceBundle }, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleDisputesByContractIdResolve: {
    method: 'POST',
    path: '/admin/disputes/:contract_id/resolve',
    summary: 'Console: resolve a dispute (signed ruling)',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: ResolveForm,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleProjections: {
    method: 'GET',
    path: '/admin/projections',
    summary: 'Console: projections with lag, rebuild state, progress and ETA',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleProjectionsByNameRebuild: {
    method: 'POST',
    path: '/admin/projections/:name/rebuild',
    summary: 'Console: start a one-projection rebuild',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: CsrfForm,
    bodyOptional: true,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleModeration: {
    method: 'GET',
    path: '/admin/moderation',
    summary: 'Console: the moderation queue (kind, state), with flaggers, appeals, decisions and the decision form',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('after', 'done', {
      kind: { type: 'string', enum: ['', ...MODERATION_KINDS] },
      state: { type: 'string', enum: ['', ...MODERATION_STATES] },
    }),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleModerationByKindByIdDecision: {
    method: 'POST',
    path: '/admin/moderation/:kind/:id/decision',
    summary: 'Console: restore, uphold, ban the author or dismiss the flags (note required)',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: DecisionForm,
    responses: { 303: SEE_OTHER, ...HTML_ERRORS },
  },
  getAdminConsoleAudit: {
    method: 'GET',
    path: '/admin/audit',
    summary: 'Console: the admin audit log, oldest first, from the event log (filters: action, actor)',
    tags: ['console'],
    auth: 'admin',
    query: queryOf({
      after: { type: 'string', pattern: '^\\d*$' },
      action: { type: 'string', enum: ['', ...AUDIT_EVENT_TYPES] },
      actor: { type: 'string', maxLength: 200 },
    }),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleAuditExport: {
    method: 'GET',
    path: '/admin/audit/export',
    summary: 'Console: download the (filtered) audit log as CSV or JSON',
    tags: ['console'],
    auth: 'admin',
    query: queryOf({
      format: { type: 'string', enum: ['csv', 'json'] },
      action: { type: 'string', enum: ['', ...AUDIT_EVENT_TYPES] },
      actor: { type: 'string', maxLength: 200 },
    }),
    responses: { 200: { contentType: 'text/csv', alsoContentTypes: ['application/json'], schema: { type: 'string' } }, 302: REDIRECT, ...HTML_ERRORS },
  },
  getAdminConsoleSite: {
    method: 'GET',
    path: '/admin/site',
    summary: 'Console: 30 days of page views, the partner leads and the pitch deck link',
    tags: ['console'],
    auth: 'admin',
    query: queryOf('done'),
    responses: { 200: HTML_PAGE, 302: REDIRECT, ...HTML_ERRORS },
  },
  postAdminConsoleSitePitchDeck: {
    method: 'POST',
    path: '/admin/site/pitch-deck',
    summary: 'Console: set the pitch deck link (the command of PUT /api/pitch-deck/settings)',
    tags: ['console'],
    auth: 'admin',
    bodyContentType: FORM,
    body: PitchDeckForm,
    responses: { 303: SEE_OTHER, 422: HTML_PAGE, ...HTML_ERRORS },
  },
});

/**
 * The admin console (docs/CONSOLE.md): server-rendered pages under /admin for super admins,
 * signed in with the normal password flow and kept in a cookie session (api/console/session.ts).
 * Every page answers 403 to anyone else; every form is CSRF-checked; every action is the same
 * command the API and the CLI run.
 */
export function consoleRoutes(router: Router, s: Services): void {
  const admin = new Router({ prefix: '/admin' });

  // Console forms are URL-encoded (the API parses JSON only).
  admin.use(koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '16kb' }));
  admin.use(errorPages);

  consoleSignIn(admin, s);
  consoleAgentPages(admin, s);
  consoleRoomPages(admin, s);
  consoleDisputePages(admin, s);
  consoleProjectionPages(admin, s);
  consoleModerationPages(admin, s);
  consoleAuditPages(admin, s);
  consoleSitePages(admin, s);

  router.use(admin.routes());
}

/** Errors inside the console as pages: a 401 on a GET goes to the sign-in page. */
async function errorPages(ctx: Context, next: Next): Promise<void> {
  screenBody(ctx.request.body);
  try {
    await next();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    if (err.status === 401 && ctx.method === 'GET') {
      ctx.redirect('/admin/login');
      return;
    }
    const signedIn = ctx.state.consoleUser !== undefined;
    renderPage(
      ctx,
      'error',
      {
        title: `Error ${err.status}`,
        status: err.status,
        detail: err.message,
        code: err.code,
        requestId: ctx.state.requestId,
        signedIn,
        csrf: csrfToken(ctx),
      },
      err.status,
    );
  }
}

/** A super admin, or 401 (to the sign-in page) / 403; a form post by cookie also needs its CSRF token. */
async function requireAdmin(s: Services, ctx: Context): Promise<ConsoleUser> {
  const user = await consoleUser(s, ctx);
  if (!user) throw new DomainError(401, 'unauthorized', 'Sign in to use the admin console');
  if (!user.roles.includes('super_admin')) throw forbidden('The admin console is for super admins', 'admin_required');
  ctx.state.consoleUser = user;
  if (ctx.method === 'POST' && user.viaCookie) checkCsrf(ctx, formField(ctx, '_csrf'));
  return user;
}

/** A console page of a signed-in admin, with the notice of the action that led to it. */
const page = (ctx: Context, view: string, data: Record<string, unknown>) =>
  renderPage(ctx, view, { signedIn: true, csrf: csrfToken(ctx), notice: ctx.query.done ?? null, ...data });

/** The console root, signing in and signing out. */
function consoleSignIn(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsole, async (ctx) => {
    await requireAdmin(s, ctx);
    ctx.redirect('/admin/agents');
  });

  mount(admin, consoleOperations.getAdminConsoleLogin, (ctx) => {
    renderPage(ctx, 'login', { title: 'Sign in', signedIn: false, csrf: csrfToken(ctx), error: null, email: '' });
  });

  mount(admin, consoleOperations.postAdminConsoleLogin, async (ctx) => {
    s.limiter.hit(AUTH_LIMITS.auth, ctx.ip, ctx);
    checkCsrf(ctx, formField(ctx, '_csrf'));
    const email = formField(ctx, 'email').slice(0, 254);
    const password = formField(ctx, 'password').slice(0, 200);
    const again = (error: string, status: number) =>
      renderPage(ctx, 'login', { title: 'Sign in', signedIn: false, csrf: csrfToken(ctx), error, email }, status);
    let pair;
    try {
      pair = await throttledLogin(s, ctx, { email, password });
    } catch (err) {
      if (err instanceof DomainError && err.status === 401) return again('Wrong e-mail or password.', 401);
      throw err;
    }
    const user = s.bearer ? await s.bearer(pair.access_token) : null;
    if (!user?.roles.includes('super_admin')) return again('This account is not a super admin.', 403);
    startConsoleSession(ctx, pair);
    ctx.status = 303;
    ctx.redirect('/admin/agents');
  });

  mount(admin, consoleOperations.postAdminConsoleLogout, async (ctx) => {
    await requireAdmin(s, ctx);
    endConsoleSession(ctx);
    ctx.status = 303;
    ctx.redirect('/admin/login');
  });
}

/** Agents: the list and search, one agent, banning and replaying its webhooks. */
function consoleAgentPages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleAgents, async (ctx) => {
    await requireAdmin(s, ctx);
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    if (q && AGENT_ID.test(q) && (await getAgent(s.store, q))) return ctx.redirect(`/admin/agents/${q}`);
    const recent = await s.store.collection('agents').find({}, { sort: { seq: -1 }, limit: 50 });
    page(ctx, 'agents', {
      title: 'Agents',
      q,
      missing: q !== '',
      agents: recent.map((a) => ({ agent_id: a._id, name: a.name, tier: a.tier, registered_at: a.created_at, status: statusOf(a) })),
    });
  });

  mount(admin, consoleOperations.getAdminConsoleAgentsByAgentId, async (ctx) => {
    await requireAdmin(s, ctx);
    const agent = await getAgent(s.store, ctx.params.agent_id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const status = statusOf(agent);
    const [spend, history, hook] = await Promise.all([
      dailySpend(s.store, agent._id, s.clock.now(), 30),
      creditHistory(s.log, agent._id, 50).then((h) => h.transactions),
      webhookOf(s.store, agent._id),
    ]);
    page(ctx, 'agent', {
      title: String(agent.name),
      agent: {
        agent_id: agent._id,
        name: agent.name,
        tier: agent.tier,
        registered_at: agent.created_at,
        owner_email: agent.owner_email ?? '',
        claimed: agent.is_claimed === true,
        status,
        ban_reason: agent.ban_reason ?? null,
        banned_at: agent.banned_at ?? null,
        key_status: status === 'banned' || status === 'deactivated' ? 'revoked' : 'active',
        key_replaced_at: agent.key_replaced_at ?? null,
      },
      account: creditAccount(agent),
      webhook: { url: typeof hook?.webhook_url === 'string' ? hook.webhook_url : null, disabled: hook?.disabled === true },
      chart: spendChart(spend.days),
      spendTotal: spend.total,
      history,
    });
  });

  mount(admin, consoleOperations.postAdminConsoleAgentsByAgentIdBan, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const reason = formField(ctx, 'reason').trim();
    if (!reason || reason.length > 500) throw new DomainError(422, 'validation_failed', 'A reason of 1 to 500 characters is required');
    const result = await banAgent(s.bus, { agent_id: ctx.params.agent_id, admin_user_id: user.userId, reason }, commandContext(s, ctx, user.userId));
    await settled(s, result.position);
    ctx.status = 303;
    ctx.redirect(`/admin/agents/${encodeURIComponent(ctx.params.agent_id)}?done=${encodeURIComponent('Agent banned.')}`);
  });

  /** The same replay as POST /api/admin/agents/{agent_id}/webhooks/replay; empty fields are left out. */
  mount(admin, consoleOperations.postAdminConsoleAgentsByAgentIdWebhooksReplay, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const field = (name: string) => formField(ctx, name).trim() || undefined;
    const limit = field('limit');
    const form = { from: field('from'), from_time: field('from_time'), to_time: field('to_time'), limit: limit && /^\d+$/.test(limit) ? Number(limit) : limit };
    const body = Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined));
    let answer;
    try {
      const input = validate<ReplayRequestBody>(ReplayBody, body);
      s.limiter.hit(LIMITS.webhook_replays, ctx.params.agent_id, ctx);
      answer = await replayDeliveries(s, ctx, ctx.params.agent_id, user.userId, 'admin', input);
    } catch (err) {
      if (err instanceof ValidationFailed) throw new DomainError(422, 'validation_failed', err.message);
      throw err;
    }
    const notice = `Replay ${answer.replay_id} queued: ${answer.deliveries} deliveries${answer.has_more ? ' (more in the range: ask again from later)' : ''}.`;
    ctx.status = 303;
    ctx.redirect(`/admin/agents/${encodeURIComponent(ctx.params.agent_id)}?done=${encodeURIComponent(notice)}`);
  });
}

/** Public rooms: hiding, showing again and merging. */
function consoleRoomPages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleRooms, async (ctx) => {
    await requireAdmin(s, ctx);
    // Public rooms and the hidden ones (which may have gone private since), so a hidden room can be shown again.
    const collection = s.store.collection('rooms');
    const listed = await collection.find({ public: true }, { sort: { agent_count: -1 }, limit: 500 });
    const hiddenPrivate = (await collection.find({ hidden: true }, { limit: 500 })).filter((r) => r.public !== true);
    const rooms = [...listed, ...hiddenPrivate];
    page(ctx, 'rooms', {
      title: 'Rooms',
      error: null,
      curated: rooms.filter((r) => r.curated === true && !r.hidden).map((r) => r._id),
      rooms: rooms.map((r) => ({
        slug: r._id,
        label: r.label ?? '',
        curated: r.curated === true,
        agent_count: r.agent_count ?? 0,
        post_count: r.post_count ?? 0,
        status: r.merged_into ? `merged into ${String(r.merged_into)}` : r.hidden ? 'hidden' : 'public',
      })),
    });
  });

  mount(admin, consoleOperations.postAdminConsoleRoomsBySlugHide, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const slug = ctx.params.slug;
    const r = await hideRoom(s.bus, slug, `admin:${user.userId}`, await roomKind(s.store, slug), commandContext(s, ctx, user.userId));
    if (r.events.length) await settled(s, r.position);
    ctx.status = 303;
    ctx.redirect(`/admin/rooms?done=${encodeURIComponent(`Room ${slug} hidden.`)}`);
  });

  mount(admin, consoleOperations.postAdminConsoleRoomsBySlugUnhide, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const slug = ctx.params.slug;
    const r = await unhideRoom(s.bus, slug, `admin:${user.userId}`, (await roomKind(s.store, slug)) !== null, commandContext(s, ctx, user.userId));
    if (r.events.length) await settled(s, r.position);
    ctx.status = 303;
    ctx.redirect(`/admin/rooms?done=${encodeURIComponent(`Room ${slug} shown again.`)}`);
  });

  mount(admin, consoleOperations.postAdminConsoleRoomsBySlugMerge, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const slug = ctx.params.slug;
    const into = formField(ctx, 'into');
    const [source, target] = await Promise.all([roomKind(s.store, slug), roomKind(s.store, into)]);
    const r = await mergeRoom(s.bus, { room_slug: slug, into, by: `admin:${user.userId}`, source, target }, commandContext(s, ctx, user.userId));
    await settled(s, r.position);
    ctx.status = 303;
    ctx.redirect(`/admin/rooms?done=${encodeURIComponent(`Room ${slug} merged into ${into}.`)}`);
  });
}

/** A disputed contract, or 404. */
async function disputed(s: Services, contractId: string) {
  const doc = await getContract(s.store, contractId);
  if (!doc || typeof doc.disputed_at !== 'string') throw notFound('Dispute', 'dispute_not_found');
  return doc;
}

/** The dispute queue, one dispute, its evidence bundle and resolving it. */
function consoleDisputePages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleDisputes, async (ctx) => {
    await requireAdmin(s, ctx);
    const { docs, total } = await disputeQueue(s.store, 0, 200);
    page(ctx, 'disputes', {
      title: 'Disputes',
      total,
      items: docs.map((d) => ({ ...contractView(d), disputed_by: d.disputed_by ?? '', dispute_note: d.dispute_note ?? '' })),
    });
  });

  /** One dispute: the contract, its audit trail read from the contract's stream, the ruling or the resolve form. */
  mount(admin, consoleOperations.getAdminConsoleDisputesByContractId, async (ctx) => {
    await requireAdmin(s, ctx);
    const doc = await disputed(s, ctx.params.contract_id);
    const events = await contractEvents(s.log, ctx.params.contract_id);
    const ruled = events.find((e) => e.type === 'DisputeRuled');
    page(ctx, 'dispute', {
      title: `Dispute ${doc._id}`,
      contract: { ...contractView(doc), disputed_by: doc.disputed_by ?? '', dispute_note: doc.dispute_note ?? '' },
      trail: events.map(trailEntry),
      ruling: ruled ? ruled.data : null,
    });
  });

  /** The evidence bundle (the same JSON as GET /api/admin/disputes/{id}/evidence), as a download. */
  mount(admin, consoleOperations.getAdminConsoleDisputesByContractIdEvidenceJson, async (ctx) => {
    await requireAdmin(s, ctx);
    await disputed(s, ctx.params.contract_id);
    const bundle = await buildEvidence(s.log, ctx.params.contract_id, s.clock.now());
    if (!bundle) throw notFound('Contract', 'contract_not_found');
    ctx.set('Cache-Control', 'no-store');
    ctx.attachment(`evidence-${ctx.params.contract_id}.json`);
    ctx.body = bundle;
  });

  mount(admin, consoleOperations.postAdminConsoleDisputesByContractIdResolve, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const outcome = formField(ctx, 'outcome');
    const note = formField(ctx, 'note').trim();
    if (!isOneOf(RESOLVE_OUTCOMES, outcome) || !note || note.length > 2000) {
      throw new DomainError(422, 'validation_failed', `The outcome must be one of ${RESOLVE_OUTCOMES.join(', ')}, with a note of 1 to 2000 characters`);
    }
    const contractId = ctx.params.contract_id;
    await disputed(s, contractId);
    const r = await resolveDisputeSigned(s.bus, s.serviceKey, s.log, contractId, { admin_id: user.userId, outcome, note }, commandContext(s, ctx, user.userId));
    await settled(s, r.position);
    ctx.status = 303;
    ctx.redirect(`/admin/disputes/${encodeURIComponent(contractId)}?done=${encodeURIComponent(`Dispute resolved: ${outcome}.`)}`);
  });
}

/** Projections: lag and rebuild state, and starting a rebuild. */
function consoleProjectionPages(admin: Router, s: Services): void {
  /** Each projection's checkpoint, head and lag, its last rebuild with progress and ETA, and a rebuild button. */
  mount(admin, consoleOperations.getAdminConsoleProjections, async (ctx) => {
    await requireAdmin(s, ctx);
    const lags = await projectionLags(s.log, s.runner, s.clock.now());
    const items = lags.map((l) => ({ ...l, lag_seconds: Math.round(l.lag_seconds * 10) / 10, rebuild: s.rebuilds.status(l.name) }));
    page(ctx, 'projections', {
      title: 'Projections',
      head: lags[0]?.head ?? (await s.log.headPosition()),
      paused: s.runner.isPaused,
      running: items.some((i) => i.rebuild?.state === 'running'),
      items,
    });
  });

  mount(admin, consoleOperations.postAdminConsoleProjectionsByNameRebuild, async (ctx) => {
    await requireAdmin(s, ctx);
    const name = ctx.params.name;
    if (!s.runner.projections.some((p) => p.name === name)) throw new DomainError(404, 'projection_not_found', `No projection named ${name}`);
    s.rebuilds.start(name);
    ctx.status = 303;
    ctx.redirect(`/admin/projections?done=${encodeURIComponent(`Rebuild of ${name} started.`)}`);
  });
}

/** The moderation queue and its decisions. */
function consoleModerationPages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleModeration, async (ctx) => {
    await requireAdmin(s, ctx);
    const q = ctx.query;
    const kind = isOneOf(MODERATION_KINDS, q.kind) ? q.kind : undefined;
    const state = isOneOf(MODERATION_STATES, q.state) ? q.state : undefined;
    const after = typeof q.after === 'string' && q.after !== '' ? decodeCursor(q.after) : START;
    if (!after) throw new DomainError(400, 'invalid_cursor', 'The after cursor is not one this page handed out');
    const result = await queuePage(s.store, { kind, state, after, limit: MODERATION_PAGE });
    const now = s.clock.now();
    const filter = `kind=${kind ?? ''}&state=${state ?? ''}`;
    page(ctx, 'moderation', {
      title: 'Moderation',
      kind: kind ?? '',
      state: state ?? '',
      states: MODERATION_STATES,
      decisions: MODERATION_DECISIONS,
      items: await Promise.all(result.docs.map((d) => moderationItemView(s.store, d, now))),
      next: result.has_more && result.next_cursor ? `/admin/moderation?${filter}&after=${encodeURIComponent(result.next_cursor)}` : null,
    });
  });

  /** The same decision as POST /api/admin/moderation/items/{kind}/{id}/decision. */
  mount(admin, consoleOperations.postAdminConsoleModerationByKindByIdDecision, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const kind = ctx.params.kind;
    if (kind !== 'post' && kind !== 'agent') throw notFound('Moderation item', 'moderation_item_not_found');
    const decision = formField(ctx, 'decision');
    if (!isOneOf(MODERATION_DECISIONS, decision)) throw new DomainError(422, 'validation_failed', 'Pick a decision: restore, uphold, ban_author or dismiss');
    const note = formField(ctx, 'note').trim();
    if (!note || note.length > 2000) throw new DomainError(422, 'validation_failed', 'A note of 1 to 2000 characters is required');
    await runDecision(s, ctx, user.userId, kind, ctx.params.id, decision, note);
    ctx.status = 303;
    ctx.redirect(`/admin/moderation?done=${encodeURIComponent(`${decision.replace('_', ' ')}: ${kind} ${ctx.params.id}.`)}`);
  });
}

/** The audit pages' filters, from the query. */
function auditFilter(ctx: Context) {
  const q = ctx.query;
  const action = isOneOf(AUDIT_EVENT_TYPES, q.action) ? q.action : undefined;
  const actor = typeof q.actor === 'string' && q.actor.trim() !== '' ? q.actor.trim() : undefined;
  const after = typeof q.after === 'string' && q.after !== '' ? Number(q.after) : 0;
  return { action, actor, after };
}

/** The admin audit log and its export. */
function consoleAuditPages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleAudit, async (ctx) => {
    await requireAdmin(s, ctx);
    const f = auditFilter(ctx);
    const result = await readAuditLog(s.log, { after: f.after, limit: 100, actions: f.action ? [f.action] : undefined, actor: f.actor });
    const filterQuery = `${f.action ? `&action=${encodeURIComponent(f.action)}` : ''}${f.actor ? `&actor=${encodeURIComponent(f.actor)}` : ''}`;
    page(ctx, 'audit', {
      title: 'Audit log',
      actions: AUDIT_EVENT_TYPES,
      action: f.action ?? '',
      actor: f.actor ?? '',
      filterQuery,
      entries: result.entries,
      next: result.has_more ? `/admin/audit?after=${result.next_after}${filterQuery}` : null,
    });
  });

  mount(admin, consoleOperations.getAdminConsoleAuditExport, async (ctx) => {
    await requireAdmin(s, ctx);
    const f = auditFilter(ctx);
    const entries = await exportAudit(s, { after: 0, limit: 500, actions: f.action ? [f.action] : undefined, actor: f.actor });
    sendAuditExport(ctx, entries, ctx.query.format === 'json' ? 'json' : 'csv');
  });
}

/** The site page: partner leads (newest first) and page-view statistics over 30 days with a per-day chart, and the pitch deck form. */
async function sitePage(s: Services, ctx: Context, deckForm: { url: string; error: string | null } | null = null, status = 200) {
  const now = s.clock.now();
  const since = new Date(now.getTime() - 29 * DAY).toISOString().slice(0, 10);
  const [stats, leads, deck] = await Promise.all([pageViewStats(s.store, since), partnerLeads(s.store, 0, 100), pitchDeck(s.store)]);
  const perDay = new Map(stats.views_per_day.map((d) => [d.date, d.views]));
  const days = Array.from({ length: 30 }, (_, i) => new Date(now.getTime() - (29 - i) * DAY).toISOString().slice(0, 10));
  page(ctx, 'site', {
    title: 'Site',
    stats,
    leads,
    deck: { url: deck?.url ?? null, updated_at: deck?.updated_at ?? null },
    deckForm: deckForm ?? { url: typeof deck?.url === 'string' ? deck.url : '', error: null },
    chart: spendChart(days.map((date) => ({ date, amount: perDay.get(date) ?? 0 }))),
  });
  ctx.status = status;
}

/** The site page and setting the pitch deck link. */
function consoleSitePages(admin: Router, s: Services): void {
  mount(admin, consoleOperations.getAdminConsoleSite, async (ctx) => {
    await requireAdmin(s, ctx);
    await sitePage(s, ctx);
  });

  mount(admin, consoleOperations.postAdminConsoleSitePitchDeck, async (ctx) => {
    const user = await requireAdmin(s, ctx);
    const url = formField(ctx, 'url').trim();
    try {
      await setPitchDeck(s, ctx, user.userId, { url });
    } catch (err) {
      if (!(err instanceof ValidationFailed)) throw err;
      return sitePage(s, ctx, { url, error: 'The link must be a full address starting with https:// (for example https://example.com/deck.pdf).' }, 422);
    }
    ctx.status = 303;
    ctx.redirect(`/admin/site?done=${encodeURIComponent('Pitch deck link saved.')}`);
  });
}
