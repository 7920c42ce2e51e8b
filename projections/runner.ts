import type { EventLog, RecordedEvent, Subscription } from '../events/store/port.ts';
import { REBUILD_PREFIX, typedCollection, type Collection, type ReadStore } from './store/port.ts';
import type { Projection, ProjectionContext } from './types.ts';
import { CHECKPOINTS } from './types.ts';

export interface RebuildProgress {
  projection: string;
  /** Position the rebuilt collections have applied up to. */
  position: number;
  /** Position the rebuild is heading for: the live read models' position (it moves under writes). */
  head: number;
  /** Events read and applied so far (only the types the rebuilt projections handle, when filtered). */
  events: number;
}

export interface RebuildHooks {
  onProgress?: (p: RebuildProgress) => void;
  /** Called with [rebuilt, live] collection pairs while live application is paused, before the swap. */
  beforeSwap?: (projection: string, pairs: Array<[rebuilt: string, live: string]>) => Promise<void>;
  /** Fold only the events after this position (default 0: the whole log). */
  from?: number;
  /** false: drop the fresh collections after beforeSwap instead of swapping them in (a look, not a repair). */
  swap?: boolean;
}

const PAGE = 5000;
/**
 * From this many events behind on start (or always, for a rebuild), the store may bulk load:
 * secondary indexes are built once at the end instead of entry by entry (ReadStore.deferIndexes).
 */
export const BULK_LOAD_MIN_EVENTS = 10_000;
/** How often waiters' deadlines are checked. */
const SWEEP_MS = 250;

/** What waiters still pending get when the runner stops: they would never be released otherwise. */
export class RunnerStoppedError extends Error {
  constructor() {
    super('the projection runner stopped');
    this.name = 'RunnerStoppedError';
  }
}

interface Waiter {
  position: number;
  deadline: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Per event type, the indexes of the projections in `projections` that handle it (computed on first sight). */
function handlerIndex(projections: Projection[]): (type: string) => number[] {
  const byType = new Map<string, number[]>();
  return (type) => {
    let list = byType.get(type);
    if (list === undefined) {
      list = [];
      for (let i = 0; i < projections.length; i++) if (projections[i].handles.has(type)) list.push(i);
      byType.set(type, list);
    }
    return list;
  };
}

function contextFor(store: ReadStore, prefix = ''): ProjectionContext {
  const cache = new Map<string, Collection>();
  return {
    collection(name) {
      let c = cache.get(name);
      if (!c) {
        c = store.collection(prefix + name);
        cache.set(name, c);
      }
      return typedCollection(c);
    },
  };
}

/**
 * What the rest of the service needs of the read models' progress: the runner itself where the
 * projections run in this process, a CheckpointFollower (projections/follower.ts) where another
 * process (the projector role) runs them.
 */
export interface ReadModelProgress {
  readonly projections: Projection[];
  /** Position of the last event every projection has applied (as last seen, when remote). */
  readonly position: number;
  readonly failed: boolean;
  readonly isPaused: boolean;
  /** Read-your-writes: resolves once every projection has applied the event at `position`. */
  waitFor(position: number, timeoutMs?: number): Promise<void>;
  checkpointsByProjection(): Array<{ name: string; checkpoint: number; handles: string[] }>;
  rebuild(names: string[] | null, hooks?: RebuildHooks): Promise<{ position: number; events: number }>;
}

/**
 * Runs every projection from its checkpoint: one catch-up-then-live subscription, events applied
 * one at a time in log order, checkpoints moved after each batch. Application is idempotent (each
 * document keeps the position of the last event applied), so redelivery after a crash is safe.
 */
export class ProjectionRunner implements ReadModelProgress {
  private subscription: Subscription | null = null;
  private processed = 0;
  private waiters: Waiter[] = [];
  /** One timer for every waiter's deadline (not one per request), running while any waits. */
  private sweeper: NodeJS.Timeout | null = null;
  /** Checkpoint of each projection, by its index in `projections`. */
  private readonly checkpoints: number[];
  /** Per event type, the indexes of the projections that handle it. */
  private readonly handlersOf: (type: string) => number[];
  private failure: Error | null = null;
  private paused: Promise<void> | null = null;
  private resumePause: (() => void) | null = null;
  /** The batch being applied, awaited by pause() so that nothing applies while paused. */
  private applying: Promise<void> | null = null;
  private readonly live: ProjectionContext;
  /** Set by stop(), cleared by start(): a stop while start() prepares ends it before the catch-up. */
  private stopping = false;

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadStore,
    readonly projections: Projection[],
    private readonly onError: (err: Error) => void = () => undefined,
    private readonly bulkLoadMinEvents = BULK_LOAD_MIN_EVENTS,
  ) {
    this.live = contextFor(store);
    this.checkpoints = projections.map(() => 0);
    this.handlersOf = handlerIndex(projections);
  }

  /** Has a projection failed to apply an event (application then stops)? */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** The position the last start() carried on from (its checkpoints when it began). */
  startedFrom = 0;

