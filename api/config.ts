import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { isOneOf } from './guards.ts';

/** Which part of the service this process runs (ROLE). */
export type Role = 'all' | 'api' | 'projector' | 'worker';
export const ROLES: readonly Role[] = ['all', 'api', 'projector', 'worker'];

export interface Config {
  /**
   * `all` (default): API, projections and workers in one process. `api`: HTTP and appends, reads
   * from the projector's read models. `projector`: the projections only (and /health). `worker`:
   * Agenda job processing only (and /health).
   */
  role: Role;
  /** How long a projector's lease on the projections lasts without renewal (PROJECTOR_LEASE_MS). */
  projectorLeaseMs: number;
  port: number;
  host: string;
  dataDir: string;
  publicBaseUrl: string;
  eventstoreUrl: string | null;
  mongodbUrl: string | null;
  mongodbDb: string;
  /**
   * The embedded read store, used when no MONGODB_URL is set (READ_STORE): `sqlite` (default)
   * keeps the read models in DATA_DIR/read-models.sqlite, `memory` in the heap (with snapshots at clean stops).
   */
  readStore: 'sqlite' | 'memory';
  smtpUrl: string | null;
  mailOutboxDir: string;
  adminEmails: string[];
  webhookAllowLoopback: boolean;
  rateLimitScale: number;
  logLevel: string;
  /** `FULL` (default): an acknowledged write survives power loss. `NORMAL`: survives a process crash only. */
  sqliteSynchronous: 'FULL' | 'NORMAL';
  /** How often a background thread checkpoints the SQLite WAL (ms); 0: the writer does it inside commits. */
  sqliteCheckpointIntervalMs: number;
  /** As-of reads: a stored version of a subject every this many of its events, the most one as-of read folds. */
  asOfEvery: number;
  /** Server secret for keyed hashes and secret encryption; generated into DATA_DIR when unset. */
  secretKey: string | null;
  /** HS256 key for access and refresh tokens; derived from the server secret when unset. */
  jwtSecret: string | null;
  shutdownTimeoutMs: number;
  /**
   * Embedded stores only: write the read models to DATA_DIR/read-models.snapshot on a clean stop
   * and start from it (replaying only the newer events) when it is still valid.
   */
  readModelSnapshots: boolean;
  /**
   * A start that had to replay at least this many events writes a snapshot before it answers, so
   * that a crash soon after does not replay them again; 0: only clean stops write one.
   */
  readModelSnapshotAfterEvents: number;
  /**
   * Embedded read store only: before it loads anything, a start estimates the heap its read models
   * will hold and refuses when the heap limit leaves too little (api/start-memory.ts); false skips it.
   */
  startMemoryCheck: boolean;
  /** Browser origins allowed by CORS (`CORS_ORIGINS`, comma-separated; `*` for any); empty: no CORS headers. */
  corsOrigins: string[];
  /** TRUST_PROXY=1: the client address comes from X-Forwarded-For (only behind a proxy that sets it). */
  trustProxy?: boolean;
  /** A real payment provider (Razorpay) when both are set; otherwise the embedded sandbox provider, if it is on. */
  razorpayKeyId: string | null;
  razorpayKeySecret: string | null;
  /**
   * The embedded sandbox provider (anyone may pay any order with a test payment) when no real
   * provider is configured: PAYMENTS_SANDBOX=1/0 explicitly, else on unless NODE_ENV=production.
   */
  paymentsSandbox: boolean;
  /** Monthly tier prices in INR (PLAN_PRICE_PRO_INR, PLAN_PRICE_ELITE_INR, PLAN_PRICE_BUILDER_INR). */
  tierPrices: { pro: number; elite: number; builder: number };

  /** METRICS_TOKEN: the bearer token a Prometheus scraper sends to GET /metrics; unset: /metrics is off (404). */
  metricsToken?: string | null;
  /** /health/ready answers 503 while any projection is more than this many events behind the head (READY_MAX_LAG_EVENTS). */
  readyMaxLagEvents?: number;
  /** ... or its oldest unapplied event is older than this many seconds (READY_MAX_LAG_SECONDS). */
  readyMaxLagSeconds?: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max} (got ${n})`);
  return n;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (got "${raw}")`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
  }
  return raw;
}

const READ_STORES = ['sqlite', 'memory'] as const;

function readStoreOf(raw: string | undefined): 'sqlite' | 'memory' {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return 'sqlite';
  const found = READ_STORES.find((s) => s === value);
  if (found === undefined) throw new ConfigError(`READ_STORE must be one of ${READ_STORES.join(', ')} (got "${raw}")`);
  return found;
}

