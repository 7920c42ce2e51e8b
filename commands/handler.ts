import { BoundedCache } from '../events/kernel/cache.ts';
import type { Clock } from '../events/kernel/clock.ts';
import { DomainError } from '../events/kernel/errors.ts';
import type { IdPrefix } from '../events/kernel/ids.ts';
import { deriveId, deriveOrderedId, deriveOrderedUuid, deriveUuid } from '../events/kernel/ids.ts';
import type { AppendResult, EventLog, ExpectedRevision, NewEvent } from '../events/store/port.ts';
import { WrongExpectedRevisionError } from '../events/store/port.ts';
import type { DomainEvent } from '../events/catalogue.ts';
import type { Appendable, Event } from '../events/types.ts';
import { chargeOf } from '../events/types.ts';
import { schemaVersionOf } from '../events/upcasters.ts';

/** Any event shape; the service's own are the `DomainEvent` union (the default everywhere). */
type AnyEvent = Event<string, unknown>;

/**
 * Pure fold of one aggregate's stream: `E` is the union of the event types its stream holds.
 * `evolve` must not mutate `state`.
 */
export interface Aggregate<S, E extends AnyEvent = DomainEvent> {
  initialState(): S;
  evolve(state: S, event: E): S;
  /**
   * An invariant of the whole aggregate, checked before every decision on its stream (and by the
   * decider specs): the error it returns refuses every command, e.g. a deactivated agent's.
   */
  refuses?(state: S): DomainError | null;
}

/** What every command carries besides its data: the time from the injected clock (and, per command, its ids). */
export interface CommandMetadata {
  now: Date;
}

/**
 * A command as a decider takes it: `data` holds the caller's input and every fact loaded from
 * other streams or read models; `metadata` the time and every random value, so `decide` is pure.
 */
export interface Command<T extends string, D, M extends CommandMetadata = CommandMetadata> {
  type: T;
  data: D;
  metadata: M;
}

/** Who asked and when: time comes from the injected clock, ids from the command id. */
export interface CommandContext {
  /** Stable per logical command: the Idempotency-Key (hashed with the caller) or a random id. */
  commandId: string;
  actor: string | null;
  requestId: string | null;
  now: Date;
  /**
   * True when `commandId` was minted for this one request (no Idempotency-Key), so nothing can
   * retry the command later: its event ids then start with `now` (time-ordered, see
   * deriveOrderedUuid), which keeps the log's id index appends local. Ids stay deterministic
   * within the command (the handler's own retries). A retryable command id leaves this unset.
   */
  fresh?: boolean;
  /**
   * A time every retry of this command shares (a mail attempt's record: the mail's queue time). Its
   * event ids are then time-ordered at that time, like a fresh command's at `now`, and still depend
   * on the command id and this time alone, so a retry appends nothing twice. Ignored when `fresh`.
   */
  idTime?: number;
  /** The request's credit meter: the charges its commands decided, and whether it is a dry run. */
  meter?: CreditMeter;
}

/**
 * The id of an entity a command creates: derived from the command id (and `label`), so a retried
 * command makes the same one; time-ordered when the command is fresh and cannot be retried
 * (deriveOrderedId), which keeps the new stream's entry in the log's index beside its neighbours'.
 */
export function entityId(prefix: IdPrefix, ctx: CommandContext, label = ''): string {
  return ctx.fresh ? deriveOrderedId(prefix, ctx.commandId, label, ctx.now.getTime()) : deriveId(prefix, ctx.commandId, label);
}

/** A charge decided by a command of the request (the cost headers and dry runs are built from these). */
export interface MeteredCharge {
  agent_id: string;
  action: string;
  amount_mc: number;
  balance_after_mc: number;
}

/**
 * Per request: every charge its commands appended, in order. A dry run (`dryRun`) decides the
 * first command with every check and stops there with DryRunComplete: nothing is appended.
 */
export interface CreditMeter {
  dryRun: boolean;
  charges: MeteredCharge[];
}

/** Thrown by the handler in a dry run once a command was decided (it passed every check): what it would charge. */
export class DryRunComplete extends Error {
  constructor(readonly charges: MeteredCharge[]) {
    super('dry run: decided, nothing appended');
  }
}