  /** Position of the last event every projection has applied. */
  get position(): number {
    return this.processed;
  }

  async prepare(): Promise<void> {
    for (const p of this.projections) {
      for (const spec of p.collections) await this.store.ensureCollection(spec);
      await p.init?.(this.live);
    }
    const cps = this.store.collection(CHECKPOINTS);
    for (const [j, p] of this.projections.entries()) {
      const doc = await cps.findOne({ _id: p.name });
      this.checkpoints[j] = typeof doc?.position === 'number' ? doc.position : 0;
    }
    this.processed = Math.min(...this.checkpoints);
  }

  /**
   * Catches up to the head of the log, then keeps applying new events as they are appended.
   * Resolves false, not caught up, when stop() ends the catch-up first (a stop during start-up):
   * the read models then hold every event up to `position`, their deferred indexes not built yet.
   */
  async start(): Promise<boolean> {
    this.stopping = false;
    await this.prepare();
    this.startedFrom = this.processed;
    if (this.stopping) return false;
    const head = await this.log.headPosition();
    if (this.stopping) return false;
    const bulk = head - this.processed >= this.bulkLoadMinEvents ? this.collectionNames(this.projections) : [];
    if (bulk.length > 0) this.store.deferIndexes?.(bulk);
    // Long catch-ups get no deadline: the waiter resolves when the head is reached.
    const caughtUp = this.waitFor(head, Number.POSITIVE_INFINITY);
    this.subscription = this.log.subscribeAll(this.processed, (events) => this.applyBatch(events));
    try {
      await caughtUp;
    } catch (err) {
      if (err instanceof RunnerStoppedError) return false;
      throw err;
    }
    // Every index left deferred is built before the read models serve: a bulk catch-up's, and
    // those of collections restored from a snapshot (a no-op for the others).
    this.store.buildIndexes?.(this.collectionNames(this.projections));
    return true;
  }

  private collectionNames(projections: Projection[], prefixOf: (p: Projection) => string = () => ''): string[] {
    return projections.flatMap((p) => p.collections.map((c) => prefixOf(p) + c.name));
  }

