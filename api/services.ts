import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { SecretBox } from '../commands/agents/secrets.ts';
import { CommandBus } from '../commands/handler.ts';
import type { Resolver } from '../commands/webhooks/target.ts';
import { systemResolver } from '../commands/webhooks/target.ts';
import { TokenService } from '../commands/humans/tokens.ts';
import type { Clock } from '../events/kernel/clock.ts';
import { systemClock } from '../events/kernel/clock.ts';
import type { BlobStore } from '../events/store/blobs.ts';
import { LocalBlobStore } from '../events/store/blobs.ts';
import { openEventLog } from '../events/store/index.ts';
import { SqliteEventLog } from '../events/store/sqlite.ts';
import type { EventLog } from '../events/store/port.ts';
import { ServiceKey } from '../events/kernel/signing.ts';
import type { PaymentProvider } from '../commands/credits/payments/port.ts';
import { RazorpayPaymentProvider } from '../commands/credits/payments/razorpay.ts';
import { SandboxPaymentProvider } from '../commands/credits/payments/sandbox.ts';
import { allProjections } from '../projections/index.ts';
import { ProjectionRunner, type ReadModelProgress } from '../projections/runner.ts';
import { CheckpointFollower } from '../projections/follower.ts';
import { Lease, LeaseKeeper } from '../projections/leases.ts';
import { RemoteReadStore, assertNotServed, serveReadStore } from '../projections/store/remote.ts';
import { StoreUnavailableError } from '../events/store/port.ts';
import { ProjectionRebuilds, projectionLags } from '../projections/operations.ts';
import { Metrics } from './metrics.ts';
import { restoreReadModels, saveReadModels } from '../projections/snapshots.ts';
import { peekSnapshot } from '../projections/store/snapshot.ts';
import { openReadStore } from '../projections/store/index.ts';
import { copySqliteReadStore } from '../projections/store/sqlite.ts';
import { MemoryReadStore } from '../projections/store/memory.ts';
import type { ReadStore } from '../projections/store/port.ts';
import type { BearerVerifier } from './auth.ts';
import { userBearer } from './bearer.ts';
import type { Config } from './config.ts';
import { ensurePrivateFile, secureDataDir } from './data-dir.ts';
import { paymentMode, resolveServerSecret } from './config.ts';
import type { IdempotencyStore } from './idempotency.ts';
import { MongoIdempotencyStore, SqliteIdempotencyStore } from './idempotency.ts';
import { RateLimiter } from './rate-limit.ts';
import { AsOfIndex } from '../projections/as-of-index.ts';
import { Foreground } from '../events/kernel/foreground.ts';
import { machineMemory } from './heap-limit.ts';
import { estimateStartMemory, StartRefused } from './start-memory.ts';

export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  log: EventLog;
  store: ReadStore;
  bus: CommandBus;
  /**
   * The read models' progress: the projection runner where this process runs the projections
   * (ROLE all or projector), a follower of the projector's checkpoints otherwise (api, worker).
   */
  runner: ReadModelProgress;
  /** The projection runner when this process runs the projections, else null. */
  projector: ProjectionRunner | null;
  secrets: SecretBox;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  /** The bearer side of dual auth; set by human sign-in. */
  bearer: BearerVerifier | null;
  /** Access and refresh JWTs of human sign-in. */
  tokens: TokenService;
  sqlitePath: string;
  /** Resolves webhook host names at configuration time (the system resolver; tests replace it). */
  resolver: Resolver;
  /** Uploaded images' bytes (DATA_DIR/blobs). */
  blobs: BlobStore;
  /** The service's Ed25519 signing key (rulings, statements), published at /.well-known/service-key.json. */
  serviceKey: ServiceKey;
  /**
   * The payment provider port: Razorpay when configured, else the embedded sandbox when it is on
   * (which `sandbox` is, for its test-payment route), else null: payment routes answer 503.
   */
  payments: PaymentProvider | null;
  sandbox: SandboxPaymentProvider | null;

  /** Prometheus metrics of this instance (GET /metrics). */
  metrics: Metrics;
  /** The requests in flight (the front middleware counts them); background work yields to them. */
  foreground: Foreground;
  /** The as-of index (DATA_DIR/as-of.sqlite), opened by the first as-of read. */
  asOf: AsOfIndex;
  /** One-projection rebuilds of the running read models (admin routes). */
  rebuilds: ProjectionRebuilds;
  closers: Array<() => Promise<void>>;
}