/** The charges carried by decided events, with their payer. */
export function chargesOf(events: ReadonlyArray<{ data: unknown }>): MeteredCharge[] {
  const out: MeteredCharge[] = [];
  for (const e of events) {
    const c = chargeOf(e.data);
    const payer = (e.data as { agent_id?: unknown }).agent_id;
    if (c && typeof payer === 'string') out.push({ agent_id: payer, action: c.action, amount_mc: c.amount_mc, balance_after_mc: c.balance_after_mc });
  }
  return out;
}

export interface CommandResult<E extends AnyEvent = DomainEvent, S = unknown> {
  /** The aggregate's state after the events (answers are built from `events` and `state`). */
  state: S;
  /** The events `decide` returned, with their ids and metadata (also on a duplicate, where nothing new was stored). */
  events: Array<Appendable<E>>;
  /** Global position of the last event (the read models are up to date once they reach it). */
  position: number;
  revision: number;
  /** True when the command had already been applied (a retry): nothing new was appended. */
  duplicate: boolean;
}

interface Cached<S> {
  state: S;
  revision: number | null;
}

const MAX_ATTEMPTS = 8;

/**
 * The generic command handler: load (fold) -> decide -> append with the revision read.
 *
 * Commands on one stream run one at a time in arrival order, so they never race each other in
 * this process. When the log commits appends in order (SQLite group commit), the next command
 * decides on the state including the previous one's events while those are still being made
 * durable, so a busy stream costs one fsync per batch, not per command. A rejected append
 * invalidates the cached state; commands decided on it fail their revision check and retry on a
 * fresh read. Another process writing the same stream (EventStoreDB deployments) is caught the
 * same way by the expected revision. A command that decides nothing on such speculative state
 * answers only once the appends it saw are durable (and with their position, so the caller's
 * read-your-writes wait covers them); if they fail, it is decided again.
 */
export class CommandBus {
  private readonly tails = new Map<string, Promise<unknown>>();
  /** The state and revision of recently used streams, the least recently used dropped first. */
  private readonly cache: BoundedCache<string, Cached<unknown>>;
  /** The last append of each stream that is not durable yet (pipelined logs only). */
  private readonly inflight = new Map<string, Promise<AppendResult>>();
  private readonly pipelined: boolean;

  constructor(
    readonly log: EventLog,
    readonly clock: Clock,
    cacheSize = 100_000,
  ) {
    this.cache = new BoundedCache({ max: cacheSize });
    this.pipelined = log.name === 'sqlite';
  }

  context(partial: Partial<CommandContext> & { commandId: string }): CommandContext {
    return { actor: null, requestId: null, now: this.clock.now(), ...partial };
  }

