import pLimit from 'p-limit';
import type { Foreground } from '../events/kernel/foreground.ts';

/**
 * Runs `work` on every item, at most `lanes` at a time. After a failure no lane takes another
 * item; once the items under way have finished, it rejects with the first failure. Used for
 * independent appends, such as one per agent: a few in flight share the event log's group
 * commits instead of waiting for one commit each.
 */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (failure === null && next < items.length) {
      try {
        await work(items[next++]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** Appends a sweep keeps in flight at once (each for another agent). */
export const APPEND_LANES = 16;

export interface YieldingLanesOptions {
  /** Lanes while the process is quiet (Foreground: no request in flight, none ended in the last 50 ms). */
  idle: number;
  /** Lanes while it serves requests (at least 1, so the work always moves on). */
  busy: number;
  /** Once this many items wait or run, the work takes its idle lanes even under requests: a bound on what a long burst may leave waiting in memory. */
  backlogBound: number;
}

/**
 * Runs background work (queueing and sending the mails that requests caused) in lanes that narrow
 * while requests are in flight: a burst of requests is not slowed by the work it causes, which
 * catches up as soon as the burst ends, and a backlog past `backlogBound` takes its full lanes
 * again. The lanes are set again whenever an item is handed over or finishes, so no timer is
 * involved. `pending()` is how many items wait or run.
 */
export function yieldingLanes(foreground: Foreground | undefined, options: YieldingLanesOptions) {
  const limit = pLimit(options.idle);
  const adjust = () => {
    const narrow = foreground?.busy === true && limit.activeCount + limit.pendingCount < options.backlogBound;
    const lanes = narrow ? Math.max(1, options.busy) : options.idle;
    if (limit.concurrency !== lanes) limit.concurrency = lanes;
  };
  const run = <T>(work: () => Promise<T>): Promise<T> => {
    const p = limit(async () => {
      try {
        return await work();
      } finally {
        adjust();
      }
    });
    adjust();
    return p;
  };
  return Object.assign(run, { pending: () => limit.activeCount + limit.pendingCount, lanes: () => limit.concurrency });
}