export interface ServiceOverrides {
  clock?: Clock;
  logger?: Logger;
  /** false: never write a read-model snapshot at close (the CLI; the service owns the file). */
  saveSnapshot?: boolean;
  /**
   * true: the SQLite read store is opened on a copy of DATA_DIR/read-models.sqlite (its last
   * commit), removed at close: the CLI, which must not write the running service's file.
   */
  readModelsCopy?: boolean;
  /**
   * Aborted by a stop signal while the service starts: the catch-up stops after the batch under
   * way, a long one keeps its progress in a snapshot, the stores close, and StartAborted is thrown.
   */
  signal?: AbortSignal;
  /**
   * A projector that lost its lease to another (ROLE=projector on MongoDB) has stopped applying;
   * by default it logs and exits (status 1) so that its supervisor starts it again as a standby.
   */
  onLeaseLost?: () => void;
  /** The start memory check's figures (tests): the heap's, by default v8.getHeapStatistics(). */
  heapStatistics?: () => { heap_size_limit: number; used_heap_size: number };
  /** The start memory check's figures (tests): the machine's memory, bytes. */
  machineMemory?: number;
}

/** The Unix socket in DATA_DIR on which an embedded projector serves its read store to api and worker processes. */
export const PROJECTOR_SOCKET = 'projector.sock';
/** The lease a projector holds on the projections in a shared (MongoDB) read store. */
export const PROJECTIONS_LEASE = 'projections';

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The start was stopped by its abort signal; everything it opened is closed again. */
export class StartAborted extends Error {
  constructor() {
    super('stopped during start-up');
    this.name = 'StartAborted';
  }
}

/** Share of V8's heap limit in use after the start-up catch-up from which the start warns. */
export const HEAP_WARN_SHARE = 0.6;

/**
 * The heap figures logged once the in-memory read models have caught up, and the warning to log
 * when they leave little room to grow (the process dies when the heap reaches its limit).
 */
export function heapReport(stats: { used_heap_size: number; heap_size_limit: number }): {
  fields: { heap_used_mb: number; heap_limit_mb: number };
  warning: string | null;
} {
  const fields = { heap_used_mb: Math.round(stats.used_heap_size / 1e6), heap_limit_mb: Math.round(stats.heap_size_limit / 1e6) };
  const share = stats.used_heap_size / stats.heap_size_limit;
  const warning =
    share < HEAP_WARN_SHARE
      ? null
      : `the in-memory read models leave little heap: ${Math.round(share * 100)}% of the ${fields.heap_limit_mb} MB limit in use after catching up; raise it (NODE_OPTIONS=--max-old-space-size=<MB>) or keep the read models in MongoDB (MONGODB_URL)`;
  return { fields, warning };
}

/** The read-model snapshot of the embedded store, in DATA_DIR. */
export const SNAPSHOT_FILE = 'read-models.snapshot';
/** The SQLite read store's file (READ_STORE=sqlite). */
export const READ_MODELS_FILE = 'read-models.sqlite';

/** What every role opens before the read models catch up (openStores). */
interface Opened {
  config: Config;
  logger: Logger;
  clock: Clock;
  log: EventLog;
  store: ReadStore;
  metrics: Metrics;
  /** Tells the metrics whose read-model progress to report (the runner or the follower). */
  reportProgress: (progress: ReadModelProgress) => void;
  idempotency: IdempotencyStore;
  sqlitePath: string;
  /** The Unix socket on which an embedded projector serves its read store. */
  socketPath: string;
  serverSecret: string;
  tokens: TokenService;
  bus: CommandBus;
  asOf: AsOfIndex;
  closers: Array<() => Promise<void>>;
}

/** The services without the read models' progress (which runner or follower, and its rebuilds). */
type BaseServices = Omit<Services, 'runner' | 'projector' | 'rebuilds'>;

