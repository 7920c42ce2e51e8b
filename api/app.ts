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
import bourne from '@hapi/bourne';
import type { IncomingMessage } from 'node:http';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { newId } from '../events/kernel/ids.ts';
import { refuseAnonymousAsOf } from './as-of.ts';
import { authenticate } from './auth.ts';
import { memoizeMatches } from './route-match.ts';
import type { RouteLayer } from './route-match.ts';
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
import type { Operation } from './operations.ts';
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
/** JSON_LIMIT in bytes, as koa-body reads it. */
const JSON_LIMIT_BYTES = 64 * 1024;

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
            agent_id: (ctx.state.principal as { agentId?: string } | undefined)?.agentId,
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
  const agentId = (ctx.state.principal as { agentId?: string | null } | undefined)?.agentId;
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
  const requestId = ctx.state.requestId as string;
  if (status === 404) ctx.body = errorBody(requestId, 'route_not_found', 'Not Found');
  else if (status === 405) ctx.body = errorBody(requestId, 'method_not_allowed', `Method ${ctx.method} not allowed; allowed: ${ctx.response.get('Allow')}`);
  else if (status === 501) ctx.body = errorBody(requestId, 'method_not_supported', `Method ${ctx.method} not supported`);
  ctx.status = status;
}

// The same test co-body (under koa-body) applies: a strict JSON body is an object or an array.
const STRICT_JSON = /^[ \t\n\r]*(\[|\{)/;
/** Parses a strict JSON body exactly as koa-body does (co-body's steps, with @hapi/bourne). */
function parseStrictJson(text: string): unknown {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // the decoder under co-body strips a BOM
  if (!text) return {};
  try {
    if (!STRICT_JSON.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    // A `__proto__` key anywhere is refused, as co-body refuses it.
    return bourne.parse(text, { protoAction: 'error' });
  } catch (err) {
    throw Object.assign(err as Error, { status: 400, body: text });
  }
}

function readBody(req: IncomingMessage, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (status: number, message: string, type: string) => {
      cleanup();
      reject(Object.assign(new Error(message), { status, statusCode: status, expose: true, type }));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > length) {
        req.pause();
        fail(
          received > JSON_LIMIT_BYTES ? 413 : 400,
          received > JSON_LIMIT_BYTES ? 'request entity too large' : 'request size did not match content length',
          received > JSON_LIMIT_BYTES ? 'entity.too.large' : 'request.size.invalid',
        );
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (received !== length) fail(400, 'request size did not match content length', 'request.size.invalid');
      else resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(Object.assign(err, { status: 400, expose: true, type: 'request.aborted' }));
    };
    const onClose = () => fail(400, 'request aborted', 'request.aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Body parsing. The common case, an identity-encoded `application/json` (utf-8) body with a
 * Content-Length within the limit, is read and parsed here directly; everything else (other JSON
 * media types, charsets, content encodings, chunked bodies, oversized declarations) goes through
 * koa-body as before. test/api/body-parsing.test.ts checks that every answer, errors included,
 * is the one koa-body alone gives.
 */
export function bodyParser() {
  const general = koaBody({
    jsonLimit: JSON_LIMIT,
    jsonStrict: true,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async function parseBody(ctx: Context, next: Next) {
    // The tool servers (MCP, A2A) read their own bodies: base64 image uploads need more than JSON_LIMIT.
    if (!PARSED_METHODS.has(ctx.method) || ctx.path === MCP_PATH || ctx.path === A2A_PATH) return next();
    const headers = ctx.req.headers;
    const type = headers['content-type'];
    const declared = headers['content-length'];
    if (
      type !== undefined &&
      declared !== undefined &&
      headers['content-encoding'] === undefined &&
      headers['transfer-encoding'] === undefined &&
      /^\d{1,6}$/.test(declared) &&
      Number(declared) <= JSON_LIMIT_BYTES &&
      isPlainJsonType(type)
    ) {
      const req = ctx.req;
      const length = Number(declared);
      // The body of a small request usually arrives with its headers: one microtask later the
      // parser has buffered all of it, and it is taken in one read instead of stream events.
      if (req.readableLength < length) await undefined;
      let text: string;
      if (length === 0) text = '';
      else if (req.readableLength === length) text = (req.read() as Buffer).toString('utf8');
      else text = await readBody(req, length);
      const parsed = parseStrictJson(text);
      screenBody(parsed);
      (ctx.request as { body?: unknown }).body = parsed;
      return next();
    }
    return general(ctx, () => {
      screenBody((ctx.request as { body?: unknown }).body);
      return next();
    });
  };
}

function isPlainJsonType(type: string): boolean {
  if (type.length === 16) return type === 'application/json' || type.toLowerCase() === 'application/json';
  const t = type.toLowerCase().replace(/\s+/g, '');
  return t === 'application/json;charset=utf-8' || t === 'application/json;charset=utf8';
}

/**
 * The router's dispatch for the common case, one route with one handler matching method and
 * path: it sets the same context fields as @koa/router's own middleware (matched, router,
 * routeMatched, captures, params, routerPath, routerName, _matchedRoute, _matchedRouteName) and
 * calls the handler, without the router's per-request debug calls, host check and composed
 * middleware chain. Anything else (no route, several layers or handlers, a host-bound router)
 * goes through the router's own middleware.
 */
function routes(router: Router) {
  const general = router.routes() as unknown as (ctx: Context, next: Next) => unknown;
  const remembered = memoizeMatches(router);
  const opts = (router as unknown as { opts: { routerPath?: string } }).opts;
  return function dispatchRoute(ctx: Context, next: Next) {
    const c = ctx as Context & Record<string, unknown>;
    const path = opts.routerPath || (c.newRouterPath as string | undefined) || ctx.path || (c.routerPath as string | undefined) || '';
    const found = (router as unknown as { host?: unknown }).host ? null : remembered(path, ctx.method);
    if (!found || !found.route || found.pathAndMethod.length !== 1 || found.pathAndMethod[0].stack.length !== 1) return general(ctx, next);
    const layer = found.pathAndMethod[0];
    c.matched = Array.isArray(c.matched) ? [...(c.matched as RouteLayer[]), ...found.path] : found.path.slice();
    c.router = router;
    c.routeMatched = true;
    const captures = layer.captures(path);
    c.captures = captures;
    const params = layer.params(path, captures || [], c.params as Record<string, string> | undefined);
    (ctx.request as unknown as { params: Record<string, string> }).params = params;
    c.params = params;
    c.routerPath = layer.path;
    c.routerName = layer.name || undefined;
    c._matchedRoute = layer.path;
    if (layer.name) c._matchedRouteName = layer.name;
    try {
      return Promise.resolve(layer.stack[0](ctx, next));
    } catch (err) {
      return Promise.reject(err);
    }
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

/** The root router with every route module registered. */
export function routerFor(s: Services): Router {
  const router = new Router();
  for (const [, register] of ROUTE_MODULES) register(router, s);
  return router;
}

export function createApp(s: Services): Koa {
  const app = new Koa({ proxy: s.config.trustProxy === true });
  app.silent = true;
  // Signed cookies of the admin console's session.
  app.keys = cookieKeys(s);
  const router = routerFor(s);

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
  app.use(routes(router));
  app.use(router.allowedMethods());
  return app;
}
