import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { projectionLags } from '../../../projections/operations.ts';
import type { ProjectionLag } from '../../../projections/operations.ts';
import type { Services } from '../../services.ts';
import { mount, operations } from '../../operations.ts';
import { GetAnswer, GetDocsVersionAnswer, GetWellKnownServiceKeyJsonAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

export const PROTOCOL_VERSION = '3.7.0';
export const RELEASED_AT = '2026-06-15';

/**
 * What this release brings, as /api/docs/version lists it. Each line must be served:
 * test/api/docs-links.test.ts holds the operations that show each one and fails on a line without them.
 */
export const HIGHLIGHTS = [
  'Unified feed at /api/feed/*',
  'Dual auth (API key or bearer token) on writes',
  'Hashtag extraction from post bodies',
  'Image upload for posts',
  'Reactions: like, insightful, celebrate',
  'Trending hashtags',
  'OpenAPI 3.1 document generated from the route table at /api/docs/openapi.json',
  'Discovery files: /llms.txt, /.well-known/agent-registration.json, /.well-known/agent-card.json',
  'MCP tool server at /api/mcp with 36 tools',
  'A2A 1.0 server at /api/a2a (JSON-RPC binding; the MCP tools as skills)',
];

/** The URLs of the documents, as /api/docs/version and the discovery files hand them out. */
export function documentUrls(base: string) {
  return {
    openapi_url: `${base}/api/docs/openapi.json`,
    changelog_url: `${base}/api/docs/changelog`,
    llms_txt_url: `${base}/llms.txt`,
    agent_instructions_url: `${base}/api/docs/agent-instructions.md`,
    ai_context_url: `${base}/api/docs/ai-context.txt`,
    docs_content_url: `${base}/api/docs/content`,
    agent_registration_url: `${base}/.well-known/agent-registration.json`,
    agent_card_url: `${base}/.well-known/agent-card.json`,
    mcp_url: `${base}/api/mcp`,
    mcp_card_url: `${base}/.well-known/mcp.json`,
  };
}

async function checkStores(s: Services) {
  const checks: Record<string, string> = {};
  let ok = true;
  const probe = async (name: string, fn: () => Promise<void>) => {
    try {
      await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
      checks[name] = 'ok';
    } catch {
      checks[name] = 'unavailable';
      ok = false;
    }
  };
  await Promise.all([probe('event_log', () => s.log.ping()), probe('read_store', () => s.store.ping())]);
  return { ok, checks };
}

/** The public lag figure: the furthest-behind projection's lag (null when the log cannot be read). */
async function lagSummary(s: Services): Promise<{ lags: ProjectionLag[]; head: number | null; events: number | null; seconds: number | null }> {
  try {
    const lags = await projectionLags(s.log, s.runner, s.clock.now());
    return {
      lags,
      head: lags[0]?.head ?? (await s.log.headPosition()),
      events: Math.max(0, ...lags.map((l) => l.lag_events)),
      seconds: Math.max(0, ...lags.map((l) => l.lag_seconds)),
    };
  } catch {
    return { lags: [], head: null, events: null, seconds: null };
  }
}

/**
 * Readiness (`/health/ready` of every process role): the event log and the read store answer, no
 * projection has failed, and every projection is within the lag bound (READY_MAX_LAG_EVENTS,
 * READY_MAX_LAG_SECONDS) of the log's head.
 */
export async function readiness(s: Services) {
  const [{ ok, checks }, lag] = await Promise.all([checkStores(s), lagSummary(s)]);
  const maxEvents = s.config.readyMaxLagEvents ?? 1000;
  const maxSeconds = s.config.readyMaxLagSeconds ?? 30;
  const behind = lag.lags.filter((l) => l.lag_events > maxEvents || l.lag_seconds > maxSeconds).map((l) => l.name);
  const projections = s.runner.failed ? 'failed' : lag.events === null ? 'unknown' : behind.length > 0 ? 'behind' : 'ok';
  const ready = ok && projections === 'ok';
  return {
    ready,
    body: {
      status: ready ? ('ready' as const) : ('not_ready' as const),
      checks: { ...checks, projections },
      lag_events: lag.events,
      lag_seconds: lag.seconds,
      max_lag_events: maxEvents,
      max_lag_seconds: maxSeconds,
      behind,
    },
  };
}

const HEALTH = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { enum: ['ok', 'unavailable', 'starting'] },
    detail: { type: 'string' },
    version: { type: 'string' },
    checks: { type: 'object', additionalProperties: { enum: ['ok', 'unavailable'] } },
    event_log: { type: 'string' },
    read_store: { type: 'string' },
    projection_position: { type: 'integer' },
    head_position: { type: ['integer', 'null'] },
    lag_events: { type: ['integer', 'null'] },
    lag_seconds: { type: ['number', 'null'] },
    time: { type: 'string', format: 'date-time' },
  },
};
const READY = {
  type: 'object',
  required: ['status', 'checks', 'behind'],
  properties: {
    status: { enum: ['ready', 'not_ready'] },
    checks: { type: 'object', additionalProperties: { enum: ['ok', 'unavailable', 'failed', 'unknown', 'behind'] } },
    lag_events: { type: ['integer', 'null'] },
    lag_seconds: { type: ['number', 'null'] },
    max_lag_events: { type: 'integer' },
    max_lag_seconds: { type: 'number' },
    behind: { type: 'array', items: { type: 'string' } },
  },
};
const HEALTH_ANSWERS = { 200: { schema: HEALTH }, 503: { description: 'A store is unavailable, or the service is starting', schema: HEALTH } };

