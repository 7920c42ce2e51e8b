// Embedded event log: one SQLite file (WAL) through better-sqlite3, with group commit.
import Database from 'better-sqlite3';
import {
  StoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventLog,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type Subscription,
  type SubscriptionHandler,
} from './port.ts';
import {
  DuplicateEventIdError,
  InvalidAppendError,
  assertExpectedRevision,
  satisfies,
  type SubscribeOptions,
  type SubscriptionErrorHandler,
} from './index.ts';

export interface SqliteEventLogOptions {
  path: string;
  /** FULL (default): an acknowledged append survives power loss. NORMAL: it survives a process crash only. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a write waits for a lock held by another connection to the same file. */
  busyTimeoutMs?: number;
  /** Default error callback of subscriptions that pass none. Without one, errors go to console.error. */
  onError?: SubscriptionErrorHandler;
  /** Rows per catch-up read of a subscription. */
  catchUpPageSize?: number;
  /**
   * Live events a subscription may hold undelivered; beyond that it drops them and catches up
   * from the file again, so a slow handler cannot grow memory without bound.
   */
  liveBufferLimit?: number;
}

interface PendingAppend {
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

// position, id, stream, revision, type, data, metadata
type EventRow = [number, string, string, number, string, string, string];
// stream, revision, position
type IdRow = [string, number, number];
// revision, position
type HeadRow = [number, number];

// AUTOINCREMENT: a position is never handed out twice, even if rows at the tail were ever removed
// by hand, since projections keep positions. UNIQUE(stream, revision) is both the optimistic
// concurrency guard and the index that finds a stream's head in one seek (it carries the rowid,
// which is the position, so the lookup never touches the table).
const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  stream TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream, revision)
);`;

const COLUMNS = 'position, id, stream, revision, type, data, metadata';
const MAX_REVISION = Number.MAX_SAFE_INTEGER;
const READ_PAGE = 5000;

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row[1],
    type: row[4],
    data: JSON.parse(row[5]) as unknown,
    metadata: JSON.parse(row[6]) as RecordedEvent['metadata'],
    stream: row[2],
    revision: row[3],
    position: row[0],
  };
}

function mapRows(rows: EventRow[]): RecordedEvent[] {
  const out = new Array<RecordedEvent>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = toRecorded(rows[i]);
  return out;
}

function isUniqueIdViolation(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError &&
    error.code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    error.message.includes('events.id')
  );
}

// Lock contention past busy_timeout, I/O failures and a full disk are the store being unavailable,
// not a bug of the caller: they surface as 503.
function toStoreError(error: unknown): unknown {
  if (
    error instanceof Database.SqliteError &&
    /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/.test(error.code)
  ) {
    return new StoreUnavailableError(`sqlite event log: ${error.message}`, { cause: error });
  }
  return error;
}

export class SqliteEventLog implements EventLog {
  readonly name = 'sqlite';
  /** Counters for tests and metrics: committed write transactions, appends and events written. */
  readonly stats = { transactions: 0, appends: 0, events: 0 };
  /** Default error callback of subscriptions (see SqliteEventLogOptions.onError). */
  onError: SubscriptionErrorHandler | undefined;

  readonly #path: string;
  readonly #db: Database.Database;
  readonly #catchUpPageSize: number;
  readonly #liveBufferLimit: number;
  #closed = false;
  /** Highest position handed to live subscribers (or known committed when none listen). */
  #lastSeen = 0;
  #poller: NodeJS.Timeout | undefined;
  #queue: PendingAppend[] = [];
  #flushScheduled = false;
  readonly #subscriptions = new Set<SqliteSubscription>();
  readonly #live = new Set<SqliteSubscription>();
  readonly #host: SubscriptionHost = {
    read: (after, limit) => {
      this.#assertOpen();
      return mapRows(this.#readAll.all(after, limit) as EventRow[]);
    },
    setLive: (subscription, live) => {
      if (live && !this.#closed) {
        // The subscriber has read every committed event: live delivery continues from the head.
        this.#lastSeen = Math.max(this.#lastSeen, Number(this.#head.get() ?? 0));
        this.#live.add(subscription);
        this.#watchOtherWriters();
      } else this.#live.delete(subscription);
    },
    forget: (subscription) => {
      this.#live.delete(subscription);
      this.#subscriptions.delete(subscription);
    },
  };

  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #savepoint: Database.Statement;
  readonly #release: Database.Statement;
  readonly #rollbackTo: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #streamHead: Database.Statement;
  readonly #byId: Database.Statement;
  readonly #readAll: Database.Statement;
  readonly #readForwards: Database.Statement;
  readonly #readBackwards: Database.Statement;
  readonly #head: Database.Statement;
  readonly #ping: Database.Statement;

  private constructor(options: SqliteEventLogOptions, db: Database.Database) {
    this.#path = options.path;
    this.#db = db;
    this.onError = options.onError;
    this.#catchUpPageSize = options.catchUpPageSize ?? 5000;
    this.#liveBufferLimit = options.liveBufferLimit ?? 100_000;

    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT append');
    this.#release = db.prepare('RELEASE append');
    this.#rollbackTo = db.prepare('ROLLBACK TO append');
    this.#insert = db.prepare(
      'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.#streamHead = db
      .prepare('SELECT revision, position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1')
      .raw();
    this.#byId = db.prepare('SELECT stream, revision, position FROM events WHERE id = ?').raw();
    this.#readAll = db
      .prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`)
      .raw();
    this.#readForwards = db
      .prepare(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
      )
      .raw();
    this.#readBackwards = db
      .prepare(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`,
      )
      .raw();
    this.#head = db.prepare('SELECT max(position) FROM events').pluck();
    this.#ping = db.prepare('SELECT 1').pluck();
  }

  static open(options: SqliteEventLogOptions): SqliteEventLog {
    let db: Database.Database | undefined;
    try {
      db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`cannot switch ${options.path} to WAL (journal_mode=${String(mode)})`);
      db.pragma(`synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      db.pragma('cache_size = -65536');
      db.exec(SCHEMA);
      return new SqliteEventLog(options, db);
    } catch (error) {
      db?.close();
      throw toStoreError(error);
    }
  }

  /** The file other components (job scheduler, idempotency table) open with their own connections. */
  get sqlitePath(): string {
    return this.#path;
  }

  /** Connection settings as SQLite reports them (synchronous: 0 OFF, 1 NORMAL, 2 FULL). */
  diagnostics(): { synchronous: number; journalMode: string; busyTimeoutMs: number } {
    this.#assertOpen();
    return {
      synchronous: this.#db.pragma('synchronous', { simple: true }) as number,
      journalMode: this.#db.pragma('journal_mode', { simple: true }) as string,
      busyTimeoutMs: this.#db.pragma('busy_timeout', { simple: true }) as number,
    };
  }

  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('sqlite event log is closed'));
    try {
      assertExpectedRevision(expected);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ stream, events, expected, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(this.#flushCallback);
      }
    });
  }

  readonly #flushCallback = (): void => {
    this.#flushScheduled = false;
    this.#flush();
  };

  // Writes every queued append in one transaction (one fsync), then settles their promises and
  // feeds live subscribers from the rows it inserted.
  #flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    const results = new Array<AppendResult | undefined>(batch.length);
    const errors = new Array<unknown>(batch.length);
    const live = this.#live.size > 0;
    const rows: EventRow[] = [];
    const heads = new Map<string, number>();
    try {
      this.#begin.run();
      for (let i = 0; i < batch.length; i++) {
        try {
          results[i] = this.#apply(batch[i], heads, live ? rows : undefined);
        } catch (error) {
          if (error instanceof Database.SqliteError) throw error;
          errors[i] = error;
        }
      }
      this.#commit.run();
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run();
      const failure = toStoreError(error);
      for (const pending of batch) pending.reject(failure);
      return;
    }
    this.stats.transactions++;
    if (rows.length === 0) {
      for (const r of results) if (r && !r.duplicate && r.position > this.#lastSeen && this.#live.size === 0) this.#lastSeen = r.position;
    }
    for (let i = 0; i < batch.length; i++) {
      const result = results[i];
      if (result === undefined) {
        batch[i].reject(errors[i]);
      } else {
        if (!result.duplicate) {
          this.stats.appends++;
          this.stats.events += batch[i].events.length;
        }
        batch[i].resolve(result);
      }
    }
    if (rows.length > 0) {
      const recorded = mapRows(rows);
      const first = recorded[0].position;
      // Positions we did not write lie between what subscribers saw and our rows: another
      // connection (the CLI, another process) committed them first. Deliver them in order.
      const gap = first > this.#lastSeen + 1 ? this.#host.read(this.#lastSeen, first - 1 - this.#lastSeen) : [];
      this.#lastSeen = recorded[recorded.length - 1].position;
      const all = gap.length ? [...gap, ...recorded] : recorded;
      for (const subscription of this.#live) subscription.push(all);
    }
  }

  /** While anyone listens live, notices commits made through other connections to the file. */
  #watchOtherWriters(): void {
    if (this.#poller || this.#closed) return;
    this.#poller = setInterval(() => {
      if (this.#closed || this.#live.size === 0) {
        clearInterval(this.#poller);
        this.#poller = undefined;
        return;
      }
      if (this.#queue.length > 0) return;
      const head = Number(this.#head.get() ?? 0);
      if (head <= this.#lastSeen) return;
      const events = this.#host.read(this.#lastSeen, head - this.#lastSeen);
      if (events.length === 0) return;
      this.#lastSeen = events[events.length - 1].position;
      for (const subscription of this.#live) subscription.push(events);
    }, 250);
    this.#poller.unref();
  }

  #apply(pending: PendingAppend, heads: Map<string, number>, rows: EventRow[] | undefined): AppendResult {
    const { stream, events, expected } = pending;
    let current = heads.get(stream);
    if (current === undefined) {
      const head = this.#streamHead.get(stream) as HeadRow | undefined;
      current = head === undefined ? -1 : head[0];
    }
    if (!satisfies(expected, current)) {
      const duplicate = this.#findStored(stream, events);
      if (duplicate) return duplicate;
      throw new WrongExpectedRevisionError(stream, expected, current < 0 ? 'no_stream' : current);
    }
    const n = events.length;
    if (n === 0) {
      const head = this.#streamHead.get(stream) as HeadRow | undefined;
      return { revision: current, position: head === undefined ? 0 : head[1], duplicate: false };
    }
    const data = new Array<string>(n);
    const metadata = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const event = events[i];
      const d = JSON.stringify(event.data) as string | undefined;
      const m = JSON.stringify(event.metadata) as string | undefined;
      if (typeof event.id !== 'string' || typeof event.type !== 'string' || d === undefined || m === undefined) {
        throw new InvalidAppendError(`stream ${stream}: event ${i} needs a string id and type and JSON data and metadata`);
      }
      data[i] = d;
      metadata[i] = m;
    }
    if (n > 1 && new Set(events.map((e) => e.id)).size !== n) {
      throw new DuplicateEventIdError(stream, events.map((e) => e.id));
    }
    // A single INSERT is atomic on its own; several need a savepoint so that a failure undoes
    // only this append and leaves the rest of the batch.
    if (n > 1) this.#savepoint.run();
    const rowsBefore = rows?.length ?? 0;
    let revision = current;
    let position = 0;
    try {
      for (let i = 0; i < n; i++) {
        const event = events[i];
        revision++;
        position = Number(
          this.#insert.run(event.id, stream, revision, event.type, data[i], metadata[i]).lastInsertRowid,
        );
        if (rows) rows.push([position, event.id, stream, revision, event.type, data[i], metadata[i]]);
      }
      if (n > 1) this.#release.run();
    } catch (error) {
      if (n > 1) {
        this.#rollbackTo.run();
        this.#release.run();
      }
      if (rows) rows.length = rowsBefore;
      if (!isUniqueIdViolation(error)) throw error;
      const duplicate = this.#findStored(stream, events);
      if (duplicate) return duplicate;
      throw new DuplicateEventIdError(stream, events.map((e) => e.id));
    }
    heads.set(stream, revision);
    return { revision, position, duplicate: false };
  }

  // null: none of the ids is stored. A result: all are, in this stream (an idempotent retry).
  #findStored(stream: string, events: NewEvent[]): AppendResult | null {
    let found = 0;
    const conflicting: string[] = [];
    let last: IdRow | undefined;
    for (let i = 0; i < events.length; i++) {
      const row = this.#byId.get(events[i].id) as IdRow | undefined;
      if (row === undefined) continue;
      if (row[0] === stream) found++;
      else conflicting.push(events[i].id);
      if (i === events.length - 1) last = row;
    }
    if (found === 0 && conflicting.length === 0) return null;
    if (found === events.length && last !== undefined) {
      return { revision: last[1], position: last[2], duplicate: true };
    }
    throw new DuplicateEventIdError(stream, events.map((e) => e.id));
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.#assertOpen();
    const limit = options.maxCount ?? -1;
    if (limit === 0) return [];
    const rows =
      options.direction === 'backwards'
        ? this.#readBackwards.all(stream, options.fromRevision ?? MAX_REVISION, limit)
        : this.#readForwards.all(stream, options.fromRevision ?? 0, limit);
    return mapRows(rows as EventRow[]);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.#assertOpen();
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    let after = options.after ?? 0;
    const out: RecordedEvent[] = [];
    // Pages keep the raw rows of one page alive at a time, which reads large logs faster than one
    // big statement (less garbage to collect).
    while (remaining > 0) {
      const limit = Math.min(remaining, READ_PAGE);
      const rows = this.#readAll.all(after, limit) as EventRow[];
      for (let i = 0; i < rows.length; i++) out.push(toRecorded(rows[i]));
      if (rows.length < limit) break;
      after = rows[rows.length - 1][0];
      remaining -= rows.length;
    }
    return out;
  }

  async headPosition(): Promise<number> {
    this.#assertOpen();
    return (this.#head.get() as number | null) ?? 0;
  }

  /**
   * Catch-up from the file in pages, then live from the commits of this process. Handlers get
   * batches in log order, one call at a time. Commits made by other connections to the file are
   * not seen live (this log is the single writer of the events table).
   */
  subscribeAll(after: number, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    this.#assertOpen();
    const subscription = new SqliteSubscription(
      this.#host,
      after,
      handler,
      options.onError ?? this.onError,
      this.#catchUpPageSize,
      this.#liveBufferLimit,
    );
    this.#subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  async ping(): Promise<void> {
    this.#assertOpen();
    try {
      this.#ping.get();
    } catch (error) {
      throw new StoreUnavailableError('sqlite event log: ping failed', { cause: error });
    }
  }

  /** Commits the appends still queued, stops the subscriptions, then closes the connection. */
  async close(): Promise<void> {
    if (this.#poller) clearInterval(this.#poller);
    this.#poller = undefined;
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#live.clear();
    await Promise.all([...this.#subscriptions].map((s) => s.close()));
    this.#db.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreUnavailableError('sqlite event log is closed');
  }
}

/** What a subscription needs from its log, kept off the log's public surface. */
interface SubscriptionHost {
  /** Synchronous page read: events after `after`, at most `limit`. */
  read(after: number, limit: number): RecordedEvent[];
  /** Joins or leaves live delivery of committed batches. */
  setLive(subscription: SqliteSubscription, live: boolean): void;
  forget(subscription: SqliteSubscription): void;
}

class SqliteSubscription implements Subscription {
  #cursor: number;
  #queue: RecordedEvent[][] = [];
  #queued = 0;
  #live = false;
  #closed = false;
  #wake: (() => void) | undefined;
  #running: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: SubscriptionHost,
    after: number,
    private readonly handler: SubscriptionHandler,
    private readonly onError: SubscriptionErrorHandler | undefined,
    private readonly pageSize: number,
    private readonly bufferLimit: number,
  ) {
    this.#cursor = after;
  }

  start(): void {
    this.#running = this.#run();
  }

  /** Live events from a commit, in log order. */
  push(events: RecordedEvent[]): void {
    if (!this.#live) return;
    this.#queue.push(events);
    this.#queued += events.length;
    if (this.#queued > this.bufferLimit) {
      // Too far behind: drop the buffer and read the file again from the cursor.
      this.#queue = [];
      this.#queued = 0;
      this.#live = false;
      this.host.setLive(this, false);
    }
    this.#signal();
  }

  async #run(): Promise<void> {
    // The first handler call never happens inside subscribeAll().
    await Promise.resolve();
    try {
      while (!this.#closed) {
        if (!this.#live) {
          const page = this.host.read(this.#cursor, this.pageSize);
          if (page.length < this.pageSize) {
            // This read saw every committed event, and commits only happen between our turns,
            // so joining live now leaves no gap; overlap is filtered by position below.
            this.#live = true;
            this.host.setLive(this, true);
          }
          if (page.length > 0) {
            this.#cursor = page[page.length - 1].position;
            await this.handler(page);
          }
          continue;
        }
        if (this.#queue.length === 0) {
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = undefined;
          continue;
        }
        const events = this.#takeQueued();
        if (events.length > 0) {
          this.#cursor = events[events.length - 1].position;
          await this.handler(events);
        }
      }
    } catch (error) {
      if (this.#closed) return;
      this.#closed = true;
      this.host.forget(this);
      try {
        if (this.onError) this.onError(error);
        else console.error('event log subscription stopped:', error);
      } catch (callbackError) {
        console.error('event log subscription onError threw:', callbackError);
      }
    }
  }

  #takeQueued(): RecordedEvent[] {
    let take = 0;
    let count = 0;
    while (take < this.#queue.length && (count === 0 || count + this.#queue[take].length <= this.pageSize)) {
      count += this.#queue[take].length;
      take++;
    }
    const batches = this.#queue.splice(0, take);
    this.#queued -= count;
    const out: RecordedEvent[] = [];
    const cursor = this.#cursor;
    for (const batch of batches) {
      for (const event of batch) if (event.position > cursor) out.push(event);
    }
    return out;
  }

  #signal(): void {
    const wake = this.#wake;
    if (wake) {
      this.#wake = undefined;
      wake();
    }
  }

  /** Stops delivery; resolves once a handler call under way has returned. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.host.forget(this);
      this.#signal();
    }
    await this.#running;
  }
}
