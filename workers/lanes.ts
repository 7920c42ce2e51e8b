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
