// The messages between the SQLite event log (main thread) and its writer and checkpointer threads.

/** What the writer thread is started with. */
export interface WriterData {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
  /** The writer's own auto-checkpoint threshold (pages). */
  autocheckpointPages: number;
}

/** What the checkpointer thread is started with. */
export interface CheckpointerData {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  intervalMs: number;
}

/** Asks a thread to finish what it holds, close its connection and exit. */
export const CLOSE = 'close';

/**
 * A batch as the writer thread receives it: one flat array (much cheaper to copy between threads
 * than objects), per append `stream, expected, n`, then `id, type, data, metadata` per event.
 */
export type WireBatch = Array<string | number>;

export type WriterMessage = WireBatch | typeof CLOSE;

// Per append, the writer answers with three numbers: an outcome and two values, which are
export const APPENDED = 0; // the new revision and the position of the append's last event;
export const DUPLICATE = 1; // the revision and position of the stored copy (an idempotent retry);
export const WRONG_REVISION = 2; // the stream's actual revision (-1: no stream) and 0;
export const DUPLICATE_ID = 3; // 0 and 0 (some ids are stored elsewhere or only in part).

/** An SQLite error, as it crosses to the main thread. */
export interface ThreadFailure {
  code: string;
  message: string;
}

/**
 * The writer's answer to the batches it committed in one transaction: their number, then three
 * numbers per append; or the transaction failed.
 */
export type WireReply = number[] | (ThreadFailure & { batches: number });

export type CheckpointerMessage = typeof CLOSE;

/** The checkpointer's only message: checkpoints stopped on an error other than a busy lock. */
export type CheckpointerReply = ThreadFailure;

export function describeFailure(error: unknown): ThreadFailure {
  if (typeof error !== 'object' || error === null) return { code: 'SQLITE_ERROR', message: String(error) };
  return {
    code: 'code' in error && typeof error.code === 'string' ? error.code : 'SQLITE_ERROR',
    message: String('message' in error ? error.message : error),
  };
}