/** Reads and validates the environment. A bad value stops the start with a message naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const role = (env.ROLE || 'all').trim().toLowerCase();
  if (!isOneOf(ROLES, role)) throw new ConfigError(`ROLE must be one of ${ROLES.join(', ')} (got "${env.ROLE}")`);
  const dataDir = resolve(env.DATA_DIR || './data');
  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/$/, '');
  const scaleRaw = env.RATE_LIMIT_SCALE;
  let rateLimitScale = 1;
  if (scaleRaw !== undefined && scaleRaw !== '') {
    rateLimitScale = Number(scaleRaw);
    if (!Number.isFinite(rateLimitScale) || rateLimitScale < 0) {
      throw new ConfigError(`RATE_LIMIT_SCALE must be a number >= 0 (got "${scaleRaw}")`);
    }
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  const flag = (name: string, fallback = false): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === '0' || raw === 'false') return false;
    if (raw === '1' || raw === 'true') return true;
    throw new ConfigError(`${name} must be 1/true or 0/false (got "${raw}")`);
  };
  const sync = (env.SQLITE_SYNCHRONOUS || 'FULL').toUpperCase();
  if (sync !== 'FULL' && sync !== 'NORMAL') throw new ConfigError(`SQLITE_SYNCHRONOUS must be FULL or NORMAL (got "${env.SQLITE_SYNCHRONOUS}")`);
  const adminEmails = (env.ADMIN_EMAILS || '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const e of adminEmails) {
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) throw new ConfigError(`ADMIN_EMAILS holds an invalid address: "${e}"`);
  }
  const corsOrigins = (env.CORS_ORIGINS || '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const o of corsOrigins) {
    if (o === '*') continue;
    let parsed: URL | null;
    try {
      parsed = new URL(o);
    } catch {
      parsed = null;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== o)
      throw new ConfigError(
        `CORS_ORIGINS holds "${o}": each entry must be an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash), or *`,
      );
  }
  const secretKey = env.SECRET_KEY || null;
  if (secretKey !== null && secretKey.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters');
  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  const jwtSecret = env.JWT_SECRET || null;
  if (jwtSecret !== null && jwtSecret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters');
  const razorpayKeyId = env.RAZORPAY_KEY_ID || null;
  const razorpayKeySecret = env.RAZORPAY_KEY_SECRET || null;
  if ((razorpayKeyId === null) !== (razorpayKeySecret === null))
    throw new ConfigError('RAZORPAY_KEY_ID and RAZORPAY_KEY_SECRET must be set together (or neither, for the sandbox provider)');
  if (razorpayKeyId !== null && !/^rzp_(test|live)_\w+$/.test(razorpayKeyId))
    throw new ConfigError(`RAZORPAY_KEY_ID must look like rzp_test_... or rzp_live_... (got "${razorpayKeyId}")`);
  return {
    role,
    projectorLeaseMs: integer(env, 'PROJECTOR_LEASE_MS', 15_000, 1_000, 600_000),
    port,
    razorpayKeyId,
    razorpayKeySecret,
    paymentsSandbox: flag('PAYMENTS_SANDBOX', env.NODE_ENV !== 'production'),
    tierPrices: {
      pro: integer(env, 'PLAN_PRICE_PRO_INR', 499, 1, 10_000_000),
      elite: integer(env, 'PLAN_PRICE_ELITE_INR', 999, 1, 10_000_000),
      builder: integer(env, 'PLAN_PRICE_BUILDER_INR', 2_499, 1, 10_000_000),
    },
    host: env.HOST || '0.0.0.0',
    dataDir,
    publicBaseUrl,
    eventstoreUrl: url(env, 'EVENTSTORE_URL', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:', 'kdb:']),
    mongodbUrl: url(env, 'MONGODB_URL', ['mongodb:', 'mongodb+srv:']),
    mongodbDb: env.MONGODB_DB || 'agent_network',
    readStore: readStoreOf(env.READ_STORE),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailOutboxDir: resolve(env.MAIL_OUTBOX_DIR || join(dataDir, 'outbox')),
    adminEmails,
    webhookAllowLoopback: flag('WEBHOOK_ALLOW_LOOPBACK'),
    rateLimitScale,
    logLevel,
    sqliteSynchronous: sync,
    sqliteCheckpointIntervalMs: integer(env, 'SQLITE_CHECKPOINT_INTERVAL_MS', 10, 0, 60_000),
    asOfEvery: integer(env, 'AS_OF_EVERY', 500, 2, 100_000),
    secretKey,
    jwtSecret,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    readModelSnapshots: flag('READ_MODEL_SNAPSHOTS', true),
    trustProxy: flag('TRUST_PROXY'),
    readModelSnapshotAfterEvents: integer(env, 'READ_MODEL_SNAPSHOT_AFTER_EVENTS', 100_000, 0, Number.MAX_SAFE_INTEGER),
    startMemoryCheck: flag('START_MEMORY_CHECK', true),
    corsOrigins,
    metricsToken,
    readyMaxLagEvents: integer(env, 'READY_MAX_LAG_EVENTS', 1000, 0, Number.MAX_SAFE_INTEGER),
    readyMaxLagSeconds: integer(env, 'READY_MAX_LAG_SECONDS', 30, 0, 86_400),
  };
}

/** How payments are taken: Razorpay when configured, else the sandbox when it is on, else none (payment routes answer 503). */
export type PaymentMode = 'razorpay' | 'sandbox' | 'disabled';

export function paymentMode(config: Pick<Config, 'razorpayKeyId' | 'razorpayKeySecret' | 'paymentsSandbox'>): PaymentMode {
  if (config.razorpayKeyId && config.razorpayKeySecret) return 'razorpay';
  return config.paymentsSandbox ? 'sandbox' : 'disabled';
}

/** The server secret: SECRET_KEY, or one generated once into DATA_DIR/secret.key (mode 0600). */
export function resolveServerSecret(config: Config): string {
  if (config.secretKey) return config.secretKey;
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}