/** Opens the stores and catches the read models up with the log. */
export async function openServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const clock = overrides.clock ?? systemClock;
  const opened = await openStores(config, logger, clock, overrides);
  const runsProjections = config.role === 'all' || config.role === 'projector';
  return runsProjections ? runProjections(opened, overrides) : followProjector(opened, overrides);
}

/** The event log, the read store (or the projector's, over its socket), the idempotency store, metrics, tokens and the as-of index. */
async function openStores(config: Config, logger: Logger, clock: Clock, overrides: ServiceOverrides): Promise<Opened> {
  secureDataDir(config.dataDir, logger);
  const sqlitePath = join(config.dataDir, 'events.sqlite');
  if (!config.eventstoreUrl || !config.mongodbUrl) ensurePrivateFile(sqlitePath);
  const closers: Array<() => Promise<void>> = [];

  const log = await openEventLog({
    eventstoreUrl: config.eventstoreUrl ?? undefined,
    sqlitePath,
    synchronous: config.sqliteSynchronous,
    checkpointIntervalMs: config.sqliteCheckpointIntervalMs,
  });
  closers.push(() => log.close());
  let progress: ReadModelProgress | null = null;
  // The process metrics (event-loop delay monitor, GC observer) run only where /metrics is served.
  const metrics = new Metrics(async () => (progress ? projectionLags(log, progress, clock.now()) : []), {
    defaultMetrics: Boolean(config.metricsToken),
  });
  metrics.watchLog(log);
  const runsProjections = config.role === 'all' || config.role === 'projector';
  // The embedded read store lives in the projector's memory: other roles reach it over its socket.
  const socketPath = join(config.dataDir, PROJECTOR_SOCKET);
  if (config.role === 'projector' && !config.mongodbUrl) {
    try {
      await assertNotServed(socketPath);
    } catch (err) {
      await closeClosers(closers, logger);
      throw err;
    }
  }
  let readModelsPath = join(config.dataDir, READ_MODELS_FILE);
  let readModelsCopy: string | null = null;
  if (runsProjections && !config.mongodbUrl && config.readStore === 'sqlite') {
    if (overrides.readModelsCopy === true) {
      readModelsCopy = join(config.dataDir, `read-models.cli-${process.pid}.sqlite`);
      for (const suffix of ['', '-wal', '-shm']) rmSync(readModelsCopy + suffix, { force: true });
      ensurePrivateFile(readModelsCopy);
      copySqliteReadStore(readModelsPath, readModelsCopy);
      readModelsPath = readModelsCopy;
    }
    ensurePrivateFile(readModelsPath);
  }
  const store: ReadStore =
    !runsProjections && !config.mongodbUrl
      ? new RemoteReadStore(socketPath)
      : await openReadStore({ mongodbUrl: config.mongodbUrl ?? undefined, dbName: config.mongodbDb, embedded: config.readStore, sqlitePath: readModelsPath });
  closers.push(() => store.close());
  if (readModelsCopy !== null) {
    const copy = readModelsCopy;
    closers.push(async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true });
    });
  }
  const idempotency = await openIdempotency(config, sqlitePath, closers);

  const serverSecret = resolveServerSecret(config);
  const tokens = new TokenService(serverSecret, config.jwtSecret, () => clock.now());
  const bus = new CommandBus(log, clock);
  const asOfPath = join(config.dataDir, 'as-of.sqlite');
  const asOf = new AsOfIndex(log, asOfPath, { every: config.asOfEvery, beforeOpen: () => ensurePrivateFile(asOfPath) }, (err) =>
    logger.error({ err }, 'as-of index: a batch failed'),
  );
  closers.unshift(() => asOf.close());
  return {
    config,
    logger,
    clock,
    log,
    store,
    metrics,
    reportProgress: (p) => (progress = p),
    idempotency,
    sqlitePath,
    socketPath,
    serverSecret,
    tokens,
    bus,
    asOf,
    closers,
  };
}

