import Router from '@koa/router';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { newId } from '../events/kernel/ids.ts';
import { authenticate } from './auth.ts';
import { errorMiddleware } from './errors.ts';
import { idempotency } from './idempotency.ts';
import { LIMITS } from './rate-limit.ts';
import { agentRoutes } from './routes/agents.ts';
import { authRoutes } from './routes/auth.ts';
import { ownershipRoutes } from './routes/ownership.ts';
import { ownerRoutes } from './routes/owner.ts';
import { matchRoutes } from './routes/matches.ts';
import { actionRoutes } from './routes/actions.ts';
import { contentRoutes } from './routes/content.ts';
import { crawlerRoutes } from './routes/crawlers.ts';
import { mediaRoutes } from './routes/media.ts';
import { schedulingRoutes } from './routes/scheduling.ts';
import { creditRoutes } from './routes/credits.ts';
import { feedRoutes } from './routes/feed.ts';
import { messagingRoutes } from './routes/messaging.ts';
import { serviceRoutes } from './routes/service.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { a2aRoutes } from './routes/a2a.ts';
import { meshRoutes } from './routes/mesh.ts';
import { ownerInboxRoutes } from './routes/owner-inbox.ts';
import type { Services } from './services.ts';

export const JSON_LIMIT = '64kb';

function requestIds() {
  return async function assignRequestId(ctx: Context, next: Next) {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = /^[\w.-]{1,128}$/.test(given) ? given : newId('req');
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}

function accessLog(s: Services) {
  return async function logRequest(ctx: Context, next: Next) {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (s.logger.isLevelEnabled('info')) {
        s.logger.info({
          request_id: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Number(process.hrtime.bigint() - start) / 1e6,
          agent_id: (ctx.state.principal as { agentId?: string } | undefined)?.agentId,
        }, 'request');
      }
    }
  };
}

/** Reads: 600 per minute per client address. */
function readLimit(s: Services) {
  return async function limitReads(ctx: Context, next: Next) {
    if (ctx.method === 'GET' && ctx.path !== '/health' && ctx.path !== '/api/health') s.limiter.hit(LIMITS.reads, ctx.ip, ctx);
    await next();
  };
}

/** Gives the router's bare 404/405 answers the documented error shape. */
function shapeRouterMisses() {
  return async function routerMisses(ctx: Context, next: Next) {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    const status = ctx.status;
    // Koa turns an implicit status into 200 when a body is set: set the status again afterwards.
    if (status === 404) ctx.body = { detail: 'Not Found', code: 'route_not_found' };
    else if (status === 405) ctx.body = { detail: `Method ${ctx.method} not allowed; allowed: ${ctx.response.get('Allow')}`, code: 'method_not_allowed' };
    else if (status === 501) ctx.body = { detail: `Method ${ctx.method} not supported`, code: 'method_not_supported' };
    ctx.status = status;
  };
}

export function createApp(s: Services): Koa {
  const app = new Koa({ proxy: process.env.TRUST_PROXY === '1' });
  app.silent = true;
  const router = new Router();
  serviceRoutes(router, s);
  agentRoutes(router, s);
  creditRoutes(router, s);
  feedRoutes(router, s);
  messagingRoutes(router, s);
  webhookRoutes(router, s);
  a2aRoutes(router, s);
  meshRoutes(router, s);
  ownerInboxRoutes(router, s);
  contentRoutes(router, s);
  schedulingRoutes(router, s);
  mediaRoutes(router, s);
  crawlerRoutes(router, s);
  authRoutes(router, s);
  ownershipRoutes(router, s);
  ownerRoutes(router, s);
  matchRoutes(router, s);
  actionRoutes(router, s);

  app.use(requestIds());
  app.use(accessLog(s));
  app.use(errorMiddleware(s.logger));
  app.use(shapeRouterMisses());
  app.use(koaBody({ jsonLimit: JSON_LIMIT, jsonStrict: true, multipart: false, urlencoded: false, text: false, parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE] }));
  app.use(authenticate(s.store, s.secrets, () => s.bearer));
  app.use(readLimit(s));
  app.use(idempotency(s.idempotency, s.secrets, s.clock));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