  /** Read-your-writes: resolves once every projection has applied the event at `position`. */
  waitFor(position: number, timeoutMs = 10_000): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (position <= this.processed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ position, deadline: Date.now() + timeoutMs, resolve, reject });
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    });
  }

  /** Rejects the waiters past their deadline (within SWEEP_MS of it); stops when none wait. */
  private sweep(): void {
    const now = Date.now();
    const expired = this.waiters.filter((w) => w.deadline <= now);
    if (expired.length > 0) {
      this.waiters = this.waiters.filter((w) => w.deadline > now);
      for (const w of expired) w.reject(new Error(`read models did not reach position ${w.position} in time`));
    }
    if (this.waiters.length === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /** Each projection's checkpoint: the position up to which it has applied the log. */
  checkpointsByProjection(): Array<{ name: string; checkpoint: number; handles: string[] }> {
    return this.projections.map((p, j) => ({ name: p.name, checkpoint: this.checkpoints[j], handles: [...p.handles] }));
  }

  /** Whether live application is paused (by pause(), or by a rebuild while it swaps). */
  get isPaused(): boolean {
    return this.paused !== null;
  }

  private async applyBatch(events: RecordedEvent[]): Promise<void> {
    while (this.paused) await this.paused;
    const run = this.applyNow(events);
    this.applying = run;
    try {
      await run;
    } finally {
      this.applying = null;
    }
  }

  private async applyNow(events: RecordedEvent[]): Promise<void> {
    try {
      const projections = this.projections;
      const checkpoints = this.checkpoints;
      const live = this.live;
      for (const event of events) {
        const position = event.position;
        // Events no projection handles only move the checkpoints.
        for (const j of this.handlersOf(event.type)) {
          if (checkpoints[j] < position) await projections[j].apply(event, live);
        }
        this.processed = position;
      }
      const last = events[events.length - 1];
      if (last) await this.saveCheckpoints(last.position);
      // The batch and its checkpoints become durable together (a store that commits: SQLite).
      this.store.checkpointed?.();
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
      for (const w of this.waiters) w.reject(this.failure);
      this.waiters = [];
      this.onError(this.failure);
      throw err;
    }
    this.release();
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.position <= this.processed);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > this.processed);
    for (const w of ready) w.resolve();
  }

  private async saveCheckpoints(position: number): Promise<void> {
    const cps = this.store.collection(CHECKPOINTS);
    for (const [j, p] of this.projections.entries()) {
      if (this.checkpoints[j] >= position) continue;
      this.checkpoints[j] = position;
      await cps.updateOne({ _id: p.name }, { $set: { position } }, { upsert: true });
    }
  }

  /**
   * Rebuilds projections from position 0 into fresh (shadow) collections while the live ones keep
   * serving, in one pass over the log for all of them. When not every projection is rebuilt, only
   * the event types the chosen ones handle are read (ReadAllOptions.types), so a small read model
   * costs time in proportion to its own events. The shadow never passes the live read models'
   * position; to finish, live application is paused, the shadow is brought to exactly that
   * position, each collection is compared with its live twin by checksum (`compare`), and the
   * shadows are swapped in (atomically in the embedded store) before application resumes: readers
   * never see a half-built read model, and positions never go backwards.
   */
  async rebuild(names: string[] | null, hooks: RebuildHooks = {}): Promise<{ position: number; events: number }> {
    const chosen = names ? this.projections.filter((p) => names.includes(p.name)) : this.projections;
    const unknown = names?.filter((n) => !this.projections.some((p) => p.name === n)) ?? [];
    if (unknown.length) throw new Error(`unknown projection(s): ${unknown.join(', ')}`);
    if (chosen.length === 0) return { position: this.processed, events: 0 };
    const { onProgress, beforeSwap } = hooks;
    const label = chosen.length === 1 ? chosen[0].name : names ? chosen.map((p) => p.name).join('+') : 'all projections';
    const prefixOf = (p: Projection) => `${REBUILD_PREFIX}${p.name}__`;
    const contexts = chosen.map((p) => contextFor(this.store, prefixOf(p)));
    for (const [i, p] of chosen.entries()) {
      for (const spec of p.collections) {
        await this.store.dropCollection(prefixOf(p) + spec.name);
        await this.store.ensureCollection(Object.assign({}, spec, { name: prefixOf(p) + spec.name }));
      }
      await p.init?.(contexts[i]);
    }
    // The fresh collections serve no reads until the swap: their indexes are built once, before it.
    const fresh = this.collectionNames(chosen, prefixOf);
    this.store.deferIndexes?.(fresh);
    const handlers = handlerIndex(chosen);
    const types = chosen.length === this.projections.length ? undefined : [...new Set(chosen.flatMap((p) => [...p.handles]))];
    // `read`: how far the log has been read (the last event taken); the shadow holds every handled
    // event up to it.
    let read = hooks.from ?? 0;
    let events = 0;
    const replay = async (upTo: () => number, yieldBetweenPages: boolean) => {
      for (;;) {
        const bound = upTo();
        if (read >= bound) return;
        const page = await this.log.readAll({ after: read, maxCount: PAGE, types });
        let reachedBound = page.length < PAGE;
        for (const e of page) {
          if (e.position > bound) {
            reachedBound = true;
            break;
          }
          for (const i of handlers(e.type)) await chosen[i].apply(e, contexts[i]);
          read = e.position;
          events++;
        }
        // With a type filter the last handled event may lie before the bound: the shadow has still
        // seen everything up to it.
        if (reachedBound) read = Math.max(read, bound);
        onProgress?.({ projection: label, position: read, head: Math.max(read, upTo()), events });
        if (reachedBound && read >= upTo()) return;
        // The live service keeps serving between pages.
        if (yieldBetweenPages) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    // Live: follow the live read models' position (never past it) until close to it.
    await replay(() => this.processed, true);
    // A pause someone else holds (an operator's, a test's) is theirs to end.
    const pausedBefore = this.isPaused;
    await this.pause();
    try {
      const target = this.processed;
      await replay(() => target, false);
      this.store.buildIndexes?.(fresh);
      const pairs: Array<[string, string]> = [];
      for (const p of chosen) {
        const own: Array<[string, string]> = p.collections.map((c) => [prefixOf(p) + c.name, c.name]);
        await beforeSwap?.(p.name, own);
        pairs.push(...own);
      }
      if (hooks.swap === false) {
        for (const [rebuilt] of pairs) await this.store.dropCollection(rebuilt);
        return { position: target, events };
      }
      await this.store.swapCollections(pairs);
      const cps = this.store.collection(CHECKPOINTS);
      for (const p of chosen) {
        const j = this.projections.indexOf(p);
        this.checkpoints[j] = Math.max(this.checkpoints[j], target);
        await cps.updateOne({ _id: p.name }, { $set: { position: this.checkpoints[j] } }, { upsert: true });
      }
      this.store.commit?.();
      onProgress?.({ projection: label, position: target, head: target, events });
      return { position: target, events };
    } finally {
      if (!pausedBefore) this.resume();
    }
  }

  /**
   * Pauses live application: resolves once the batch under way (if any) is applied; later batches
   * wait until resume(). Read-your-writes waiters wait with them.
   */
  async pause(): Promise<void> {
    if (!this.paused) this.paused = new Promise((resolve) => (this.resumePause = resolve));
    await this.applying?.catch(() => undefined);
  }

  resume(): void {
    const r = this.resumePause;
    this.paused = null;
    this.resumePause = null;
    r?.();
  }

  /** Stops application once the batch under way is applied; waiters still pending are rejected. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.subscription?.close();
    this.subscription = null;
    if (this.waiters.length === 0) return;
    const stopped = new RunnerStoppedError();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(stopped);
  }
}