/** The idempotency records: beside the read models in MongoDB, else in the SQLite file of the log. */
async function openIdempotency(config: Config, sqlitePath: string, closers: Array<() => Promise<void>>): Promise<IdempotencyStore> {
  let idempotency: IdempotencyStore;
  if (config.mongodbUrl) {
    const client = await MongoClient.connect(config.mongodbUrl);
    idempotency = await MongoIdempotencyStore.open(client.db(config.mongodbDb));
    closers.push(() => client.close());
  } else {
    idempotency = new SqliteIdempotencyStore(sqlitePath);
  }
  closers.push(() => idempotency.close());
  return idempotency;
}

/** The payment provider of the configured mode (logged): Razorpay, the sandbox, or none. */
function paymentsOf(config: Config, serverSecret: string, logger: Logger): Pick<Services, 'payments' | 'sandbox'> {
  const mode = paymentMode(config);
  const sandbox = mode === 'sandbox' ? new SandboxPaymentProvider(serverSecret) : null;
  const payments: PaymentProvider | null =
    mode === 'razorpay' ? new RazorpayPaymentProvider(config.razorpayKeyId ?? '', config.razorpayKeySecret ?? '') : sandbox;
  if (mode === 'disabled')
    logger.warn(
      { payment_mode: mode },
      'payments: disabled (no RAZORPAY_KEY_ID / RAZORPAY_KEY_SECRET, and the sandbox is off under NODE_ENV=production); orders answer 503 payments_unavailable',
    );
  else if (mode === 'sandbox')
    logger.info({ payment_mode: mode }, 'payments: sandbox (test payments, no real money: anyone may pay any order; PAYMENTS_SANDBOX=0 turns it off)');
  else logger.info({ payment_mode: mode, key_id: config.razorpayKeyId }, 'payments: razorpay');
  return { payments, sandbox };
}

/** The services of the opened stores, once the read models have caught up. */
function baseServices(o: Opened): BaseServices {
  const { config, clock, store, serverSecret } = o;
  return {
    config,
    ...paymentsOf(config, serverSecret, o.logger),
    clock,
    logger: o.logger,
    log: o.log,
    store,
    bus: o.bus,
    secrets: new SecretBox(serverSecret),
    serviceKey: ServiceKey.fromServerSecret(serverSecret),
    metrics: o.metrics,
    foreground: new Foreground(),
    limiter: new RateLimiter(clock, config.rateLimitScale),
    idempotency: o.idempotency,
    bearer: userBearer(store, o.tokens, config.adminEmails),
    tokens: o.tokens,
    sqlitePath: o.sqlitePath,
    resolver: systemResolver,
    blobs: new LocalBlobStore(join(config.dataDir, 'blobs')),
    asOf: o.asOf,
    closers: o.closers,
  };
}

/** ROLE=api or worker: the projector runs the projections; this process follows its checkpoints. */
async function followProjector(o: Opened, overrides: ServiceOverrides): Promise<Services> {
  const { config, logger, store, closers } = o;
  const remote = store instanceof RemoteReadStore ? store : null;
  const follower = new CheckpointFollower(store, allProjections, {
    remoteWait: remote
      ? async (position, timeoutMs) => {
          const reached = await remote.call('waitFor', position, timeoutMs);
          if (typeof reached !== 'number') throw new Error(`the projector's waitFor answered ${typeof reached}, not a position`);
          return reached;
        }
      : undefined,
  });
  o.reportProgress(follower);
  logger.info({ role: config.role }, 'read models catching up');
  // The embedded projector serves its store once it has caught up: until then this process waits (503).
  for (let attempt = 0; ; attempt++) {
    if (overrides.signal?.aborted) {
      await closeClosers(closers, logger);
      throw new StartAborted();
    }
    try {
      await follower.start();
      break;
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) {
        await closeClosers(closers, logger);
        throw err;
      }
      if (attempt === 0) logger.info({ socket: o.socketPath }, 'waiting for the projector');
      await abortableSleep(200, overrides.signal);
    }
  }
  closers.unshift(() => follower.stop());
  logger.info({ role: config.role, position: follower.position, log: o.log.name, store: store.name }, 'read models caught up');
  return { ...baseServices(o), runner: follower, projector: null, rebuilds: new ProjectionRebuilds(follower, store, () => o.clock.now()) };
}