  /**
   * `E` is the union the aggregate folds; `R` what this command's `decide` returns (events of `E`),
   * so the result's events are typed as precisely as the decider's.
   */
  async handle<S, E extends AnyEvent, R extends readonly E[] = E[]>(
    stream: string,
    aggregate: Aggregate<S, E>,
    decide: (state: S, revision: number | null) => R,
    ctx: CommandContext,
  ): Promise<CommandResult<R[number], S>> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { events, state, append } = await this.serial(stream, () => this.attempt<S, E, R[number]>(stream, aggregate, decide, ctx));
        const result = await append;
        ctx.meter?.charges.push(...chargesOf(events));
        return { events, state, position: result.position, revision: result.revision, duplicate: result.duplicate };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        this.cache.delete(stream);
        if (attempt >= MAX_ATTEMPTS) {
          throw new DomainError(409, 'concurrency_conflict', 'The resource changed while the request ran; retry it');
        }
      }
    }
  }

  /**
   * `handle` for a stream whose id the command has just made (derived from its command id): it
   * decides on the aggregate's initial state without reading the log, and appends expecting no
   * stream. If the stream exists after all (the same command again), the log answers its events as
   * duplicates, or the revision check fails and the command is decided again on the state read.
   */
  create<S, E extends AnyEvent, R extends readonly E[] = E[]>(
    stream: string,
    aggregate: Aggregate<S, E>,
    decide: (state: S, revision: number | null) => R,
    ctx: CommandContext,
  ): Promise<CommandResult<R[number], S>> {
    if (!this.cache.has(stream) && !this.tails.has(stream)) this.cache.set(stream, { state: aggregate.initialState(), revision: null });
    return this.handle(stream, aggregate, decide, ctx);
  }

  /** Reads the current state of a stream (cached), without deciding anything. */
  async load<S, E extends AnyEvent>(stream: string, aggregate: Aggregate<S, E>): Promise<Cached<S>> {
    const hit = this.cache.get(stream) as Cached<S> | undefined;
    if (hit) return hit;
    let state = aggregate.initialState();
    let revision: number | null = null;
    for (const e of await this.log.readStream(stream)) {
      // The cast: a stream's name fixes its aggregate, and only that aggregate's commands append to it.
      state = aggregate.evolve(state, e as unknown as E);
      revision = e.revision;
    }
    const loaded = { state, revision };
    this.cache.set(stream, loaded);
    return loaded;
  }

  private async attempt<S, E extends AnyEvent, D extends E>(
    stream: string,
    aggregate: Aggregate<S, E>,
    decide: (state: S, revision: number | null) => readonly D[],
    ctx: CommandContext,
  ) {
    const { state, revision } = (this.cache.get(stream) as Cached<S> | undefined) ?? (await this.load(stream, aggregate));
    const refusal = aggregate.refuses?.(state);
    if (refusal) throw refusal;
    const decided = decide(state, revision);
    if (ctx.meter?.dryRun) throw new DryRunComplete(chargesOf(decided));
    const events = decided.map((e, i) => this.toNewEvent(e, i, stream, ctx));
    if (events.length === 0) {
      const prior = this.inflight.get(stream);
      const append: Promise<AppendResult> = prior
        ? prior.then((r) => ({ position: r.position, revision: r.revision, duplicate: true }))
        : Promise.resolve({ position: 0, revision: revision ?? -1, duplicate: true });
      return { events, state, append };
    }
    const expected: ExpectedRevision = revision === null ? 'no_stream' : revision;
    const append = this.log.append(stream, events, expected).then(
      (result) => {
        if (result.duplicate) this.cache.delete(stream);
        return result;
      },
      (err: unknown) => {
        this.cache.delete(stream);
        throw err;
      },
    );
    let next = state;
    for (const e of decided) next = aggregate.evolve(next, e);
    this.cache.set(stream, { state: next, revision: (revision ?? -1) + events.length });
    if (!this.pipelined) await append;
    else this.track(stream, append);
    return { events, state: next, append };
  }

  private track(stream: string, append: Promise<AppendResult>): void {
    this.inflight.set(stream, append);
    // Observed by the caller; this only forgets it once it has settled.
    append.then(
      () => this.untrack(stream, append),
      () => this.untrack(stream, append),
    );
  }

  private untrack(stream: string, append: Promise<AppendResult>): void {
    if (this.inflight.get(stream) === append) this.inflight.delete(stream);
  }

  private toNewEvent<E extends AnyEvent>(e: E, index: number, stream: string, ctx: CommandContext): Appendable<E> {
    // The time its ids are ordered at: a fresh command's own, or one its retries share; else none.
    const idTime = ctx.fresh ? ctx.now.getTime() : ctx.idTime;
    const event: NewEvent = {
      id: idTime === undefined ? deriveUuid(ctx.commandId, `${stream}#${index}`) : deriveOrderedUuid(ctx.commandId, `${stream}#${index}`, idTime),
      type: e.type,
      data: e.data,
      metadata: {
        actor: ctx.actor,
        request_id: ctx.requestId,
        correlation_id: ctx.requestId,
        causation_id: ctx.commandId,
        occurred_at: ctx.now.toISOString(),
        schema_version: schemaVersionOf(e.type),
      },
    };
    // Appendable<E> is NewEvent narrowed to E's type/data pairs, which `e` supplied.
    return event as Appendable<E>;
  }

  /** Runs `fn` after every earlier call for the same stream has finished its turn. */
  private serial<T>(stream: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(stream) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(stream, tail);
    void tail.then(() => {
      if (this.tails.get(stream) === tail) this.tails.delete(stream);
    });
    return run;
  }

  /** Appends events that need no state (reservations, admin grants) with an explicit expectation. */
  async appendRaw<E extends AnyEvent>(stream: string, decided: E[], expected: ExpectedRevision, ctx: CommandContext): Promise<CommandResult<E, null>> {
    if (ctx.meter?.dryRun) throw new DryRunComplete(chargesOf(decided));
    const events = decided.map((e, i) => this.toNewEvent(e, i, stream, ctx));
    this.cache.delete(stream);
    const append = this.log.append(stream, events, expected);
    if (this.pipelined) this.track(stream, append);
    const r = await append;
    return { events, state: null, position: r.position, revision: r.revision, duplicate: r.duplicate };
  }
}
