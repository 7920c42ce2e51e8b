// The writer thread of the SQLite event log (started by sqlite.ts). It opens its own connection
// with the same settings and commits the batches waiting for it in one transaction (one fsync),
// checking every append's expected revision against the stream heads, including the appends before
// it in the transaction, then answers with each append's result in order. A failing append is
// undone alone (savepoint); an SQLite error fails the whole transaction.
import Database from 'better-sqlite3';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { ExpectedRevision } from './port.ts';
import { satisfies } from './shared.ts';
import {
  APPENDED,
  CLOSE,
  DUPLICATE,
  DUPLICATE_ID,
  WRONG_REVISION,
  describeFailure,
  type WireBatch,
  type WireReply,
  type WriterData,
  type WriterMessage,
} from './sqlite-wire.ts';

const port = parentPort;
if (port === null) throw new Error('sqlite-writer.thread.ts runs as a worker thread');
const options: WriterData = workerData;

const db = new Database(options.path, { timeout: options.busyTimeoutMs });
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous}`);
db.pragma('cache_size = -65536');
// With the background checkpointer the WAL is copied into the database file off this thread; this
// thread's own checkpoint remains only as a bound on the WAL's size, should the checkpointer fall
// behind.
db.pragma(`wal_autocheckpoint = ${options.autocheckpointPages}`);
// Lock waits are handled below, not by SQLite's busy handler, whose sleeps grow to 100 ms: this
// thread's only contenders are short transactions of other connections (job store, idempotency
// table, the CLI), so it retries every 0.2 ms until the busy timeout has passed.
db.pragma('busy_timeout = 0');
const pause = new Int32Array(new SharedArrayBuffer(4));
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');
const savepoint = db.prepare('SAVEPOINT append');
const release = db.prepare('RELEASE append');
const rollbackTo = db.prepare('ROLLBACK TO append');
const insert = db.prepare<[string, string, number, string, string, string]>(
  'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
);
// Rows: [revision, position] and [stream, revision, position].
const streamHead = db.prepare<[string], [number, number]>('SELECT revision, position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1').raw();
const byId = db.prepare<[string], [string, number, number]>('SELECT stream, revision, position FROM events WHERE id = ?').raw();

interface Append {
  stream: string;
  expected: ExpectedRevision;
  ids: string[];
  types: string[];
  data: string[];
  metadata: string[];
}

/** An outcome (APPENDED, DUPLICATE, ...) and its two values. */
type Result = [number, number, number];

/** Some ids of the append are stored elsewhere or only in part. */
class Refused {}

// null: none of the ids is stored. A result: all are, in this stream (an idempotent retry).
function findStored(a: Append): Result | null {
  let found = 0;
  let conflicting = 0;
  let last: [string, number, number] | undefined;
  for (let i = 0; i < a.ids.length; i++) {
    const row = byId.get(a.ids[i]);
    if (row === undefined) continue;
    if (row[0] === a.stream) found++;
    else conflicting++;
    if (i === a.ids.length - 1) last = row;
  }
  if (found === 0 && conflicting === 0) return null;
  if (found === a.ids.length && last !== undefined) return [DUPLICATE, last[1], last[2]];
  throw new Refused();
}

function isUniqueIdViolation(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE' && error.message.includes('events.id');
}

function apply(a: Append, heads: Map<string, number>): Result {
  let current = heads.get(a.stream);
  if (current === undefined) {
    const head = streamHead.get(a.stream);
    current = head === undefined ? -1 : head[0];
  }
  if (!satisfies(a.expected, current)) {
    const duplicate = findStored(a);
    if (duplicate) return duplicate;
    return [WRONG_REVISION, current, 0];
  }
  const n = a.ids.length;
  if (n === 0) {
    const head = streamHead.get(a.stream);
    return [APPENDED, current, head === undefined ? 0 : head[1]];
  }
  // A single INSERT is atomic on its own; several need a savepoint so that a failure undoes only
  // this append and leaves the rest of the batch.
  if (n > 1) savepoint.run();
  let revision = current;
  let position = 0;
  try {
    for (let i = 0; i < n; i++) {
      revision++;
      position = Number(insert.run(a.ids[i], a.stream, revision, a.types[i], a.data[i], a.metadata[i]).lastInsertRowid);
    }
    if (n > 1) release.run();
  } catch (error) {
    if (n > 1) {
      rollbackTo.run();
      release.run();
    }
    if (!isUniqueIdViolation(error)) throw error;
    const duplicate = findStored(a);
    if (duplicate) return duplicate;
    return [DUPLICATE_ID, 0, 0];
  }
  heads.set(a.stream, revision);
  return [APPENDED, revision, position];
}

function beginImmediate(): void {
  const deadline = Date.now() + options.busyTimeoutMs;
  for (;;) {
    try {
      begin.run();
      return;
    } catch (error) {
      if (!(error instanceof Database.SqliteError) || error.code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 0.2);
    }
  }
}

// Appends one batch (a flat array, see WireBatch) inside the open transaction. The casts read the
// wire layout back: which slots hold numbers is fixed by the main thread's #flush.
function applyBatch(message: WireBatch, heads: Map<string, number>, results: number[]): void {
  for (let k = 0; k < message.length;) {
    const n = message[k + 2] as number;
    const a: Append = {
      stream: message[k] as string,
      expected: message[k + 1] as ExpectedRevision,
      ids: new Array<string>(n),
      types: new Array<string>(n),
      data: new Array<string>(n),
      metadata: new Array<string>(n),
    };
    k += 3;
    for (let j = 0; j < n; j++, k += 4) {
      a.ids[j] = message[k] as string;
      a.types[j] = message[k + 1] as string;
      a.data[j] = message[k + 2] as string;
      a.metadata[j] = message[k + 3] as string;
    }
    let result: Result;
    try {
      result = apply(a, heads);
    } catch (error) {
      if (error instanceof Refused) result = [DUPLICATE_ID, 0, 0];
      else throw error;
    }
    results.push(result[0], result[1], result[2]);
  }
}

// Every batch waiting on the port when this one arrives joins its transaction: while one commit
// runs, the next group forms, so a busy log costs one fsync per group and never waits idle.
port.on('message', (message: WriterMessage) => {
  const batches: WireBatch[] = [];
  let closing = message === CLOSE;
  if (message !== CLOSE) batches.push(message);
  for (let next; !closing && (next = receiveMessageOnPort(port)) !== undefined;) {
    const queued: WriterMessage = next.message;
    if (queued === CLOSE) closing = true;
    else batches.push(queued);
  }
  if (batches.length > 0) {
    const results = [batches.length];
    const heads = new Map<string, number>();
    try {
      beginImmediate();
      for (const batch of batches) applyBatch(batch, heads, results);
      commit.run();
      port.postMessage(results satisfies WireReply);
    } catch (error) {
      try {
        if (db.inTransaction) rollback.run();
      } catch {
        // The transaction's own error is the one to report.
      }
      port.postMessage({ batches: batches.length, ...describeFailure(error) } satisfies WireReply);
    }
  }
  if (closing) {
    db.close();
    port.close();
  }
});
