// What both event-log adapters share beyond the port: the errors of an append the store refuses,
// the checks of an expected revision, and the adapter-level options of subscribeAll. The adapters
// import it; index.ts (which imports the adapters) re-exports it, so no module imports its importer.
import type { ExpectedRevision } from './port.ts';

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
