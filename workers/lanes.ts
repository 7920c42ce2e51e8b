/**
 * Runs `work` on every item, at most `lanes` at a time, and resolves when all are done (rejects
 * with the first failure, after the lanes under way finish their item). Used for independent
 * appends, such as one per agent: a few in flight share the event log's group commits instead
 * of waiting for one commit each.
 */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

/** Appends a sweep keeps in flight at once (each for another agent). */
export const APPEND_LANES = 16;
