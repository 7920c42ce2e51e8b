// The start memory check of the embedded read store. The in-memory read models live in the V8
// heap; a start that loads more than the heap limit allows dies of heap exhaustion half-way
// through its catch-up (minutes into it, on a long log). So before it loads anything, a start
// estimates the heap the read models will hold once caught up, from the log's length and a
// measured figure per event, and refuses at once, with the figure and what to do, when the heap
// limit does not leave room for it.

/**
 * Heap held by the loaded read models per byte of their snapshot file, measured by `npm run bench
 * -- replay` (docs/PERFORMANCE.md: 1.46 on the mixed log, 1.70 on the posts-only log); the larger.
 */
export const HEAP_PER_SNAPSHOT_BYTE = 1.7;
/**
 * Heap per event of the log when no snapshot tells this network's own figure: the mixed log's
 * measure (0.84 KB at 500,000 events, 1.04 KB at 200,000), rounded up.
 */
export const DEFAULT_BYTES_PER_EVENT = 1100;
/** A snapshot of at least this many events gives the figure per event of this network's own log. */
export const OWN_FIGURE_MIN_EVENTS = 10_000;
/**
 * The share of the heap limit the caught-up read models may take: the rest is what serving needs
 * (requests, index builds at the end of a catch-up, a snapshot's buffers) and V8's own room.
 */
export const START_HEAP_SHARE = 0.8;
/** The heap limit suggested is this much of what the start needs, when the machine has it. */
const SUGGEST_SHARE = 0.7;
/** Never suggest a heap above this share of the machine's memory (the rest is the process's and the OS's). */
export const MACHINE_HEAP_SHARE = 0.7;

export interface StartMemoryFigures {
  /** v8.getHeapStatistics().heap_size_limit, bytes. */
  heapLimit: number;
  /** v8.getHeapStatistics().used_heap_size before the read models load, bytes. */
  heapUsed: number;
  /** The log's head position: the events the read models will have applied once caught up. */
  head: number;
  /** The read-model snapshot on disk (size in bytes, position), used or not: null when there is none. */
  snapshot: { bytes: number; position: number } | null;
  /** The machine's memory (or the container's limit), bytes. */
  machineMemory: number;
}

export interface StartMemoryEstimate {
  /** Heap the caught-up read models are expected to hold, bytes. */
  needed: number;
  /** Heap the limit leaves them (START_HEAP_SHARE of it, less what is in use), bytes. */
  available: number;
  bytesPerEvent: number;
  /** Where bytesPerEvent comes from: this log's snapshot, or the benchmark's mixed log. */
  basis: 'snapshot' | 'default';
  fits: boolean;
  /** When they do not fit: the --max-old-space-size (MiB) that would hold them; null when it fits, or the machine is too small for it. */
  suggestedHeapMb: number | null;
  /** Log fields: the figures in MB. */
  fields: Record<string, number | string | null>;
  /** What a refused start says; null when it fits. */
  message: string | null;
}

const mb = (bytes: number) => Math.round(bytes / 1e6);

/**
 * The heap the read models will need once caught up with `head` events, against what the heap
 * limit leaves them. A snapshot gives this network's own heap per event (its size times
 * HEAP_PER_SNAPSHOT_BYTE over its position), whether or not the start can use it (a snapshot of
 * other projection code is replayed in full, to about the same size); otherwise the benchmark's.
 */
export function estimateStartMemory(f: StartMemoryFigures): StartMemoryEstimate {
  const own = f.snapshot !== null && f.snapshot.position >= OWN_FIGURE_MIN_EVENTS ? f.snapshot : null;
  const bytesPerEvent = own ? Math.ceil((own.bytes * HEAP_PER_SNAPSHOT_BYTE) / own.position) : DEFAULT_BYTES_PER_EVENT;
  const needed = Math.max(f.head, 0) * bytesPerEvent;
  const available = Math.max(0, f.heapLimit * START_HEAP_SHARE - f.heapUsed);
  const fits = needed <= available;
  // A limit at which the read models take SUGGEST_SHARE of it, in MiB (what --max-old-space-size counts).
  const wanted = Math.ceil((f.heapUsed + needed) / SUGGEST_SHARE / 2 ** 20);
  const suggestedHeapMb = !fits && wanted * 2 ** 20 <= f.machineMemory * MACHINE_HEAP_SHARE ? Math.max(wanted, Math.ceil(f.heapLimit / 2 ** 20)) : null;
  const fields = {
    events: f.head,
    bytes_per_event: bytesPerEvent,
    bytes_per_event_from: own ? 'snapshot' : 'benchmark',
    needed_mb: mb(needed),
    available_mb: mb(available),
    heap_limit_mb: mb(f.heapLimit),
    machine_mb: mb(f.machineMemory),
    suggested_heap_mb: suggestedHeapMb,
  };
  let message: string | null = null;
  if (!fits) {
    const basis = own
      ? `${bytesPerEvent} bytes per event, from the ${mb(own.bytes)} MB snapshot of its first ${own.position} events`
      : `about ${bytesPerEvent} bytes per event, as measured on the benchmark's mixed log`;
    const what =
      suggestedHeapMb !== null
        ? `Start it with a larger heap: NODE_OPTIONS=--max-old-space-size=${suggestedHeapMb} (this machine has ${mb(f.machineMemory)} MB), or keep the read models in MongoDB (MONGODB_URL).`
        : `This machine's ${mb(f.machineMemory)} MB cannot hold them with room to spare: keep the read models in MongoDB (MONGODB_URL), or run on a machine with more memory.`;
    message =
      `start refused: the in-memory read models of this ${f.head}-event log would need about ${mb(needed)} MB of heap (${basis}), ` +
      `and the heap limit of ${mb(f.heapLimit)} MB leaves them ${mb(available)} MB; the start would run out of memory part-way through. ` +
      `${what} START_MEMORY_CHECK=0 starts anyway.`;
  }
  return { needed, available, bytesPerEvent, basis: own ? 'snapshot' : 'default', fits, suggestedHeapMb, fields, message };
}

/** A start refused by the memory check: nothing was loaded, the stores are closed again. */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}
