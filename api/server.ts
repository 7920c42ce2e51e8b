import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { startWorkers } from '../workers/index.ts';
import type { Workers } from '../workers/index.ts';
import { createApp, requestIdOf } from './app.ts';
import { errorBody } from './errors.ts';
import { plainMetricsEndpoint } from './metrics.ts';
import { readiness } from './routes/docs/service.ts';
import type { Config } from './config.ts';
import { ConfigError, loadConfig } from './config.ts';
import type { ServiceOverrides, Services } from './services.ts';
import { StartAborted, closeServices, openServices } from './services.ts';
import { StoreAlreadyServedError } from '../projections/store/remote.ts';
import { StartRefused } from './start-memory.ts';

/** The answer to every request before the service is ready (the body is drained first). */
function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0];
  const requestId = requestIdOf(req);
  if (req.method === 'GET' && path === '/health/live') {
    // Alive while starting: a restart would only start the catch-up again.
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId });
    res.end(JSON.stringify({ status: 'starting' }));
    return;
  }
  const body =
    req.method === 'GET' && (path === '/health' || path === '/api/health' || path === '/health/ready')
      ? { status: 'starting', detail: 'Read models are catching up with the event log' }
      : errorBody(requestId, 'service_starting', 'The service is starting: read models are catching up with the event log; retry shortly');
  req.resume();
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', 'x-request-id': requestId });
  res.end(JSON.stringify(body));
}

/**
 * The HTTP answers of a process without the API (ROLE=projector or worker): its health, for the
 * orchestrator's probes, its metrics (GET /metrics with METRICS_TOKEN, as in the API: this is
 * where a worker's job and webhook figures and a projector's own lag are read), and 404 for
 * everything else.
 */
function roleHealth(services: Services): RequestListener {
  const { role } = services.config;
  const scrape = plainMetricsEndpoint(services.metrics, services.config.metricsToken ?? null);
  const send = (res: ServerResponse, requestId: string, status: number, headers: Record<string, string>, body: string, head: boolean) => {
    res.writeHead(status, { ...headers, 'x-request-id': requestId });
    res.end(head ? undefined : body);
  };
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const requestId = requestIdOf(req);
    req.resume();
    const json = { 'content-type': 'application/json; charset=utf-8' };
    scrape(req.method ?? 'GET', path, req.headers.authorization, requestId).then(
      (answer) => {
        if (answer) return send(res, requestId, answer.status, answer.headers, answer.body, req.method === 'HEAD');
        let status = 404;
        let body: unknown = errorBody(requestId, 'route_not_found', 'Not Found');
        if (req.method === 'GET' && path === '/health/live') {
          status = 200;
          body = { status: 'ok', role };
        } else if (req.method === 'GET' && path === '/health') {
          const failed = services.runner.failed;
          status = failed ? 503 : 200;
          body = { status: failed ? 'failed' : 'ok', role, projection_position: services.runner.position };
        } else if (req.method === 'GET' && path === '/health/ready') {
          // The API's readiness check: stores reachable, no failed projection, within the lag bound.
          return readiness(services).then(
            (r) => send(res, requestId, r.ready ? 200 : 503, json, JSON.stringify({ ...r.body, role, projection_position: services.runner.position }), false),
            () => send(res, requestId, 503, json, JSON.stringify({ status: 'not_ready', role }), false),
          );
        }
        send(res, requestId, status, json, JSON.stringify(body), false);
      },
      () => send(res, requestId, 500, json, JSON.stringify(errorBody(requestId, 'internal_error', 'The metrics could not be collected')), false),
    );
  };
}

export interface RunningService {
  services: Services;
  server: Server;
  workers: Workers | null;
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the parts of the service that the configured role runs (ROLE=all: API, projections and
 * workers in one process; api: the API; projector: the projections; worker: the jobs). Stopping: the listener closes first (no
 * new connections), in-flight requests finish, idle keep-alive sockets are closed, then workers
 * and stores close, so nothing acknowledged is lost.
 */
export async function startService(config: Config, overrides: ServiceOverrides & { workers?: boolean } = {}): Promise<RunningService> {
  // Listening comes first: while the read models catch up with the log (a long log takes a while),
  // every request gets 503 `service_starting` and /health says `starting`, rather than the port
  // refusing connections.
  let handle: RequestListener = answerStarting;
  const server = createServer((req, res) => handle(req, res));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // Listening on a port, the address is an AddressInfo (a string is a pipe's, null a closed server's).
  const address = server.address();
  if (address === null || typeof address === 'string') {
    server.close();
    throw new Error(`the server does not listen on a port (${String(address)})`);
  }
  const { port } = address;
  let services: Services;
  let workers: Workers | null;
  try {
    services = await openServices(config, overrides);
    try {
      if (overrides.signal?.aborted) throw new StartAborted();
      const runsWorkers = config.role === 'all' || config.role === 'worker';
      workers = overrides.workers === false || !runsWorkers ? null : await startWorkers(services);
      if (workers) services.metrics.watchAgenda(workers.agenda, workers.backlog);
      if (overrides.signal?.aborted) {
        await workers?.stop();
        throw new StartAborted();
      }
    } catch (err) {
      await closeServices(services);
      throw err;
    }
  } catch (err) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    throw err;
  }
  handle = config.role === 'all' || config.role === 'api' ? createApp(services).callback() : roleHealth(services);
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets turn idle as their last request finishes: close them as they do.
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      force.unref();
      await closed;
      clearInterval(idle);
      clearTimeout(force);
      await workers?.stop();
      await closeServices(services);
    })();
    return stopping;
  };
  return { services, server, workers, url: `http://127.0.0.1:${port}`, stop };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // Signals are taken from the start: one during start-up stops the catch-up cleanly (keeping
  // the progress of a long one) instead of killing the process in the middle of it.
  const starting = new AbortController();
  let running: RunningService | null = null;
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    if (running === null) {
      starting.abort();
      return;
    }
    const { logger } = running.services;
    logger.info({ signal }, 'shutting down');
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    running = await startService(config, { signal: starting.signal });
  } catch (err) {
    if (err instanceof StartAborted) process.exit(0);
    if (err instanceof StoreAlreadyServedError) {
      process.stderr.write(`start refused: ${err.message}\n`);
      process.exit(1);
    }
    if (err instanceof StartRefused) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  running.services.logger.info({ url: running.url, port: config.port, data_dir: config.dataDir, role: config.role }, 'service listening');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`fatal: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
