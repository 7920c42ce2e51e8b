import { createHash, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Context, Next } from 'koa';
import { MongoServerError } from 'mongodb';
import type { Collection, Db } from 'mongodb';
import type { Clock } from '../events/kernel/clock.ts';
import { DomainError } from '../events/kernel/errors.ts';
import type { SecretBox } from '../commands/agents/secrets.ts';

export interface IdempotencyRecord {
  key: string;
  fingerprint: string;
  status: number;
  /** The response body, encrypted (a registration response holds secrets shown once). */
  body: string;
  created_at: number;
}

export interface IdempotencyStore {
  get(key: string): Promise<IdempotencyRecord | null>;
  put(record: IdempotencyRecord): Promise<void>;
  close(): Promise<void>;
}

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
const BUSY_TIMEOUT_MS = 5000;

/**
 * Embedded: a table in the SQLite file. It only replays responses; a lost record is harmless,
 * because a retried command derives the same event ids and appends nothing (so NORMAL sync).
 * The event log commits from its writer thread: while it holds the file's write lock, a put
 * waits on a timer instead of in SQLite's busy handler, which would stall the event loop.
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string], IdempotencyRecord>;
  private readonly putStmt: Database.Statement;
  private readonly purgeStmt: Database.Statement;
  private puts = 0;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS idempotency_keys (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)',
    );
    this.db.pragma('busy_timeout = 0');
    this.getStmt = this.db.prepare<[string], IdempotencyRecord>('SELECT key, fingerprint, status, body, created_at FROM idempotency_keys WHERE key = ?');
    this.putStmt = this.db.prepare(
      'INSERT OR IGNORE INTO idempotency_keys (key, fingerprint, status, body, created_at) VALUES (@key, @fingerprint, @status, @body, @created_at)',
    );
    this.purgeStmt = this.db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?');
  }

  async get(key: string) {
    let row: IdempotencyRecord | undefined;
    await this.whenUnlocked(() => (row = this.getStmt.get(key)));
    return row ?? null;
  }

  async put(record: IdempotencyRecord) {
    await this.whenUnlocked(() => this.putStmt.run(record));
    if (++this.puts % 1000 === 0) await this.whenUnlocked(() => this.purgeStmt.run(record.created_at - IDEMPOTENCY_TTL_MS));
  }

  /** Runs a statement, retrying on a timer while another connection holds the lock. */
  private async whenUnlocked(run: () => unknown): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      try {
        run();
        return;
      } catch (err) {
        if (!(err instanceof Database.SqliteError) || (err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_LOCKED') || Date.now() >= deadline) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  async close() {
    this.db.close();
  }
}

/** Production: a MongoDB collection with a TTL index. */
export class MongoIdempotencyStore implements IdempotencyStore {
  private constructor(private readonly coll: Collection<IdempotencyRecord & { _id: string; expires_at: Date }>) {}

  static async open(db: Db): Promise<MongoIdempotencyStore> {
    const coll = db.collection<IdempotencyRecord & { _id: string; expires_at: Date }>('idempotency_keys');
    await coll.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0, name: 'ttl' });
    return new MongoIdempotencyStore(coll);
  }

  async get(key: string) {
    const doc = await this.coll.findOne({ _id: key });
    return doc ? { key, fingerprint: doc.fingerprint, status: doc.status, body: doc.body, created_at: doc.created_at } : null;
  }

  async put(record: IdempotencyRecord) {
    try {
      await this.coll.insertOne({ _id: record.key, ...record, expires_at: new Date(record.created_at + IDEMPOTENCY_TTL_MS) });
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
    }
  }

  async close() {}
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * `Idempotency-Key` on every write: the same key and body within 24 h replay the first response
 * and append nothing new; the same key with another body gets 409. The command id derives from
 * the key, so even a lost record cannot make a retry append twice.
 */
export function idempotency(store: IdempotencyStore, secrets: SecretBox, clock: Clock) {
  const inFlight = new Map<string, Promise<void>>();
  const keyed = async (ctx: Context, next: Next, header: string) => {
    if (header.length > 255) throw new DomainError(400, 'invalid_idempotency_key', 'Idempotency-Key must be at most 255 characters');
    const p = ctx.state.principal;
    // Unauthenticated keys are scoped to the client address: only the caller that made the
    // request can replay it (a registration's answer holds secrets shown once).
    const scope = p?.agentId ?? (p?.kind === 'user' ? p.userId : undefined) ?? `anonymous ${ctx.ip}`;
    const key = createHash('sha256').update(`${scope}\n${ctx.method} ${ctx.path}\n${header}`).digest('hex');
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(ctx.request.body ?? null))
      .digest('hex');
    ctx.state.commandId = key;

    while (inFlight.has(key)) await inFlight.get(key);
    const existing = await store.get(key);
    if (existing && clock.now().getTime() - existing.created_at < IDEMPOTENCY_TTL_MS) {
      if (existing.fingerprint !== fingerprint) {
        throw new DomainError(409, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request body');
      }
      ctx.status = existing.status;
      ctx.body = JSON.parse(secrets.decrypt(existing.body));
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    let done!: () => void;
    inFlight.set(key, new Promise<void>((r) => (done = r)));
    try {
      await next();
      if (ctx.status < 500 && ctx.status !== 429 && ctx.body !== undefined) {
        await store.put({ key, fingerprint, status: ctx.status, body: secrets.encrypt(JSON.stringify(ctx.body)), created_at: clock.now().getTime() });
      }
    } finally {
      inFlight.delete(key);
      done();
    }
  };
  return function idempotentWrites(ctx: Context, next: Next): Promise<unknown> {
    const header = ctx.req.headers['idempotency-key'];
    // A dry run (`?dry_run=1`) is neither stored nor replayed.
    if (!WRITE_METHODS.has(ctx.method) || !header || ctx.state.dryRun === true) {
      // No key: a fresh command id, and nothing more to do on this request.
      ctx.state.commandId = randomUUID();
      ctx.state.freshCommand = true;
      return next();
    }
    return keyed(ctx, next, Array.isArray(header) ? header.join(', ') : header);
  };
}
