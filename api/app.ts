import { assetOperations, assetRoutes } from './routes/web/assets.ts';
import { communityPageOperations, communityPageRoutes } from './routes/web/communities.ts';
import { accountOperations, accountRoutes } from './routes/web/account.ts';
import { conversationOperations, conversationRoutes } from './routes/web/conversations.ts';
import { agentPageOperations, agentPageRoutes } from './routes/web/agent.ts';
import { siteOperations, siteRoutes } from './routes/web/site.ts';
import { myAgentOperations, myAgentRoutes } from './routes/web/my-agents.ts';
import { myProfileOperations, myProfileRoutes } from './routes/web/my-profile.ts';
import { circleModerationOperations, circleModerationRoutes } from './routes/communities/moderation.ts';
import { moderationOperations, moderationRoutes } from './routes/feed/moderation.ts';
import Router from '@koa/router';
import type { IncomingMessage } from 'node:http';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { newId } from '../events/kernel/ids.ts';
import { refuseAnonymousAsOf } from './as-of.ts';
import { authenticate } from './auth.ts';
import { metricsEndpoint, routeOf } from './metrics.ts';
import { errorBody, renderError } from './errors.ts';
import { RememberedAnswers, carriesNoCredentials, conditionalGet, corsFor } from './http-cache.ts';
import { idempotency } from './idempotency.ts';
import { creditMeter } from './credit-meter.ts';
import { LIMITS, setHeaders } from './rate-limit.ts';
import { screenBody } from './validation.ts';
import { agentRoutes, agentOperations } from './routes/agents/agents.ts';
import { matchingRoutes, matchingOperations } from './routes/matching/matching.ts';
import { AUTH_LIMITS, authRoutes, authOperations } from './routes/humans/auth.ts';
import { ownershipRoutes, ownershipOperations } from './routes/humans/ownership.ts';
import { ownerRoutes, ownerOperations } from './routes/humans/owner.ts';
import { matchRoutes, matchOperations } from './routes/humans/matches.ts';
import { discoveryRoutes, discoveryOperations } from './routes/social/discovery.ts';
import { socialGraphRoutes, socialGraphOperations } from './routes/social/graph.ts';
import { memberRoutes, memberOperations } from './routes/social/members.ts';
import { federationRoutes, federationOperations } from './routes/federation/federation.ts';
import { actionRoutes, actionOperations } from './routes/agents/actions.ts';
import { contentRoutes, contentOperations } from './routes/feed/content.ts';
import { crawlerRoutes, crawlerOperations } from './routes/site/crawlers.ts';
import { mediaRoutes, mediaOperations } from './routes/feed/media.ts';
import { schedulingRoutes, schedulingOperations } from './routes/feed/scheduling.ts';
import { creditRoutes, creditOperations } from './routes/credits/credits.ts';
import { feedRoutes, feedOperations } from './routes/feed/posts.ts';
import { messagingRoutes, messagingOperations } from './routes/messaging/dms.ts';
import { serviceRoutes, serviceOperations } from './routes/docs/service.ts';
import { documentOperations, documentRoutes } from './routes/docs/documents.ts';
import { webhookRoutes, webhookOperations } from './routes/webhooks/webhooks.ts';
import { a2aRoutes, a2aOperations } from './routes/messaging/a2a.ts';
import { meshRoutes, meshOperations } from './routes/messaging/mesh.ts';
import { ownerInboxRoutes, ownerInboxOperations } from './routes/humans/owner-inbox.ts';
import type { MountedOperations, Operation } from './operations.ts';
import { collectOperations } from './operations.ts';
import { OperationTable } from './dispatch.ts';
import { adminAgentOperations, adminAgentRoutes } from './routes/agents/admin.ts';
import { consoleOperations, consoleRoutes } from './routes/console/console.ts';
import { cookieKeys } from './console/session.ts';
import { contractOperations, contractRoutes } from './routes/marketplace/contracts.ts';
import { disputeOperations, disputeRoutes } from './routes/marketplace/disputes.ts';
import { marketplaceOperations, marketplaceRoutes } from './routes/marketplace/listings.ts';
import { communityAdminOperations, communityAdminRoutes } from './routes/communities/community-admin.ts';
import { circleOperations, circleRoutes } from './routes/communities/circles.ts';
import { pageOperations, pageRoutes } from './routes/site/pages.ts';
import { publicSiteOperations, publicSiteRoutes } from './routes/site/public.ts';
import { billingOperations, billingRoutes } from './routes/credits/billing.ts';
import { adminCreditOperations, adminCreditRoutes } from './routes/credits/admin.ts';
import { MCP_PATH, mcpOperations, mcpRoutes } from './routes/mcp/mcp.ts';
import { A2A_PATH, a2aServerOperations, a2aServerRoutes } from './routes/a2a/a2a.ts';
import { adminProjectionOperations, adminProjectionRoutes } from './routes/admin/projections.ts';
import type { Services } from './services.ts';
import { frameGuard } from './page-security.ts';

