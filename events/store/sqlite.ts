// Embedded event log: one SQLite file (WAL) through better-sqlite3, with group commit. Appends are
// written by a writer thread (sqlite-writer.thread.ts) with its own connection, so inserting,
// committing and fsync never hold up the event loop; reads and subscriptions use this thread's
// connection. A second thread (sqlite-checkpointer.thread.ts) copies the WAL into the file.
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import {
  StoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventLog,
  type EventLogObserver,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type Subscription,
  type SubscriptionHandler,
} from './port.ts';
import { DuplicateEventIdError, InvalidAppendError, assertExpectedRevision, type SubscribeOptions, type SubscriptionErrorHandler } from './shared.ts';
import {
  CLOSE,
  DUPLICATE,
  DUPLICATE_ID,
  WRONG_REVISION,
  type CheckpointerData,
  type CheckpointerMessage,
  type CheckpointerReply,
  type WireBatch,
  type WireReply,
  type WriterData,
  type WriterMessage,
} from './sqlite-wire.ts';
import { startTsThread } from './ts-thread.ts';
import { upcast } from '../upcasters.ts';
import { stringifyAnyDepth } from '../kernel/json.ts';
import { BoundedCache } from '../kernel/cache.ts';

export interface SqliteEventLogOptions {
  path: string;
  /** FULL (default): an acknowledged append survives power loss. NORMAL: it survives a process crash only. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a write waits for a lock held by another connection to the same file. */
  busyTimeoutMs?: number;
  /**
   * How often a background thread copies committed WAL frames into the database file (a PASSIVE
   * checkpoint, which never blocks the writer), in ms. 0 turns it off: the writer then checkpoints
   * itself every 1000 pages as SQLite does by default, inside the commit of an append.
   */
  checkpointIntervalMs?: number;
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
  /** performance.now() at the call, when an observer watches (else 0). */
  at: number;
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  /** JSON of each event's data and metadata, made once here and written as they are. */
  data: string[];
  metadata: string[];
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

// position, id, stream, revision, type, data, metadata
type EventRow = [number, string, string, number, string, string, string];

// events_by_type (its entries carry the rowid, the position) serves the reads of a few event types
// (ReadAllOptions.types: a one-projection rebuild, export and tail filters) without a scan of the
// log. Files written before it existed get it when this version first opens them (CREATE INDEX IF
// NOT EXISTS: built once, about a second per 500,000 events, under the file's write lock).
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
);
CREATE INDEX IF NOT EXISTS events_by_type ON events (type);`;

const COLUMNS = 'position, id, stream, revision, type, data, metadata';
const MAX_REVISION = Number.MAX_SAFE_INTEGER;
const READ_PAGE = 5000;

function toRecorded(row: EventRow): RecordedEvent {
  return upcast({
    id: row[1],
    type: row[4],
    data: JSON.parse(row[5]) as unknown,
    metadata: JSON.parse(row[6]) as RecordedEvent['metadata'],
    stream: row[2],
    revision: row[3],
    position: row[0],
  });
}

function mapRows(rows: EventRow[]): RecordedEvent[] {
  const out = new Array<RecordedEvent>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = toRecorded(rows[i]);
  return out;
}

// Lock contention past busy_timeout, I/O failures and a full disk are the store being unavailable,
// not a bug of the caller: they surface as 503.
function toStoreError(error: unknown): unknown {
  if (error instanceof Database.SqliteError && /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/.test(error.code)) {
    return new StoreUnavailableError(`sqlite event log: ${error.message}`, { cause: error });
  }
  return error;
}

/** The writer's own auto-checkpoint threshold (pages) while the checkpointer thread runs. */
const WAL_BOUND_PAGES = 10_000;
const DEFAULT_CHECKPOINT_INTERVAL_MS = 10;

export class SqliteEventLog implements EventLog {
  readonly name = 'sqlite';
  /** Counters for tests and metrics: committed write transactions, appends and events written. */
  readonly stats = { transactions: 0, appends: 0, events: 0 };
  /** Default error callback of subscriptions (see SqliteEventLogOptions.onError). */
  onError: SubscriptionErrorHandler | undefined;
  observer: EventLogObserver | null = null;

  readonly #path: string;
  readonly #db: Database.Database;
  readonly #catchUpPageSize: number;
  readonly #liveBufferLimit: number;
  #closed = false;
  /** Set by close(): appends are refused, the ones already queued are still committed. */
  #closing = false;
  /** Highest position handed to live subscribers (or known committed when none listen). */
  #lastSeen = 0;
  #poller: NodeJS.Timeout | undefined;
  #queue: PendingAppend[] = [];
  #flushScheduled = false;
  /** Batches handed to the writer thread and not answered yet, oldest first. */
  #inFlight: PendingAppend[][] = [];
  readonly #writer: Worker;
  /** The background checkpointer (null when checkpointIntervalMs is 0). */
  readonly #checkpointer: Worker | null;
  #checkpointerExited: Promise<void> = Promise.resolve();
  /** Set when the writer thread died: every append fails with it from then on. */
  #writerFailure: Error | null = null;
  #writerExited: Promise<void>;
  #idle: Array<() => void> = [];
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
        // Rows the writer committed but has not reported yet are delivered again when it does,
        // and filtered out by the subscriber's cursor.
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

  readonly #readAll: Database.Statement;
  readonly #readForwards: Database.Statement;
  readonly #readBackwards: Database.Statement;
  readonly #head: Database.Statement;
  readonly #ping: Database.Statement;
  readonly #byTypes = new BoundedCache<string, Database.Statement>({ max: 64 });

  private constructor(options: SqliteEventLogOptions, db: Database.Database) {
    const checkpointIntervalMs = options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    this.#path = options.path;
    this.#db = db;
    this.onError = options.onError;
    this.#catchUpPageSize = options.catchUpPageSize ?? 5000;
    this.#liveBufferLimit = options.liveBufferLimit ?? 100_000;

    this.#readAll = db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw();
    this.#readForwards = db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`).raw();
    this.#readBackwards = db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`).raw();
    this.#head = db.prepare('SELECT max(position) FROM events').pluck();
    this.#ping = db.prepare('SELECT 1').pluck();

    const synchronous = options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL';
    const writerData: WriterData = {
      path: options.path,
      synchronous,
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      autocheckpointPages: checkpointIntervalMs > 0 ? WAL_BOUND_PAGES : 1000,
    };
    this.#writer = startTsThread(new URL('./sqlite-writer.thread.ts', import.meta.url), writerData);
    // Only a batch in flight keeps the process alive.
    this.#writer.unref();
    this.#writer.on('message', (reply: WireReply) => this.#settle(reply));
    this.#writer.on('error', (error) => this.#writerDied(error));
    this.#writerExited = new Promise((resolve) => this.#writer.once('exit', () => resolve()));
    this.#writer.once('exit', () => this.#writerDied(new Error('the writer thread exited')));

    this.#checkpointer = null;
    if (checkpointIntervalMs > 0) {
      const checkpointerData: CheckpointerData = { path: options.path, synchronous, intervalMs: checkpointIntervalMs };
      const checkpointer = startTsThread(new URL('./sqlite-checkpointer.thread.ts', import.meta.url), checkpointerData);
      checkpointer.unref();
      // A checkpointer that fails or dies costs nothing but speed: the writer's own bounded
      // auto-checkpoint keeps the WAL from growing without end.
      checkpointer.on('message', (failure: CheckpointerReply) => {
        process.emitWarning(`sqlite event log: background checkpoints stopped (${failure.code}: ${failure.message})`);
      });
      checkpointer.on('error', (error) => process.emitWarning(`sqlite event log: checkpointer thread failed: ${error.message}`));
      this.#checkpointerExited = new Promise((resolve) => checkpointer.once('exit', () => resolve()));
      this.#checkpointer = checkpointer;
    }
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
    if (this.#closing) return Promise.reject(new StoreUnavailableError('sqlite event log is closed'));
    if (this.#writerFailure) return Promise.reject(this.#writerFailure);
    const n = events.length;
    const data = new Array<string>(n);
    const metadata = new Array<string>(n);
    try {
      assertExpectedRevision(expected);
      for (let i = 0; i < n; i++) {
        const event = events[i];
        // Any depth: an event too deep for JSON.stringify's recursion is still written.
        const d = stringifyAnyDepth(event.data);
        const m = stringifyAnyDepth(event.metadata);
        if (typeof event.id !== 'string' || typeof event.type !== 'string' || d === undefined || m === undefined) {
          throw new InvalidAppendError(`stream ${stream}: event ${i} needs a string id and type and JSON data and metadata`);
        }
        data[i] = d;
        metadata[i] = m;
      }
      if (n > 1 && new Set(events.map((e) => e.id)).size !== n) {
        throw new DuplicateEventIdError(
          stream,
          events.map((e) => e.id),
        );
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ at: this.observer ? performance.now() : 0, stream, events, expected, data, metadata, resolve, reject });
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

  // Hands every queued append to the writer thread as one batch. The writer commits whatever
  // batches are waiting for it in one transaction (one fsync).
  #flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) {
      this.#notifyIdle();
      return;
    }
    this.#queue = [];
    if (this.#writerFailure) {
      for (const pending of batch) pending.reject(this.#writerFailure);
      this.#notifyIdle();
      return;
    }
    const wire: WireBatch = [];
    for (let i = 0; i < batch.length; i++) {
      const { stream, expected, events, data, metadata } = batch[i];
      wire.push(stream, expected, events.length);
      for (let j = 0; j < events.length; j++) wire.push(events[j].id, events[j].type, data[j], metadata[j]);
    }
    this.#inFlight.push(batch);
    this.#writer.ref();
    this.#writer.postMessage(wire satisfies WriterMessage);
  }

  // The writer thread's answer to one transaction: settles its appends' promises in order and
  // feeds live subscribers from the rows it wrote.
  #settle(reply: WireReply): void {
    const count = Array.isArray(reply) ? reply[0] : reply.batches;
    const batches = this.#inFlight.splice(0, count);
    if (this.#inFlight.length === 0) this.#writer.unref();
    const batch = batches.length === 1 ? batches[0] : batches.flat();
    const observer = this.observer;
    if (!Array.isArray(reply)) {
      const failure = toStoreError(new Database.SqliteError(reply.message, reply.code));
      for (const pending of batch) {
        if (observer && pending.at > 0) observer.appended((performance.now() - pending.at) / 1000, 'failed', pending.events);
        pending.reject(failure);
      }
      this.#notifyIdle();
      return;
    }
    this.stats.transactions++;
    const settledAt = observer ? performance.now() : 0;
    let written = 0;
    let writtenEvents = 0;
    const live = this.#live.size > 0;
    const recorded: RecordedEvent[] = [];
    for (let i = 0; i < batch.length; i++) {
      const pending = batch[i];
      const outcome = reply[1 + 3 * i];
      const revision = reply[2 + 3 * i];
      const position = reply[3 + 3 * i];
      if (outcome === WRONG_REVISION) {
        if (observer && pending.at > 0) observer.appended((settledAt - pending.at) / 1000, 'conflict', pending.events);
        pending.reject(new WrongExpectedRevisionError(pending.stream, pending.expected, revision < 0 ? 'no_stream' : revision));
        continue;
      }
      if (outcome === DUPLICATE_ID) {
        if (observer && pending.at > 0) observer.appended((settledAt - pending.at) / 1000, 'failed', pending.events);
        pending.reject(
          new DuplicateEventIdError(
            pending.stream,
            pending.events.map((e) => e.id),
          ),
        );
        continue;
      }
      const duplicate = outcome === DUPLICATE;
      const n = pending.events.length;
      if (observer && pending.at > 0) observer.appended((settledAt - pending.at) / 1000, duplicate ? 'duplicate' : 'written', pending.events);
      if (!duplicate && n > 0) {
        this.stats.appends++;
        this.stats.events += n;
        written++;
        writtenEvents += n;
        if (live) {
          // One writer, one transaction: an append's rows have consecutive positions.
          for (let j = 0; j < n; j++) {
            const event = pending.events[j];
            recorded.push(
              upcast({
                id: event.id,
                type: event.type,
                data: JSON.parse(pending.data[j]) as unknown,
                metadata: JSON.parse(pending.metadata[j]) as RecordedEvent['metadata'],
                stream: pending.stream,
                revision: revision - (n - 1 - j),
                position: position - (n - 1 - j),
              }),
            );
          }
        } else if (position > this.#lastSeen) this.#lastSeen = position;
      }
      pending.resolve({ revision, position, duplicate });
    }
    if (observer && written > 0) observer.committed?.(written, writtenEvents);
    if (recorded.length > 0) {
      const first = recorded[0].position;
      // Positions we did not write lie between what subscribers saw and our rows: another
      // connection (the CLI, another process) committed them first. Deliver them in order.
      const gap = first > this.#lastSeen + 1 ? this.#host.read(this.#lastSeen, first - 1 - this.#lastSeen) : [];
      this.#lastSeen = Math.max(this.#lastSeen, recorded[recorded.length - 1].position);
      const all = gap.length ? [...gap, ...recorded] : recorded;
      for (const subscription of this.#live) subscription.push(all);
    }
    this.#notifyIdle();
  }

  #writerDied(error: Error): void {
    if (this.#writerFailure) return;
    this.#writerFailure = new StoreUnavailableError(`sqlite event log: ${this.#closing ? 'closed' : error.message}`, { cause: error });
    const batches = this.#inFlight;
    this.#inFlight = [];
    const queued = this.#queue;
    this.#queue = [];
    for (const pending of [...batches.flat(), ...queued]) pending.reject(this.#writerFailure);
    this.#notifyIdle();
  }

  #notifyIdle(): void {
    if (this.#inFlight.length > 0 || this.#queue.length > 0) return;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
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
      this.#deliverForeign();
    }, 250);
    this.#poller.unref();
  }

  /**
   * Delivers to the live subscribers the commits other processes made to the file, now rather
   * than at the next poll: a projector process calls it when an API process says it appended.
   */
  poke(): void {
    if (this.#closed || this.#live.size === 0) return;
    this.#deliverForeign();
  }

  #deliverForeign(): void {
    // Our own commits are delivered by #settle, in order with anything foreign before them.
    if (this.#queue.length > 0 || this.#inFlight.length > 0) return;
    const head = Number(this.#head.get() ?? 0);
    if (head <= this.#lastSeen) return;
    const events = this.#host.read(this.#lastSeen, head - this.#lastSeen);
    if (events.length === 0) return;
    this.#lastSeen = events[events.length - 1].position;
    for (const subscription of this.#live) subscription.push(events);
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
    if (options.types !== undefined) return this.#readTypes(options.types, options.after ?? 0, options.maxCount ?? Number.POSITIVE_INFINITY);
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

  // The positions of the page come from events_by_type alone (the subquery sorts positions, never
  // rows); the rows are then fetched by position. One statement per list of types, kept.
  #readTypes(types: readonly string[], after: number, maxCount: number): RecordedEvent[] {
    const distinct = [...new Set(types)].sort();
    if (distinct.length === 0 || maxCount <= 0) return [];
    const key = distinct.join('\u0000');
    let statement = this.#byTypes.get(key);
    if (statement === undefined) {
      const marks = distinct.map(() => '?').join(', ');
      statement = this.#db
        .prepare(
          `SELECT ${COLUMNS} FROM events WHERE position IN (SELECT position FROM events WHERE type IN (${marks}) AND position > ? ORDER BY position LIMIT ?) ORDER BY position`,
        )
        .raw();
      this.#byTypes.set(key, statement);
    }
    const out: RecordedEvent[] = [];
    let remaining = maxCount;
    let cursor = after;
    while (remaining > 0) {
      const limit = Math.min(remaining, READ_PAGE);
      const rows = statement.all(...distinct, cursor, limit) as EventRow[];
      for (let i = 0; i < rows.length; i++) out.push(toRecorded(rows[i]));
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1][0];
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
   * noticed by a poll while this log is idle.
   */
  subscribeAll(after: number, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    this.#assertOpen();
    const subscription = new SqliteSubscription(this.#host, after, handler, options.onError ?? this.onError, this.#catchUpPageSize, this.#liveBufferLimit);
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

  /** Commits the appends still queued, stops the subscriptions, then closes the connections. */
  async close(): Promise<void> {
    if (this.#poller) clearInterval(this.#poller);
    this.#poller = undefined;
    if (this.#closing) return;
    this.#closing = true;
    if (this.#inFlight.length > 0 || this.#queue.length > 0) {
      const idle = new Promise<void>((resolve) => this.#idle.push(resolve));
      this.#flush();
      await idle;
    }
    this.#closed = true;
    this.#live.clear();
    await Promise.all([...this.#subscriptions].map((s) => s.close()));
    if (!this.#writerFailure) {
      this.#writer.ref();
      this.#writer.postMessage(CLOSE satisfies WriterMessage);
    }
    await this.#writerExited;
    if (this.#checkpointer) {
      this.#checkpointer.ref();
      this.#checkpointer.postMessage(CLOSE satisfies CheckpointerMessage);
      await this.#checkpointerExited;
    }
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
            // This read saw every committed event, and the log delivers every commit it learns
            // of after this turn (its own writer's, and foreign ones before them or by its
            // poll), so joining live now leaves no gap; overlap is filtered by position below.
            this.#live = true;
            this.host.setLive(this, true);
          }
          if (page.length > 0) {
            this.#cursor = page[page.length - 1].position;
            await this.handler(page);
            // Reading and a handler that completes synchronously never give the event loop a
            // turn: without this, a long catch-up would hold off every request (even the 503
            // of a service still starting) and signals until it ends.
            if (!this.#live) await new Promise<void>((resolve) => setImmediate(resolve));
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
