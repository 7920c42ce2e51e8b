// The event-log port. Every adapter (SQLite embedded, EventStoreDB) passes test/events/store/contract.ts.

export interface EventMetadata {
  actor: string | null;
  request_id: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  occurred_at: string;
  schema_version: number;
}

/** An event as a command produces it, before it is appended. `id` is a UUID derived from the command id. */
export interface NewEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  data: D;
  metadata: EventMetadata;
}

/** An event as read back from the log. */
export interface RecordedEvent<T extends string = string, D = unknown> extends NewEvent<T, D> {
  stream: string;
  /** 0-based revision of the event inside its stream. */
  revision: number;
  /**
   * Global position: unique per event, strictly increasing in log order, > 0.
   * Projections keep it on every document they touch and in their checkpoints.
   */
  position: number;
}

/**
 * 'any': no check. 'no_stream': the stream must not exist. 'stream_exists': it must exist.
 * A number: the revision of the stream's last event must equal it.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  revision: number;
  /** Position of the last event of this append (or of the already-stored copy when the append was a duplicate). */
  position: number;
  /** True when every event id was already in the stream, so nothing new was written. */
  duplicate: boolean;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events with position > after. 0 reads from the start. */
  after?: number;
  maxCount?: number;
  /**
   * Only events of these types (the store filters: an index on the SQLite log, a server-side
   * event-type filter on EventStoreDB), so reading a few types costs in proportion to their events.
   * Absent: every type. Empty: no event.
   */
  types?: readonly string[];
}

/**
 * Watches the log's writes, for metrics: each settled append and, where the adapter group-commits,
 * each write transaction. Called on the hot path: implementations only count.
 */
export interface EventLogObserver {
  /** An append settled: its latency from the call (seconds), its outcome, and its events when written. */
  appended(seconds: number, outcome: 'written' | 'duplicate' | 'conflict' | 'failed', events: readonly NewEvent[]): void;
  /** One write transaction committed `appends` appends (`events` events in all). */
  committed?(appends: number, events: number): void;
}

export interface Subscription {
  close(): Promise<void>;
}

export type SubscriptionHandler = (events: RecordedEvent[]) => Promise<void> | void;

export class WrongExpectedRevisionError extends Error {
  readonly code = 'wrong_expected_revision';
  readonly status = 409;
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  readonly status = 503;
}

export interface EventLog {
  readonly name: string;
  /** Metrics hook (see EventLogObserver); null or absent: nobody watches. */
  observer?: EventLogObserver | null;
  /**
   * Appends atomically with an optimistic concurrency check. Appending events whose ids are all
   * already in the stream is a no-op that reports `duplicate: true` (idempotent retry).
   * Resolves only once the events are durable.
   */
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event in the log (0 when empty). */
  headPosition(): Promise<number>;
  /**
   * Catch-up then live subscription: the handler receives batches in log order, starting after
   * `after`, and is never called concurrently with itself.
   */
  subscribeAll(after: number, handler: SubscriptionHandler): Subscription;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