export const JSON_LIMIT = '64kb';

const REQUEST_ID = /^[\w.-]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when it is well-formed, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
}
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The outermost layer, one async frame for what used to be four: the request id, the access log,
 * the error renderer (every error becomes {detail, code, request_id}) and the documented
 * shape of the router's bare 404/405/501 answers.
 */
function front(s: Services) {
  const { logger } = s;
  return async function frontMiddleware(ctx: Context, next: Next) {
    const requestId = requestIdOf(ctx.req);
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const logging = logger.isLevelEnabled('info');
    const start = performance.now();
    s.foreground.enter();
    try {
      await next();
      shapeRouterMisses(ctx);
    } catch (err) {
      renderError(ctx, err, logger);
    } finally {
      s.foreground.leave();
      frameGuard(ctx);
      limitHeaders(s, ctx);
      const ms = performance.now() - start;
      s.metrics.observeRequest(ctx.method, routeOf(ctx), ctx.status, ms / 1000);
      if (logging) {
        logger.info(
          {
            request_id: requestId,
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms,
            agent_id: ctx.state.principal?.agentId,
          },
          'request',
        );
      }
    }
  };
}

/** Health probes and the metrics scrape: never rate limited. */
const PROBES = new Set(['/health', '/api/health', '/health/live', '/health/ready', '/metrics']);
const isProbe = (path: string) => PROBES.has(path);

/** Counts a read: 600 per minute per client address (probes are not counted). */
function limitRead(s: Services, ctx: Context): void {
  if (ctx.method === 'GET' && s.limiter.scale !== 0 && !isProbe(ctx.path)) s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
}

/** Resolves the caller, then counts reads in the same frame. */
function authenticateAndLimitReads(s: Services) {
  const auth = authenticate(s.store, s.secrets, () => s.bearer);
  return function authenticateThenLimit(ctx: Context, next: Next) {
    return auth(ctx, () => {
      limitRead(s, ctx);
      return next();
    });
  };
}

/**
 * A repeated anonymous read is answered right behind the front layer, counted like any read:
 * a GET or HEAD without credentials has no body to parse, no principal and no idempotency key,
 * so the layers in between would only pass it on.
 */
function rememberedReads(s: Services, answers: RememberedAnswers) {
  return function answerRemembered(ctx: Context, next: Next) {
    const hit = (ctx.method === 'GET' || ctx.method === 'HEAD') && carriesNoCredentials(ctx) ? answers.find(ctx) : undefined;
    if (hit === undefined) return next();
    limitRead(s, ctx);
    answers.answer(ctx, hit);
  };
}

/**
 * Rate-limit headers on every answer, errors (401, 422, ...) and idempotent replays included: an
 * answer that passed no limiter (it failed before one, or was replayed) shows, without counting,
 * the window that applies to its caller: writes per agent for an agent, otherwise reads or
 * auth requests per client address.
 */
function limitHeaders(s: Services, ctx: Context): void {
  if (s.limiter.scale === 0 || ctx.response.get('RateLimit-Limit') || isProbe(ctx.path)) return;
  const agentId = ctx.state.principal?.agentId;
  const status =
    ctx.method === 'GET' || ctx.method === 'HEAD'
      ? s.limiter.status(LIMITS.reads, ctx.ip)
      : agentId
        ? s.limiter.status(LIMITS.writes, agentId)
        : s.limiter.status(AUTH_LIMITS.auth, ctx.ip);
  setHeaders(ctx, status);
}