/** ROLE=all or projector: this process runs the projections, from a snapshot when there is one, and keeps them running. */
async function runProjections(o: Opened, overrides: ServiceOverrides): Promise<Services> {
  const { config, logger, log, store, closers, clock } = o;
  const runner = new ProjectionRunner(log, store, allProjections, (err) => logger.fatal({ err }, 'projection failed'));
  o.reportProgress(runner);
  const started = Date.now();
  // The embedded default keeps its read models in memory: a snapshot written at the last clean
  // stop saves replaying the whole log at every start.
  const snapshots =
    config.readModelSnapshots && store instanceof MemoryReadStore && log instanceof SqliteEventLog
      ? { store, path: join(config.dataDir, SNAPSHOT_FILE), from: 0 }
      : null;
  if (store instanceof MemoryReadStore && config.startMemoryCheck) await checkStartMemory(o, overrides);
  if (snapshots) {
    const outcome = await restoreReadModels(snapshots.store, log, snapshots.path);
    if (outcome.kind === 'restored') {
      snapshots.from = outcome.header.position;
      logger.info({ position: outcome.header.position, documents: outcome.header.documents, ms: Date.now() - started }, 'read models restored from snapshot');
    } else if (outcome.kind === 'rejected') {
      logger.warn({ reason: outcome.reason, file: snapshots.path }, 'read-model snapshot not used: replaying the whole log');
    }
  }
  // Only a clean state is saved, and only when it moved on from the snapshot it started from.
  const saveSnapshot = async (why: string) => {
    if (!snapshots || overrides.saveSnapshot === false || runner.failed || runner.position === snapshots.from) return;
    const t = Date.now();
    const bytes = await saveReadModels(snapshots.store, log, runner.position, snapshots.path, clock.now().toISOString());
    if (bytes === null) return;
    snapshots.from = runner.position;
    logger.info({ position: runner.position, bytes, ms: Date.now() - t, why }, 'read-model snapshot written');
  };
  const after = config.readModelSnapshotAfterEvents;
  const longReplay = () => snapshots !== null && after > 0 && runner.position - snapshots.from >= after;
  const signal = overrides.signal;
  const stopCatchUp = () => void runner.stop();
  signal?.addEventListener('abort', stopCatchUp, { once: true });
  // ROLE=projector on a shared (MongoDB) read store: one active projector, through a lease.
  if (config.role === 'projector' && config.mongodbUrl) await takeProjectionLease(o, runner, overrides);
  // The server already listens (503 until caught up); a signal from here on stops the catch-up at a batch boundary.
  logger.info('read models catching up');
  let caughtUp: boolean;
  try {
    caughtUp = signal?.aborted ? false : await runner.start();
  } finally {
    signal?.removeEventListener('abort', stopCatchUp);
  }
  if (!caughtUp) {
    // Stopped during the catch-up: what was applied is a consistent cut at runner.position (its
    // deferred indexes are rebuilt when the snapshot is loaded), so a long one is kept.
    logger.info({ position: runner.position, ms: Date.now() - started }, 'stopped during start-up');
    if (longReplay()) {
      try {
        await saveSnapshot('stopped during start-up');
      } catch (err) {
        logger.warn({ err }, 'read-model snapshot at the stop during start-up failed');
      }
    }
    await closeClosers(closers, logger);
    throw new StartAborted();
  }
  const heap = store instanceof MemoryReadStore ? heapReport(getHeapStatistics()) : null;
  logger.info(
    { position: runner.position, from: runner.startedFrom, ms: Date.now() - started, log: log.name, store: store.name, ...heap?.fields },
    'read models caught up',
  );
  if (heap?.warning) logger.warn(heap.fields, heap.warning);
  // A long replay is saved before the service answers: a crash soon after then starts from here.
  if (longReplay()) {
    try {
      await runner.stop();
      await saveSnapshot('long replay at start');
    } catch (err) {
      logger.warn({ err }, 'read-model snapshot after the start-up replay failed');
    }
    await runner.start();
  }
  closers.unshift(async () => {
    await runner.stop();
    await saveSnapshot('clean stop');
  });
  if (config.role === 'projector' && !config.mongodbUrl) await serveToOtherRoles(o, runner);
  return { ...baseServices(o), runner, projector: runner, rebuilds: new ProjectionRebuilds(runner, store, () => clock.now()) };
}

