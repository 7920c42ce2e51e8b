// Prometheus metrics of one service instance (its own prom-client Registry, so that several
// services in one process, as in the tests, never mix). Hot paths only count: a request records
// one histogram observation through a cached child; appends are counted by the event log's
// observer; projection lag and the job queue are read when /metrics is scraped.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Agenda, Job } from 'agenda';
import type { Context, Next } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BoundedCache } from '../events/kernel/cache.ts';
import { chargeOf } from '../events/types.ts';
import type { EventLog, EventLogObserver, NewEvent } from '../events/store/port.ts';
import type { ProjectionLag } from '../projections/operations.ts';
import { errorBody } from './errors.ts';
import { isRecord } from './guards.ts';

/** Label of requests no route matched (the raw path is never a label: unbounded cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

interface Child {
  observe(value: number): void;
}

export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Histogram<'method' | 'route' | 'status'>;
  /** Histogram children by method, status and route: bounded by the route table, capped should a bug make it grow. */
  readonly #children = new BoundedCache<string, Child>({ max: 5000 });
  readonly #append: Histogram<'outcome'>;
  readonly #groupCommit: Histogram;
  readonly #webhooks: Counter<'outcome'>;
  readonly #credits: Counter<'action'>;
  readonly #refunds: Counter<'action'>;
  readonly #jobFailures: Counter<'job'>;
  #agenda: Agenda | null = null;
  #backlog: (() => Record<string, number>) | null = null;

  /** The log's write observer: append latency, group-commit sizes, and what the written events say (credits, webhook outcomes). */
  readonly logObserver: EventLogObserver;

  constructor(lags: () => Promise<ProjectionLag[]>, options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.#requests = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route template (the router layer path) and status: latency, and count (_count)',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#append = new Histogram({
      name: 'event_log_append_duration_seconds',
      help: 'Event-log appends from the call to durable (or refused), by outcome (written, duplicate, conflict, failed)',
      labelNames: ['outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.#groupCommit = new Histogram({
      name: 'event_log_group_commit_appends',
      help: 'Appends committed together in one write transaction (one fsync) of the event log',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    });
    this.#webhooks = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts (replayed ones included) recorded by this process, by outcome (delivered, failed, gone, refused, given_up)',
      labelNames: ['outcome'],
      registers,
    });
    this.#credits = new Counter({
      name: 'credits_spent_total',
      help: 'Credits charged by the writes of this process, by action',
      labelNames: ['action'],
      registers,
    });
    this.#refunds = new Counter({
      name: 'credits_refunded_total',
      help: 'Credits refunded (charges with a negative amount) by the writes of this process, by action',
      labelNames: ['action'],
      registers,
    });
    this.#jobFailures = new Counter({
      name: 'agenda_job_failures_total',
      help: 'Agenda jobs that failed, by job name',
      labelNames: ['job'],
      registers,
    });
    scrapedGauges(registers, { agenda: () => this.#agenda, backlog: () => this.#backlog, lags });
    this.logObserver = logObserverOf({
      append: this.#append,
      groupCommit: this.#groupCommit,
      webhooks: this.#webhooks,
      credits: this.#credits,
      refunds: this.#refunds,
    });
  }

  /** Watches a log's writes. */
  watchLog(log: EventLog): void {
    log.observer = this.logObserver;
  }

  /** Reports the job scheduler's queue and counts its failures, and the workers' in-process backlog. */
  watchAgenda(agenda: Agenda, backlog?: () => Record<string, number>): void {
    this.#agenda = agenda;
    this.#backlog = backlog ?? null;
    agenda.on('fail', (_err: Error, job: Job) => this.#jobFailures.labels(job.attrs.name).inc());
  }

  /** Records one answered request; `route` is the matched layer's path template. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let child = this.#children.get(key);
    if (child === undefined) {
      child = this.#requests.labels(method, route, String(status));
      this.#children.set(key, child);
    }
    child.observe(seconds);
  }
}

/** The gauges read when /metrics is scraped: the job queue, the workers' backlog, projection lag and the log's head. */
function scrapedGauges(
  registers: Registry[],
  sources: { agenda: () => Agenda | null; backlog: () => (() => Record<string, number>) | null; lags: () => Promise<ProjectionLag[]> },
): void {
  new Gauge({
    name: 'agenda_jobs',
    help: "Agenda jobs of this process's scheduler by state: queued (due, waiting for a slot), running, locked",
    labelNames: ['state'],
    registers,
    async collect() {
      const a = sources.agenda();
      if (!a) return;
      const stats = await a.getRunningStats();
      const n = (v: number | unknown[]) => (Array.isArray(v) ? v.length : v);
      this.set({ state: 'queued' }, n(stats.queuedJobs));
      this.set({ state: 'running' }, n(stats.runningJobs));
      this.set({ state: 'locked' }, n(stats.lockedJobs));
    },
  });
  new Gauge({
    name: 'worker_backlog',
    help: "In-process work this process's workers were handed and have not finished, by worker: contract_mails (transitions whose lifecycle mails are being queued), mail (first delivery attempts)",
    labelNames: ['worker'],
    registers,
    collect() {
      const b = sources.backlog();
      if (!b) return;
      for (const [worker, n] of Object.entries(b())) this.set({ worker }, n);
    },
  });
  // One read of the lags per scrape, shared by the gauges below.
  let pending: Promise<ProjectionLag[]> | null = null;
  const lagsOnce = () => {
    pending ??= sources.lags().finally(() => setImmediate(() => (pending = null)));
    return pending;
  };
  new Gauge({
    name: 'projection_lag_events',
    help: 'Events in the log after the projection checkpoint (head minus checkpoint)',
    labelNames: ['projection'],
    registers,
    async collect() {
      this.reset();
      for (const l of await lagsOnce()) this.set({ projection: l.name }, l.lag_events);
    },
  });
  new Gauge({
    name: 'projection_lag_seconds',
    help: 'Age of the oldest event the projection has not applied yet (0 when caught up)',
    labelNames: ['projection'],
    registers,
    async collect() {
      this.reset();
      for (const l of await lagsOnce()) this.set({ projection: l.name }, l.lag_seconds);
    },
  });
  new Gauge({
    name: 'projection_checkpoint_position',
    help: 'Log position up to which the projection has applied events',
    labelNames: ['projection'],
    registers,
    async collect() {
      this.reset();
      for (const l of await lagsOnce()) this.set({ projection: l.name }, l.checkpoint);
    },
  });
  new Gauge({
    name: 'event_log_head_position',
    help: 'Position of the last event in the log',
    registers,
    async collect() {
      const [first] = await lagsOnce();
      if (first) this.set(first.head);
    },
  });
}

/** The log's write observer: append latency, group-commit sizes, and what the written events say (credits, webhook outcomes). */
function logObserverOf(m: {
  append: Histogram<'outcome'>;
  groupCommit: Histogram;
  webhooks: Counter<'outcome'>;
  credits: Counter<'action'>;
  refunds: Counter<'action'>;
}): EventLogObserver {
  const { append, groupCommit, webhooks, credits, refunds } = m;
  return {
    // Called inside the log's settling of a commit: it must never throw.
    appended(seconds: number, outcome, events: readonly NewEvent[]) {
      try {
        append.labels(outcome).observe(seconds);
        if (outcome !== 'written') return;
        for (const e of events) {
          const charge = chargeOf(e.data);
          if (charge && charge.amount_mc > 0) credits.labels(charge.action).inc(charge.amount_mc / 1000);
          else if (charge && charge.amount_mc < 0) refunds.labels(charge.action).inc(-charge.amount_mc / 1000);
          if (e.type === 'WebhookDeliveryAttempted' || e.type === 'WebhookReplayAttempted')
            webhooks.labels(String(isRecord(e.data) ? e.data.outcome : undefined)).inc();
        }
      } catch {
        // A metric is not worth a failed append.
      }
    },
    committed(appends: number) {
      try {
        groupCommit.observe(appends);
      } catch {
        // as above
      }
    },
  };
}

/** The route template of the answered request: the path of the operation that answered it (set by api/operations.ts `mount`). */
export function routeOf(ctx: Context): string {
  return ctx.state.route ?? UNMATCHED_ROUTE;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether an Authorization header carries the metrics token (compared in constant time). */
function carriesToken(authorization: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return m !== null && timingSafeEqual(digest(m[1]), expected);
}

/**
 * GET /metrics in the Prometheus text format, for a scraper holding METRICS_TOKEN as a bearer
 * token. Without a configured token the endpoint is off (the request goes on to the router: 404).
 * Mounted before authentication: the token is not a user's bearer.
 */
export function metricsEndpoint(metrics: Metrics, token: string | null) {
  const scrape = plainMetricsEndpoint(metrics, token);
  return async function serveMetrics(ctx: Context, next: Next) {
    const answer = await scrape(ctx.method, ctx.path, ctx.get('authorization'), ctx.state.requestId);
    if (answer === null) return next();
    if (answer.status === 200) ctx.state.route = '/metrics';
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  };
}

/** One answer of a process without the Koa app. */
export interface PlainAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The metrics endpoint as a function of the request's method, path and Authorization header, for
 * the Koa app (metricsEndpoint) and the processes that serve no API (ROLE=projector or worker,
 * api/server.ts): the scrape's answer, or null when the request is not one (another path or
 * method, or no METRICS_TOKEN configured).
 */
export function plainMetricsEndpoint(metrics: Metrics, token: string | null) {
  const expected = token ? digest(token) : null;
  return async (method: string, path: string, authorization: string | undefined, requestId: string): Promise<PlainAnswer | null> => {
    if (path !== '/metrics' || expected === null || (method !== 'GET' && method !== 'HEAD')) return null;
    if (!carriesToken(authorization, expected)) {
      return {
        status: 401,
        headers: { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' },
        body: JSON.stringify(errorBody(requestId, 'unauthorized', 'The metrics endpoint needs the METRICS_TOKEN bearer token')),
      };
    }
    return { status: 200, headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }, body: await metrics.registry.metrics() };
  };
}