/** Gives the router's bare 404/405 answers the documented error shape. */
function shapeRouterMisses(ctx: Context): void {
  if (ctx.body !== undefined && ctx.body !== null) return;
  const status = ctx.status;
  // Koa turns an implicit status into 200 when a body is set: set the status again afterwards.
  const requestId = ctx.state.requestId;
  if (status === 404) ctx.body = errorBody(requestId, 'route_not_found', 'Not Found');
  else if (status === 405) ctx.body = errorBody(requestId, 'method_not_allowed', `Method ${ctx.method} not allowed; allowed: ${ctx.response.get('Allow')}`);
  else if (status === 501) ctx.body = errorBody(requestId, 'method_not_supported', `Method ${ctx.method} not supported`);
  ctx.status = status;
}

/**
 * Body parsing: koa-body takes strict JSON (an object or an array) up to JSON_LIMIT on the methods
 * that carry a body, and every parsed body is screened (api/validation.ts `screenBody`) before a
 * route sees it. test/api/body-parsing.test.ts checks the answers, errors included.
 */
export function bodyParser() {
  const parse = koaBody({
    jsonLimit: JSON_LIMIT,
    jsonStrict: true,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return function parseBody(ctx: Context, next: Next) {
    // The tool servers (MCP, A2A) read their own bodies: base64 image uploads need more than JSON_LIMIT.
    if (!PARSED_METHODS.has(ctx.method) || ctx.path === MCP_PATH || ctx.path === A2A_PATH) return next();
    return parse(ctx, () => {
      screenBody(ctx.request.body);
      return next();
    });
  };
}

/**
 * Every route module, in registration order (order matters where paths overlap), with its file:
 * docs/ROUTES.md, generated from this list (`npm run routes`), maps every full path to its file.
 */
export const ROUTE_MODULES: ReadonlyArray<readonly [file: string, register: (router: Router, s: Services) => void, operations: Record<string, Operation>]> = [
  ['api/routes/docs/service.ts', serviceRoutes, serviceOperations],
  ['api/routes/docs/documents.ts', (router, s) => documentRoutes(router, s, allOperations), documentOperations],
  ['api/routes/matching/matching.ts', matchingRoutes, matchingOperations],
  ['api/routes/agents/agents.ts', agentRoutes, agentOperations],
  ['api/routes/credits/credits.ts', creditRoutes, creditOperations],
  ['api/routes/credits/billing.ts', billingRoutes, billingOperations],
  ['api/routes/credits/admin.ts', adminCreditRoutes, adminCreditOperations],
  ['api/routes/feed/posts.ts', feedRoutes, feedOperations],
  ['api/routes/messaging/dms.ts', messagingRoutes, messagingOperations],
  ['api/routes/webhooks/webhooks.ts', webhookRoutes, webhookOperations],
  ['api/routes/messaging/a2a.ts', a2aRoutes, a2aOperations],
  ['api/routes/messaging/mesh.ts', meshRoutes, meshOperations],
  ['api/routes/humans/owner-inbox.ts', ownerInboxRoutes, ownerInboxOperations],
  ['api/routes/feed/content.ts', contentRoutes, contentOperations],
  ['api/routes/feed/moderation.ts', moderationRoutes, moderationOperations],
  ['api/routes/feed/scheduling.ts', schedulingRoutes, schedulingOperations],
  ['api/routes/feed/media.ts', mediaRoutes, mediaOperations],
  ['api/routes/site/crawlers.ts', crawlerRoutes, crawlerOperations],
  ['api/routes/humans/auth.ts', authRoutes, authOperations],
  ['api/routes/humans/ownership.ts', ownershipRoutes, ownershipOperations],
  ['api/routes/humans/owner.ts', ownerRoutes, ownerOperations],
  ['api/routes/humans/matches.ts', matchRoutes, matchOperations],
  ['api/routes/social/graph.ts', socialGraphRoutes, socialGraphOperations],
  ['api/routes/social/discovery.ts', discoveryRoutes, discoveryOperations],
  ['api/routes/social/members.ts', memberRoutes, memberOperations],
  ['api/routes/federation/federation.ts', federationRoutes, federationOperations],
  ['api/routes/agents/actions.ts', actionRoutes, actionOperations],
  ['api/routes/agents/admin.ts', adminAgentRoutes, adminAgentOperations],
  ['api/routes/console/console.ts', consoleRoutes, consoleOperations],
  ['api/routes/mcp/mcp.ts', mcpRoutes, mcpOperations],
  ['api/routes/a2a/a2a.ts', a2aServerRoutes, a2aServerOperations],
  ['api/routes/admin/projections.ts', adminProjectionRoutes, adminProjectionOperations],
  ['api/routes/marketplace/listings.ts', marketplaceRoutes, marketplaceOperations],
  ['api/routes/marketplace/contracts.ts', contractRoutes, contractOperations],
  ['api/routes/marketplace/disputes.ts', disputeRoutes, disputeOperations],
  ['api/routes/communities/community-admin.ts', communityAdminRoutes, communityAdminOperations],
  ['api/routes/communities/moderation.ts', circleModerationRoutes, circleModerationOperations],
  ['api/routes/communities/circles.ts', circleRoutes, circleOperations],
  ['api/routes/site/pages.ts', pageRoutes, pageOperations],
  ['api/routes/site/public.ts', publicSiteRoutes, publicSiteOperations],
  ['api/routes/web/assets.ts', assetRoutes, assetOperations],
  ['api/routes/web/account.ts', accountRoutes, accountOperations],
  ['api/routes/web/conversations.ts', conversationRoutes, conversationOperations],
  ['api/routes/web/agent.ts', agentPageRoutes, agentPageOperations],
  ['api/routes/web/site.ts', siteRoutes, siteOperations],
  ['api/routes/web/communities.ts', communityPageRoutes, communityPageOperations],
  ['api/routes/web/my-agents.ts', myAgentRoutes, myAgentOperations],
  ['api/routes/web/my-profile.ts', myProfileRoutes, myProfileOperations],
];

/** The route table: every operation of every route module, in registration order. */
export function allOperations(): Operation[] {
  return ROUTE_MODULES.flatMap(([, , ops]) => Object.values(ops));
}

/** The root router with every route module registered, and the operations they mounted (for `callOperation`). */
export function mountAll(s: Services): { router: Router; operations: MountedOperations } {
  const router = new Router();
  const operations = collectOperations(() => {
    for (const [, register] of ROUTE_MODULES) register(router, s);
  });
  return { router, operations };
}

/** The root router with every route module registered. */
export function routerFor(s: Services): Router {
  return mountAll(s).router;
}

export function createApp(s: Services): Koa {
  const app = new Koa({ proxy: s.config.trustProxy === true });
  app.silent = true;
  // Signed cookies of the admin console's session.
  app.keys = cookieKeys(s);
  const { router, operations } = mountAll(s);
  // What every mounted operation counts its rate limits on, and what `callOperation` runs (api/operations.ts).
  app.context.limiter = s.limiter;
  app.context.operations = operations;

  // Outermost, so that error answers carry the CORS headers too, and preflights end here.
  const corsMiddleware = corsFor(s.config.corsOrigins);
  if (corsMiddleware) app.use(corsMiddleware);
  const answers = new RememberedAnswers(() => s.runner.position);
  app.use(front(s));
  app.use(metricsEndpoint(s.metrics, s.config.metricsToken ?? null));
  app.use(rememberedReads(s, answers));
  app.use(bodyParser());
  app.use(authenticateAndLimitReads(s));
  app.use(refuseAnonymousAsOf(allOperations()));
  app.use(creditMeter(s.logger));
  app.use(idempotency(s.idempotency, s.secrets, s.clock));
  app.use(conditionalGet(answers));
  // The API operations by one radix-tree lookup; pages and everything else through the router.
  app.use(new OperationTable(operations).middleware());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