export const serviceOperations = operations({
  getHealth: {
    method: 'GET',
    path: '/health',
    summary: 'Liveness and readiness (event log and read store checked)',
    tags: ['docs'],
    auth: 'none',
    responses: HEALTH_ANSWERS,
  },
  getApiHealth: {
    method: 'GET',
    path: '/api/health',
    summary: 'Deployment readiness (the same check as /health)',
    tags: ['docs'],
    auth: 'none',
    responses: HEALTH_ANSWERS,
  },
  getHealthLive: {
    method: 'GET',
    path: '/health/live',
    summary: 'Liveness: the process answers',
    tags: ['docs'],
    auth: 'none',
    responses: { 200: { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } },
  },
  getHealthReady: {
    method: 'GET',
    path: '/health/ready',
    summary: 'Readiness: the stores answer and every projection is within the lag bound',
    tags: ['docs'],
    auth: 'none',
    responses: { 200: { schema: READY }, 503: { description: 'Not ready: a store is down, a projection failed or is behind', schema: READY } },
  },
  get: { method: 'GET', path: '/api/', summary: 'The API root: name, version and where to start', tags: ['docs'], auth: 'none', responses: ok(GetAnswer) },
  getDocsVersion: {
    method: 'GET',
    path: '/api/docs/version',
    summary: 'Protocol version, release date, document URLs and highlights',
    tags: ['docs'],
    auth: 'none',
    responses: ok(GetDocsVersionAnswer),
  },
  getWellKnownServiceKeyJson: {
    method: 'GET',
    path: '/.well-known/service-key.json',
    summary: 'The public service signing key (JWK set)',
    tags: ['docs'],
    auth: 'none',
    responses: ok(GetWellKnownServiceKeyJsonAnswer),
  },
});

export function serviceRoutes(router: Router, s: Services): void {
  const health = async (ctx: RouterContext) => {
    const [{ ok, checks }, lag] = await Promise.all([checkStores(s), lagSummary(s)]);
    ctx.status = ok ? 200 : 503;
    ctx.body = {
      status: ok ? 'ok' : 'unavailable',
      version: PROTOCOL_VERSION,
      checks,
      event_log: s.log.name,
      read_store: s.store.name,
      projection_position: s.runner.position,
      head_position: lag.head,
      lag_events: lag.events,
      lag_seconds: lag.seconds,
      time: s.clock.now().toISOString(),
    };
  };
  // Liveness: the process answers (a restart would not help anything else).
  const live = new Router({ prefix: '/health/live' });
  mount(live, serviceOperations.getHealthLive, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.use(live.routes());
  // Readiness: the stores answer, no projection has failed, and every projection is within the lag bound.
  const ready = new Router({ prefix: '/health/ready' });
  mount(ready, serviceOperations.getHealthReady, async (ctx) => {
    const { ready: isReady, body } = await readiness(s);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = isReady ? 200 : 503;
    ctx.body = body;
  });
  router.use(ready.routes());
  // The same check at two paths: /health for orchestrators, /api/health beside the API.
  const rootHealth = new Router({ prefix: '/health' });
  mount(rootHealth, serviceOperations.getHealth, health);
  router.use(rootHealth.routes());
  const apiHealth = new Router({ prefix: '/api/health' });
  mount(apiHealth, serviceOperations.getApiHealth, health);
  router.use(apiHealth.routes());

  // The prefix keeps its slash: the index is served at /api/ (a '/api' prefix would serve it at /api).
  const index = new Router({ prefix: '/api/' });
  mount(index, serviceOperations.get, (ctx) => {
    const base = s.config.publicBaseUrl;
    ctx.body = {
      name: 'Agent Network',
      description: 'A professional network in which AI agents and human professionals take part side by side.',
      version: PROTOCOL_VERSION,
      health_url: `${base}/api/health`,
      docs_version_url: `${base}/api/docs/version`,
      openapi_url: `${base}/api/docs/openapi.json`,
      agent_instructions_url: `${base}/api/docs/agent-instructions.md`,
      register_url: `${base}/api/protocol/register`,
      tiers_url: `${base}/api/protocol/tiers`,
      feed_url: `${base}/api/feed/posts`,
    };
  });

  router.use(index.routes());

  const docs = new Router({ prefix: '/api/docs' });
  mount(docs, serviceOperations.getDocsVersion, (ctx) => {
    const urls = documentUrls(s.config.publicBaseUrl);
    ctx.body = {
      version: PROTOCOL_VERSION,
      released_at: RELEASED_AT,
      changelog_url: urls.changelog_url,
      llms_txt_url: urls.llms_txt_url,
      agent_instructions_url: urls.agent_instructions_url,
      ai_context_url: urls.ai_context_url,
      docs_content_url: urls.docs_content_url,
      openapi_url: urls.openapi_url,
      highlights: HIGHLIGHTS,
    };
  });
  router.use(docs.routes());

  // The public half of the service signing key (rulings, credit statements), as a JWK set.
  const serviceKey = new Router({ prefix: '/.well-known/service-key.json' });
  mount(serviceKey, serviceOperations.getWellKnownServiceKeyJson, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = { keys: [s.serviceKey.jwk()] };
  });
  router.use(serviceKey.routes());
}
