// The read models' progress as an API or worker process sees it when another process (the
// projector role) runs the projections: the checkpoints in the read store, and read-your-writes
// waits that end when the projector's checkpoints reach the written position.
import { conflict } from '../events/kernel/errors.ts';
import type { ReadModelProgress } from './runner.ts';
import type { ReadStore } from './store/port.ts';
import type { Projection } from './types.ts';
import { CHECKPOINTS } from './types.ts';

interface Waiter {
  position: number;
  deadline: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export interface FollowerOptions {
  /** How often the checkpoints are read while someone waits (the MongoDB case). */
  pollMs?: number;
  /** How often they are read otherwise, for /health and the lag figures. */
  refreshMs?: number;
  /**
   * A wait the projector answers itself (the embedded case: over its socket, the projector also
   * looks for the new commits at once); without it the checkpoints are polled.
   */
  remoteWait?: (position: number, timeoutMs: number) => Promise<number>;
}

export class CheckpointFollower implements ReadModelProgress {
  readonly failed = false;
  readonly isPaused = false;
  #checkpoints: number[];
  #position = 0;
  #waiters: Waiter[] = [];
  #poller: NodeJS.Timeout | null = null;
  #refresher: NodeJS.Timeout | null = null;
  #polling = false;
  readonly #pollMs: number;
  readonly #refreshMs: number;
  readonly #remoteWait: FollowerOptions['remoteWait'];

  constructor(
    private readonly store: ReadStore,
    readonly projections: Projection[],
    options: FollowerOptions = {},
  ) {
    this.#checkpoints = projections.map(() => 0);
    this.#pollMs = options.pollMs ?? 10;
    this.#refreshMs = options.refreshMs ?? 1000;
    this.#remoteWait = options.remoteWait;
  }

  get position(): number {
    return this.#position;
  }

  /** Reads every projection's checkpoint from the store. */
  async refresh(): Promise<number> {
    const docs = await this.store.collection(CHECKPOINTS).find({ _id: { $in: this.projections.map((p) => p.name) } });
    const byName = new Map(docs.map((d) => [d._id, typeof d.position === 'number' ? d.position : 0]));
    this.#checkpoints = this.projections.map((p) => byName.get(p.name) ?? 0);
    this.#position = Math.max(this.#position, this.#checkpoints.length ? Math.min(...this.#checkpoints) : 0);
    return this.#position;
  }

  /** Reads the checkpoints now and then every refreshMs (in the background, for /health and the lags). */
  async start(): Promise<void> {
    await this.refresh();
    this.#refresher ??= setInterval(() => void this.refresh().catch(() => undefined), this.#refreshMs).unref();
  }

  async stop(): Promise<void> {
    if (this.#refresher) clearInterval(this.#refresher);
    this.#refresher = null;
    if (this.#poller) clearTimeout(this.#poller);
    this.#poller = null;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(new Error('the checkpoint follower stopped'));
  }

  waitFor(position: number, timeoutMs = 10_000): Promise<void> {
    if (position <= this.#position) return Promise.resolve();
    if (this.#remoteWait) {
      return this.#remoteWait(position, timeoutMs).then((reached) => {
        this.#position = Math.max(this.#position, reached);
      });
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({ position, deadline: Date.now() + timeoutMs, resolve, reject });
      this.#schedulePoll();
    });
  }

  #schedulePoll(): void {
    if (this.#poller !== null || this.#polling || this.#waiters.length === 0) return;
    this.#poller = setTimeout(() => {
      this.#poller = null;
      void this.#poll();
    }, this.#pollMs);
  }

  /** One read of the checkpoints for every waiter at once. */
  async #poll(): Promise<void> {
    this.#polling = true;
    let failure: Error | null = null;
    try {
      await this.refresh();
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    } finally {
      this.#polling = false;
    }
    const now = Date.now();
    const keep: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.position <= this.#position) w.resolve();
      else if (w.deadline <= now) w.reject(failure ?? new Error(`read models did not reach position ${w.position} in time`));
      else keep.push(w);
    }
    this.#waiters = keep;
    this.#schedulePoll();
  }

  checkpointsByProjection(): Array<{ name: string; checkpoint: number; handles: string[] }> {
    return this.projections.map((p, j) => ({ name: p.name, checkpoint: this.#checkpoints[j], handles: [...p.handles] }));
  }

  rebuild(): Promise<{ position: number; events: number }> {
    return Promise.reject(conflict('The projections run in the projector process: start the rebuild there', 'rebuild_elsewhere'));
  }
}
