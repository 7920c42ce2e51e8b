// Entry point of the event store: chooses the adapter (EventStoreDB when a URL is configured, else
// the embedded SQLite file). What the adapters share beyond the port lives in shared.ts, which they
// import, so this module is the only one that imports them. The adapters are imported statically on
// purpose: a lazy import() can load a second copy of the modules when the importer was loaded
// through require() (mocha with tsx does that), and a second copy of port.ts would break
// `instanceof WrongExpectedRevisionError` in the caller.
import { EventStoreDbEventLog } from './eventstoredb.ts';
import type { EventLog } from './port.ts';
import { SqliteEventLog } from './sqlite.ts';

export * from './port.ts';
export * from './shared.ts';

export interface EventLogConfig {
  /** EventStoreDB / KurrentDB connection string (EVENTSTORE_URL). Empty or absent: embedded SQLite. */
  eventstoreUrl?: string;
  /** SQLite file of the embedded log (shared with the job scheduler and the idempotency table). */
  sqlitePath: string;
  synchronous?: 'FULL' | 'NORMAL';
  /** Background WAL checkpoint interval of the embedded log (ms; 0: checkpoints inside commits). */
  checkpointIntervalMs?: number;
}

export async function openEventLog(config: EventLogConfig): Promise<EventLog> {
  if (config.eventstoreUrl) return EventStoreDbEventLog.connect(config.eventstoreUrl);
  return SqliteEventLog.open({ path: config.sqlitePath, synchronous: config.synchronous ?? 'FULL', checkpointIntervalMs: config.checkpointIntervalMs });
}
