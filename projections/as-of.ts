// As-of reads: the position an ISO time names. The reads themselves: projections/as-of-index.ts.
import type { EventLog } from '../events/store/port.ts';

/**
 * The position of the last event that occurred at or before `time` (0: none did). Assumes
 * occurred_at grows with the position, as the service writes it (its clock at each append).
 */
export async function positionAt(log: EventLog, time: number): Promise<number> {
  let low = 0; // every event up to `low` occurred at or before `time`
  let high = await log.headPosition(); // the answer is at most `high`
  while (low < high) {
    const mid = Math.floor((low + high + 1) / 2);
    // The first event at or after `mid` (positions may be sparse).
    const [e] = await log.readAll({ after: mid - 1, maxCount: 1 });
    if (e === undefined || e.position > high) {
      high = mid - 1;
      continue;
    }
    if (Date.parse(e.metadata.occurred_at) <= time) low = e.position;
    else high = mid - 1;
  }
  return low;
}
