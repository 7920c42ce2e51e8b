// Agenda set-up: one Agenda 6 instance on the embedded SQLite backend (default) or on MongoDB.
//
// Lifecycle, in short (see also stopAgenda below):
//   const agenda = await createAgenda({ sqlitePath });   // backend connected, nothing polled yet
//   agenda.define('name', async (job) => { ... });       // define before start()
//   await agenda.start();                                // polls every `processEvery`
//   ...
//   await stopAgenda(agenda);                            // stop polling, let running jobs finish, close

import { Agenda } from 'agenda';
import type { AgendaBackend } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { SqliteAgendaBackend } from './backends/sqlite-backend.ts';

export interface CreateAgendaOptions {
  /** SQLite file of the embedded mode (the event log's file). Used unless mongodbUrl is given. */
  sqlitePath?: string;
  /** MongoDB address (with the database name in its path); jobs go to the 'agendaJobs' collection. */
  mongodbUrl?: string;
  /** Poll interval: ms or a human interval such as '5 seconds' (Agenda's default: 5000 ms). */
  processEvery?: string | number;
  /** Name of this instance: written to each job's lastModifiedBy when it locks or saves it. */
  name?: string;
  /** SQLite only: `synchronous` of the job store's connection (default FULL; see SqliteAgendaBackend). */
  sqliteSynchronous?: 'FULL' | 'NORMAL';
}

interface Tracked {
  backend: AgendaBackend;
  running: number;
  idle: (() => void)[];
}

const tracked = new WeakMap<Agenda, Tracked>();

/**
 * Agenda guarantees a backend is connected once; calling connect() here first (so that a bad path
 * or an unreachable server rejects createAgenda instead of becoming an unhandled rejection inside
 * Agenda's constructor) and then again from the constructor must not open a second connection.
 */
function connectOnce(backend: AgendaBackend): AgendaBackend {
  let connecting: Promise<void> | undefined;
  return {
    get name() {
      return backend.name;
    },
    get repository() {
      return backend.repository;
    },
    get notificationChannel() {
      return backend.notificationChannel;
    },
    get logger() {
      return backend.logger;
    },
    get ownsConnection() {
      return backend.ownsConnection;
    },
    connect() {
      connecting ??= backend.connect();
      return connecting;
    },
    async disconnect() {
      connecting = undefined;
      await backend.disconnect();
    },
  };
}

/**
 * A new Agenda on the SQLite backend (or on MongoBackend when `mongodbUrl` is given), with its
 * backend already connected. It is not started: define the jobs, then call `start()`.
 */
export async function createAgenda(options: CreateAgendaOptions): Promise<Agenda> {
  let inner: AgendaBackend;
  if (options.mongodbUrl) inner = new MongoBackend({ address: options.mongodbUrl, collection: 'agendaJobs' });
  else if (options.sqlitePath) inner = new SqliteAgendaBackend({ path: options.sqlitePath, synchronous: options.sqliteSynchronous ?? 'FULL' });
  else throw new Error('createAgenda: give sqlitePath (embedded mode) or mongodbUrl');

  const backend = connectOnce(inner);
  try {
    await backend.connect();
  } catch (error) {
    await inner.disconnect().catch(() => undefined);
    throw error;
  }

  const agenda = new Agenda({
    backend,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.processEvery !== undefined ? { processEvery: options.processEvery } : {}),
  });
  await agenda.ready;

  const state: Tracked = { backend, running: 0, idle: [] };
  tracked.set(agenda, state);
  // Count the job functions in flight in this process: Job.run() emits 'complete' for every 'start'.
  agenda.on('start', (_job: unknown, remote?: boolean) => {
    if (remote !== true) state.running++;
  });
  agenda.on('complete', (_job: unknown, remote?: boolean) => {
    if (remote === true) return;
    state.running = Math.max(0, state.running - 1);
    if (state.running === 0) for (const resolve of state.idle.splice(0)) resolve();
  });
  return agenda;
}

export interface StopAgendaResult {
  /** Job functions still running when the timeout expired (0 when all finished). */
  running: number;
  timedOut: boolean;
}

/**
 * Clean shutdown of an Agenda made by createAgenda:
 *  1. stop polling and unlock the jobs this instance had locked but not started (agenda.stop(false));
 *  2. wait (up to timeoutMs, default 30 s) for the running job functions to finish, so their final
 *     state (lockedAt cleared, lastFinishedAt or failure) is written while the backend is still open;
 *  3. close the backend, also when the Agenda was never started (agenda.stop() alone leaves it open).
 * A job still running after the timeout keeps its lock and is picked up again by any instance once
 * its lock lifetime (default 10 minutes) has passed.
 */
export async function stopAgenda(agenda: Agenda, options: { timeoutMs?: number } = {}): Promise<StopAgendaResult> {
  const state = tracked.get(agenda);
  if (!state) throw new Error('stopAgenda: this Agenda was not made by createAgenda');
  await agenda.stop(false);
  let timedOut = false;
  if (state.running > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timedOut = true;
        resolve();
      }, options.timeoutMs ?? 30_000);
      state.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  // Let the other listeners of the last 'complete' run before the backend closes.
  await new Promise((resolve) => setImmediate(resolve));
  const running = state.running;
  await state.backend.disconnect();
  return { running, timedOut };
}