/** Before anything loads: a start the heap cannot hold is refused now, not dead half-way. */
async function checkStartMemory(o: Opened, overrides: ServiceOverrides): Promise<void> {
  const { config, logger } = o;
  const heap = (overrides.heapStatistics ?? getHeapStatistics)();
  const estimate = estimateStartMemory({
    heapLimit: heap.heap_size_limit,
    heapUsed: heap.used_heap_size,
    head: await o.log.headPosition(),
    snapshot: config.readModelSnapshots ? peekSnapshot(join(config.dataDir, SNAPSHOT_FILE)) : null,
    machineMemory: overrides.machineMemory ?? machineMemory(),
  });
  if (estimate.message !== null) {
    logger.fatal(estimate.fields, estimate.message);
    await closeClosers(o.closers, logger);
    throw new StartRefused(estimate.message);
  }
  logger.info(estimate.fields, 'start memory estimate');
}

/** ROLE=projector on a shared (MongoDB) read store: waits for the projection lease, then keeps renewing it. */
async function takeProjectionLease(o: Opened, runner: ProjectionRunner, overrides: ServiceOverrides): Promise<void> {
  const { config, logger, closers } = o;
  const signal = overrides.signal;
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let acquired = false;
  const onLeaseLost =
    overrides.onLeaseLost ??
    (() => {
      logger.fatal({ owner }, 'projection lease lost to another projector: exiting to restart as a standby');
      process.exit(1);
    });
  const keeper = new LeaseKeeper(
    new Lease(o.store, PROJECTIONS_LEASE, owner, config.projectorLeaseMs, o.clock),
    {
      onAcquired: async () => {
        acquired = true;
      },
      onLost: async () => {
        await runner.stop();
        onLeaseLost();
      },
    },
    o.clock,
  );
  logger.info({ owner, lease_ms: config.projectorLeaseMs }, 'waiting for the projection lease');
  while (!acquired) {
    await keeper.tick().catch((err: unknown) => logger.warn({ err }, 'projection lease: store unavailable'));
    if (acquired) break;
    if (signal?.aborted) {
      await closeClosers(closers, logger);
      throw new StartAborted();
    }
    await abortableSleep(Math.max(100, Math.floor(config.projectorLeaseMs / 3)), signal);
  }
  logger.info({ owner }, 'projection lease taken');
  keeper.run((err) => logger.warn({ err }, 'projection lease: renewal failed'));
  // Before the stores close (and after the runner stops: see the unshift in runProjections), so the lease is released.
  closers.unshift(() => keeper.stop());
}

/**
 * ROLE=projector on the embedded store: api and worker processes of this data directory read the
 * read models over a Unix socket, served from here on (only once caught up), and their
 * read-your-writes waits end here. Closed first at stop, so they fail fast rather than hang.
 */
async function serveToOtherRoles(o: Opened, runner: ProjectionRunner): Promise<void> {
  const { log } = o;
  const served = await serveReadStore(o.store, o.socketPath, {
    waitFor: async (position, timeoutMs) => {
      if (typeof position !== 'number' || typeof timeoutMs !== 'number') throw new TypeError('waitFor takes a position and a timeout (numbers)');
      // The writer is another process: look for its commits now rather than at the next poll.
      if (log instanceof SqliteEventLog) log.poke();
      await runner.waitFor(position, timeoutMs);
      return runner.position;
    },
  });
  o.closers.unshift(() => served.close());
  o.logger.info({ socket: o.socketPath }, 'serving the read models to api and worker processes');
}

async function closeClosers(closers: Array<() => Promise<void>>, logger: Logger): Promise<void> {
  for (const close of closers) {
    try {
      await close();
    } catch (err) {
      logger.warn({ err }, 'error while closing');
    }
  }
}

export async function closeServices(s: Services): Promise<void> {
  await closeClosers(s.closers, s.logger);
}
