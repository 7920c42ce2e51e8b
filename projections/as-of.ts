// As-of reads: read models as they were at a position of the log, folded from the log on demand
// (only the event types of the projections asked for) into a scratch in-memory store, so that the
// same query code that answers a live read answers the as-of one.
import type { EventLog } from '../events/store/port.ts';
import { MemoryReadStore } from './store/memory.ts';
import type { ProjectionContext, Projection } from './types.ts';

const PAGE = 5000;

/** A fresh store holding `projections` folded from every event with a position up to `position`. */
export async function foldAsOf(log: EventLog, projections: Projection[], position: number): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
  for (const p of projections) {
    for (const spec of p.collections) await store.ensureCollection(spec);
    await p.init?.(ctx);
  }
  const types = [...new Set(projections.flatMap((p) => [...p.handles]))];
  let after = 0;
  for (;;) {
    const page = await log.readAll({ after, maxCount: PAGE, types });
    for (const e of page) {
      if (e.position > position) return store;
      for (const p of projections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    }
    if (page.length < PAGE) return store;
    after = page[page.length - 1].position;
  }
}

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
