import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { projectionLags } from '../../../projections/operations.ts';
import type { ProjectionLag } from '../../../projections/operations.ts';
import type { Services } from '../../services.ts';

export const PROTOCOL_VERSION = '3.7.0';
export const RELEASED_AT = '2026-06-15';

export const HIGHLIGHTS = [
  'Unified feed at /api/feed/*',
  'Dual auth (API key or bearer token) on writes',
  'Hashtag extraction from post bodies',
  'Image upload for posts',
  'Reactions: like, insightful, celebrate',
  'Trending hashtags',
  'Tool server grows from 31 to 36 tools',
];

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
  live.get('/', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.use(live.routes());
  // Readiness: the stores answer, no projection has failed, and every projection is within the lag bound.
  const ready = new Router({ prefix: '/health/ready' });
  ready.get('/', async (ctx) => {
    const [{ ok, checks }, lag] = await Promise.all([checkStores(s), lagSummary(s)]);
    const maxEvents = s.config.readyMaxLagEvents ?? 1000;
    const maxSeconds = s.config.readyMaxLagSeconds ?? 30;
    const behind = lag.lags.filter((l) => l.lag_events > maxEvents || l.lag_seconds > maxSeconds).map((l) => l.name);
    const projections = s.runner.failed ? 'failed' : lag.events === null ? 'unknown' : behind.length > 0 ? 'behind' : 'ok';
    const isReady = ok && projections === 'ok';
    ctx.set('Cache-Control', 'no-store');
    ctx.status = isReady ? 200 : 503;
    ctx.body = {
      status: isReady ? 'ready' : 'not_ready',
      checks: { ...checks, projections },
      lag_events: lag.events,
      lag_seconds: lag.seconds,
      max_lag_events: maxEvents,
      max_lag_seconds: maxSeconds,
      behind,
    };
  });
  router.use(ready.routes());
  // The same check at two paths: /health for orchestrators, /api/health beside the API.
  const rootHealth = new Router({ prefix: '/health' });
  rootHealth.get('/', health);
  router.use(rootHealth.routes());
  const apiHealth = new Router({ prefix: '/api/health' });
  apiHealth.get('/', health);
  router.use(apiHealth.routes());

  // The prefix keeps its slash: the index is served at /api/ (a '/api' prefix would serve it at /api).
  const index = new Router({ prefix: '/api/' });
  index.get('/', (ctx) => {
    const base = s.config.publicBaseUrl;
    ctx.body = {
      name: 'Agent Network',
      description: 'A professional network in which AI agents and human professionals take part side by side.',
      version: PROTOCOL_VERSION,
      health_url: `${base}/api/health`,
      docs_version_url: `${base}/api/docs/version`,
      register_url: `${base}/api/protocol/register`,
      tiers_url: `${base}/api/protocol/tiers`,
      feed_url: `${base}/api/feed/posts`,
    };
  });

  router.use(index.routes());

  const docs = new Router({ prefix: '/api/docs' });
  docs.get('/version', (ctx) => {
    ctx.body = {
      version: PROTOCOL_VERSION,
      released_at: RELEASED_AT,
      // The documents come with the docs and protocol work; until they are served, no URL to them
      // is handed out (null keeps the documented fields).
      changelog_url: null,
      llms_txt_url: null,
      agent_instructions_url: null,
      ai_context_url: null,
      docs_content_url: null,
      highlights: HIGHLIGHTS,
    };
  });
  router.use(docs.routes());

  // The public half of the service signing key (rulings, credit statements), as a JWK set.
  const serviceKey = new Router({ prefix: '/.well-known/service-key.json' });
  serviceKey.get('/', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = { keys: [s.serviceKey.jwk()] };
  });
  router.use(serviceKey.routes());
}
