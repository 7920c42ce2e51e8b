// Operations on the running service's read models, for the admin routes, the CLI and (later) the
// admin console: each projection's position, head and lag, and one-projection rebuilds into
// shadow collections with progress, ETA and the checksum comparison made before the swap.
import { conflict, DomainError } from '../events/kernel/errors.ts';
import type { EventLog } from '../events/store/port.ts';
import type { ProjectionRunner } from './runner.ts';
import { collectionChecksum } from './store/checksum.ts';
import type { ReadStore } from './store/port.ts';

export interface ProjectionLag {
  name: string;
  /** Position up to which the projection has applied the log. */
  checkpoint: number;
  head: number;
  /** Events in the log after the checkpoint (counted up to LAG_COUNT_CAP on a log with sparse positions). */
  lag_events: number;
  /** Age of the oldest event not applied yet (now minus its occurred_at), 0 when caught up. */
  lag_seconds: number;
  handles: string[];
}

/** On EventStoreDB positions are byte offsets: events behind are counted by reading, at most this many. */
export const LAG_COUNT_CAP = 10_000;

/** Every projection's checkpoint against the log's head, with its lag in events and seconds. */
export async function projectionLags(log: EventLog, runner: Pick<ProjectionRunner, 'checkpointsByProjection'>, now: Date): Promise<ProjectionLag[]> {
  const head = await log.headPosition();
  const byCheckpoint = new Map<number, Promise<{ events: number; seconds: number }>>();
  const lagAt = (checkpoint: number) => {
    let found = byCheckpoint.get(checkpoint);
    if (found === undefined) {
      found = (async () => {
        if (checkpoint >= head) return { events: 0, seconds: 0 };
        const [next] = await log.readAll({ after: checkpoint, maxCount: 1 });
        const seconds = next ? Math.max(0, (now.getTime() - Date.parse(next.metadata.occurred_at)) / 1000) : 0;
        // The embedded log's positions are consecutive: the difference is the count.
        const events = log.name === 'sqlite' ? head - checkpoint : (await log.readAll({ after: checkpoint, maxCount: LAG_COUNT_CAP })).length;
        return { events, seconds };
      })();
      byCheckpoint.set(checkpoint, found);
    }
    return found;
  };
  const out: ProjectionLag[] = [];
  for (const p of runner.checkpointsByProjection()) {
    const lag = await lagAt(p.checkpoint);
    out.push({ name: p.name, checkpoint: p.checkpoint, head, lag_events: lag.events, lag_seconds: lag.seconds, handles: p.handles });
  }
  return out;
}

/** One collection's content hash in the rebuilt and in the live read model, at the same position. */
export interface CollectionComparison {
  collection: string;
  rebuilt: { count: number; sha256: string };
  live: { count: number; sha256: string };
  equal: boolean;
}

export interface RebuildStatus {
  id: string;
  projection: string;
  state: 'running' | 'swapped' | 'failed';
  started_at: string;
  finished_at: string | null;
  /** Position the shadow collections have applied up to. */
  position: number;
  /** Position it heads for: the live read models' position (it moves while writes go on). */
  target: number;
  /** Events of the projection's types read and applied so far. */
  events: number;
  /** position / target, 0..1. */
  progress: number;
  /** Seconds left at the rate so far; null until there is a rate. */
  eta_seconds: number | null;
  /** Each collection's checksum, rebuilt against live at the same position, taken just before the swap. */
  comparisons: CollectionComparison[];
  error: string | null;
}

/**
 * Rebuilds of the running service's projections, one at a time: the runner fills shadow
 * collections from the log (only the projection's event types) while the live ones keep serving,
 * compares checksums and swaps. Statuses stay for the last rebuild of each projection.
 */
export class ProjectionRebuilds {
  readonly #last = new Map<string, RebuildStatus>();
  #running: Promise<RebuildStatus> | null = null;
  #count = 0;

  constructor(
    private readonly runner: Pick<ProjectionRunner, 'rebuild' | 'projections'>,
    private readonly store: ReadStore,
    private readonly now: () => Date,
  ) {}

  /** Starts a rebuild of `name`; answers its first status at once (the rebuild goes on in the background). */
  start(name: string): RebuildStatus {
    if (!this.runner.projections.some((p) => p.name === name)) throw new DomainError(404, 'projection_not_found', `No projection named ${name}`);
    if (this.#running) throw conflict('A projection rebuild is already running; wait for it to end', 'rebuild_running');
    const started = this.now();
    const status: RebuildStatus = {
      id: `rbd_${started.getTime().toString(36)}_${++this.#count}`,
      projection: name,
      state: 'running',
      started_at: started.toISOString(),
      finished_at: null,
      position: 0,
      target: 0,
      events: 0,
      progress: 0,
      eta_seconds: null,
      comparisons: [],
      error: null,
    };
    this.#last.set(name, status);
    const t0 = performance.now();
    const run = this.runner
      .rebuild([name], {
        onProgress: (p) => {
          status.position = p.position;
          status.target = p.head;
          status.events = p.events;
          status.progress = p.head > 0 ? Math.min(1, p.position / p.head) : 1;
          const elapsed = (performance.now() - t0) / 1000;
          status.eta_seconds = status.progress > 0 ? Math.round((elapsed * (1 - status.progress)) / status.progress) : null;
        },
        beforeSwap: async (_projection, pairs) => {
          for (const [rebuilt, live] of pairs) {
            const a = await collectionChecksum(this.store, rebuilt);
            const b = await collectionChecksum(this.store, live);
            status.comparisons.push({ collection: live, rebuilt: a, live: b, equal: a.count === b.count && a.sha256 === b.sha256 });
          }
        },
      })
      .then(
        (done) => {
          status.state = 'swapped';
          status.position = done.position;
          status.target = done.position;
          status.progress = 1;
          status.eta_seconds = 0;
          return status;
        },
        (err: unknown) => {
          status.state = 'failed';
          status.error = err instanceof Error ? err.message : String(err);
          return status;
        },
      )
      .finally(() => {
        status.finished_at = this.now().toISOString();
        this.#running = null;
      });
    this.#running = run;
    return status;
  }

  /** The last rebuild of `name` (running or ended), or null. */
  status(name: string): RebuildStatus | null {
    return this.#last.get(name) ?? null;
  }

  /** Resolves with the rebuild under way's final status (null when none runs). */
  async settled(): Promise<RebuildStatus | null> {
    return this.#running ? this.#running : null;
  }
}
