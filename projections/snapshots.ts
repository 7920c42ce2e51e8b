// Start-up from a read-model snapshot (embedded store and SQLite log only): see store/snapshot.ts
// for the file and its checks. The runner then catches up from the snapshot's position as it
// would from any checkpoint.
import type { EventLog } from '../events/store/port.ts';
import type { MemoryReadStore } from './store/memory.ts';
import { projectionCodeFingerprint, readSnapshot, removeStaleTemporaries, writeSnapshot, type SnapshotHeader } from './store/snapshot.ts';

export type RestoreOutcome = { kind: 'none' } | { kind: 'restored'; header: SnapshotHeader } | { kind: 'rejected'; reason: string };

/** The log's event at `position`, if it holds one there. */
async function eventAt(log: EventLog, position: number) {
  const [event] = await log.readAll({ after: position - 1, maxCount: 1 });
  return event !== undefined && event.position === position ? event : undefined;
}

/**
 * Fills an empty store from the snapshot at `path` when it can be trusted (intact, same projection
 * code, and its last event still at its position in this log); otherwise leaves the store empty
 * and says why. The restored collections' other indexes are built when the runner has caught up
 * (ProjectionRunner.start), or by store.buildIndexes.
 */
export async function restoreReadModels(
  store: MemoryReadStore,
  log: EventLog,
  path: string,
  fingerprint = projectionCodeFingerprint(),
): Promise<RestoreOutcome> {
  try {
    removeStaleTemporaries(path);
    const snapshot = readSnapshot(path, fingerprint);
    if (snapshot === null) return { kind: 'none' };
    const { header } = snapshot;
    const event = await eventAt(log, header.position);
    if (event === undefined || event.id !== header.eventId) {
      return { kind: 'rejected', reason: `the event log does not hold its last event (${header.eventId}) at position ${header.position}` };
    }
    try {
      for (const c of snapshot.collections) store.restoreCollection(c);
    } catch (err) {
      // The store was empty: nothing of a snapshot that does not install stays in it.
      for (const name of await store.listCollections()) await store.dropCollection(name);
      throw err;
    }
    return { kind: 'restored', header };
  } catch (err) {
    return { kind: 'rejected', reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Writes the store's collections as a snapshot ending at `position` (every projection has applied
 * the log up to there and nothing is applying now). Returns the file's size, or null when the log
 * holds no event at that position (an empty log: nothing to save).
 */
export async function saveReadModels(
  store: MemoryReadStore,
  log: EventLog,
  position: number,
  path: string,
  createdAt: string,
  fingerprint = projectionCodeFingerprint(),
): Promise<number | null> {
  if (position <= 0) return null;
  const event = await eventAt(log, position);
  if (event === undefined) return null;
  return writeSnapshot(path, { fingerprint, position, eventId: event.id, createdAt }, store.exportCollections());
}
