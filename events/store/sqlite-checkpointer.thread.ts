// The checkpointer thread of the SQLite event log (started by sqlite.ts): copies the WAL's
// committed frames into the database file every intervalMs with a PASSIVE checkpoint, which never
// blocks the writer or readers. Doing it inside the writer's commits (SQLite's default
// auto-checkpoint) stalls every append waiting on that commit for the duration of the copy (about
// 10 ms per 1000 pages here), and copying frames often lets the next transaction that finds the WAL
// fully copied start it over from the beginning. A checkpoint that cannot run now (another
// checkpoint holds the lock) is simply tried next time.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { CLOSE, describeFailure, type CheckpointerData, type CheckpointerMessage, type CheckpointerReply } from './sqlite-wire.ts';

const port = parentPort;
if (port === null) throw new Error('sqlite-checkpointer.thread.ts runs as a worker thread');
const options: CheckpointerData = workerData;

const db = new Database(options.path);
db.pragma(`synchronous = ${options.synchronous}`);
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch (error) {
    const failure: CheckpointerReply = describeFailure(error);
    if (failure.code !== 'SQLITE_BUSY' && failure.code !== 'SQLITE_LOCKED') {
      clearInterval(timer);
      port.postMessage(failure);
    }
  }
}, options.intervalMs);
port.on('message', (message: CheckpointerMessage) => {
  if (message !== CLOSE) return;
  clearInterval(timer);
  db.close();
  port.close();
});
