// Entry point of the event store: chooses the adapter (EventStoreDB when a URL is configured, else
// the embedded SQLite file) and holds what both adapters share beyond the port.
//
// The adapters import the shared errors below from here and this module imports the adapters: the
// cycle is harmless because neither side uses the other while its module is being evaluated. The
// adapters are imported statically on purpose: a lazy import() can load a second copy of the
// modules when the importer was loaded through require() (mocha with tsx does that), and a second
// copy of port.ts would break `instanceof WrongExpectedRevisionError` in the caller.
import { EventStoreDbEventLog } from './eventstoredb.ts';
import type { EventLog, ExpectedRevision } from './port.ts';
import { SqliteEventLog } from './sqlite.ts';

export * from './port.ts';

/** Some event ids of an append are already stored, but not all of them, or not in this stream. */
export class DuplicateEventIdError extends Error {
  readonly code = 'duplicate_event_id';
  readonly status = 409;
  constructor(
    readonly stream: string,
    readonly ids: string[],
  ) {
    super(`stream ${stream}: some event ids are already stored elsewhere or only in part: ${ids.join(', ')}`);
  }
}

/** An append the store cannot take as it is (bad expected revision, event without JSON data). */
export class InvalidAppendError extends Error {
  readonly code = 'invalid_append';
  readonly status = 400;
}

export type SubscriptionErrorHandler = (error: unknown) => void;

/** Extra, adapter-level argument of subscribeAll (the port's two arguments stay as they are). */
export interface SubscribeOptions {
  /**
   * Called once when the subscription stops by itself: its handler threw, or the store failed.
   * Without it the adapter's own `onError` is used, else console.error.
   */
  onError?: SubscriptionErrorHandler;
}

/** @internal Throws InvalidAppendError unless `expected` is one of the port's forms. */
export function assertExpectedRevision(expected: ExpectedRevision): void {
  if (typeof expected === 'number') {
    if (!Number.isSafeInteger(expected) || expected < 0) {
      throw new InvalidAppendError(`expected revision must be an integer >= 0, got ${expected}`);
    }
  } else if (expected !== 'any' && expected !== 'no_stream' && expected !== 'stream_exists') {
    throw new InvalidAppendError(`unknown expected revision ${String(expected)}`);
  }
}

/** @internal Whether a stream whose last revision is `current` (-1: no stream) satisfies `expected`. */
export function satisfies(expected: ExpectedRevision, current: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return current < 0;
    case 'stream_exists':
      return current >= 0;
    default:
      return expected === current;
  }
}

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
