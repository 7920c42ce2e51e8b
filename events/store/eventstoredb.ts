// Production event log: an EventStoreDB / KurrentDB cluster through @eventstore/db-client (gRPC).
//
// Positions. EventStoreDB gives every event in $all a Position {commit, prepare}: byte offsets in
// its transaction file. The port needs one number, unique per event and increasing in log order,
// that can also be turned back into a place to read from. We use the prepare position:
// - Every append through gRPC is an implicit transaction whose events are written one after the
//   other, each as its own committed prepare record; $all reports such an event at
//   {commit: p, prepare: p} with p the offset of its own record (the server's AllReader builds
//   TFPos(prepare.LogPosition, prepare.LogPosition) for them). So p is unique, strictly increasing in
//   $all order, > 0, and {commit: p, prepare: p} is a valid position to read or subscribe from.
// - Only the legacy explicit transactions of the TCP API (never used by this service) give events a
//   commit position after their prepares and could interleave with other writes; they are not
//   supported in a log used by this service.
// - "After p" reads from {commit: p, prepare: p} and drops events with a prepare position <= p
//   client-side, which makes the exclusive bound hold whether the server treats the start
//   position as inclusive (reads) or exclusive (subscriptions).
// - Offsets stay below 2^53 (8 PiB of log), so a JS number holds them exactly.
// - Requires a server >= 22.6, which returns positions on stream reads too.
//
// Duplicates. EventStoreDB dedupes a retried append only when it comes with the expected revision
// the original had (best effort with "any"), and then answers with a plain success that cannot be
// told from a first write; a retry that re-read the stream and appends at the new revision would
// even be written twice. So before every append the adapter reads the stream's last
// `events.length + dedupeWindow` events (one extra round trip, answered from the server's cache
// for hot streams): all ids found -> duplicate: true, nothing written; some found ->
// DuplicateEventIdError. After a WrongExpectedVersion it looks again, so a retry that raced its
// original is reported as a duplicate too. Limits: ids older than the window are not seen; two
// identical appends racing each other both report duplicate: false (the server still writes the
// events once when they carry the same expected revision); ids stored in another stream cannot be
// detected (EventStoreDB has no index by event id).
import {
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  FORWARDS,
  NotLeaderError,
  START,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type JSONType,
  type Position,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  StoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventLog,
  type EventLogObserver,
  type EventMetadata,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type Subscription,
  type SubscriptionHandler,
} from './port.ts';
import {
  DuplicateEventIdError,
  InvalidAppendError,
  assertExpectedRevision,
  satisfies,
  type SubscribeOptions,
  type SubscriptionErrorHandler,
} from './shared.ts';
import { upcast } from '../upcasters.ts';

export interface EventStoreDbEventLogOptions {
  /** Events read back beyond the append's own count when looking for an earlier copy of it. */
  dedupeWindow?: number;
  /** Default error callback of subscriptions that pass none. Without one, errors go to console.error. */
  onError?: SubscriptionErrorHandler;
  /** Largest batch handed to a subscription handler; the server is paused beyond it. */
  subscriptionBatchSize?: number;
}

function toPosition(position: number): Position {
  const p = BigInt(position);
  return { commit: p, prepare: p };
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof TimeoutError || error instanceof NotLeaderError) {
    return true;
  }
  // Raw gRPC status: 14 UNAVAILABLE, 4 DEADLINE_EXCEEDED.
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 14 || code === 4) return true;
  return error instanceof Error && /failed to discover|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT/i.test(error.message);
}

function mapError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  if (isUnavailable(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new StoreUnavailableError(`EventStoreDB unavailable: ${message}`, { cause: error });
  }
  return error;
}

function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const event = resolved.event;
  // System events ($-types, $-streams) and foreign binary events are not part of this service's log.
  if (event === undefined || !event.isJson || event.type.startsWith('$') || event.streamId.startsWith('$')) {
    return undefined;
  }
  const position = event.position?.prepare ?? resolved.commitPosition;
  if (position === undefined) {
    throw new StoreUnavailableError('EventStoreDB returned no event position (server 22.6 or later is required)');
  }
  return upcast({
    id: event.id,
    type: event.type,
    data: event.data as unknown,
    metadata: event.metadata as unknown as EventMetadata,
    stream: event.streamId,
    revision: Number(event.revision),
    position: Number(position),
  });
}

function toEventData(event: NewEvent) {
  return jsonEvent({
    id: event.id,
    type: event.type,
    // The client JSON.stringifies data and metadata as they are: any JSON value works.
    data: event.data as JSONType,
    metadata: event.metadata,
  });
}

function toExpectedVersion(expected: ExpectedRevision): AppendExpectedRevision {
  return typeof expected === 'number' ? BigInt(expected) : expected;
}

/** Iterates a read, and cancels the gRPC call when the loop stops early. */
async function* iterate<E>(read: StreamingRead<E>): AsyncGenerator<E> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } finally {
    if (!finished) await read.cancel().catch(() => undefined);
  }
}

export class EventStoreDbEventLog implements EventLog {
  readonly name = 'eventstoredb';
  /** Default error callback of subscriptions. */
  onError: SubscriptionErrorHandler | undefined;
  observer: EventLogObserver | null = null;

  readonly #client: EventStoreDBClient;
  readonly #dedupeWindow: number;
  readonly #batchSize: number;
  readonly #subscriptions = new Set<EventStoreDbSubscription>();
  #closed = false;

  private constructor(client: EventStoreDBClient, options: EventStoreDbEventLogOptions) {
    this.#client = client;
    this.onError = options.onError;
    this.#dedupeWindow = options.dedupeWindow ?? 64;
    this.#batchSize = options.subscriptionBatchSize ?? 1000;
  }

  /** Connects with an `esdb://` / `esdb+discover://` connection string and checks the server answers. */
  static async connect(url: string, options: EventStoreDbEventLogOptions = {}): Promise<EventStoreDbEventLog> {
    const client = EventStoreDBClient.connectionString(url);
    const log = new EventStoreDbEventLog(client, options);
    try {
      await log.ping();
    } catch (error) {
      await client.dispose().catch(() => undefined);
      throw error;
    }
    return log;
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const observer = this.observer;
    if (!observer) return this.#append(stream, events, expected);
    const at = performance.now();
    try {
      const result = await this.#append(stream, events, expected);
      observer.appended((performance.now() - at) / 1000, result.duplicate ? 'duplicate' : 'written', events);
      // Each append is its own transaction on the server: a group of one.
      if (!result.duplicate && events.length > 0) observer.committed?.(1, events.length);
      return result;
    } catch (error) {
      observer.appended((performance.now() - at) / 1000, error instanceof WrongExpectedRevisionError ? 'conflict' : 'failed', events);
      throw error;
    }
  }

  async #append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    assertExpectedRevision(expected);
    if (events.length === 0) return this.#emptyAppend(stream, expected);
    if (new Set(events.map((e) => e.id)).size !== events.length) {
      throw new DuplicateEventIdError(
        stream,
        events.map((e) => e.id),
      );
    }
    for (const event of events) {
      if (typeof event.id !== 'string' || typeof event.type !== 'string' || event.data === undefined || event.metadata === undefined) {
        throw new InvalidAppendError(`stream ${stream}: every event needs a string id and type, data and metadata`);
      }
    }
    const stored = await this.#findStored(stream, events);
    if (stored) return stored;
    let revision: number;
    let position: number;
    try {
      const result = await this.#client.appendToStream(stream, events.map(toEventData), {
        expectedRevision: toExpectedVersion(expected),
      });
      if (!result.success) {
        // Only when the connection string sets throwOnAppendFailure=false.
        const current = Number(result.nextExpectedRevision);
        return await this.#refused(stream, events, expected, current < 0 ? 'no_stream' : current);
      }
      revision = Number(result.nextExpectedRevision);
      // The server reports the position of the append's last record.
      position = result.position ? Number(result.position.prepare) : 0;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === 'no_stream' ? 'no_stream' : Number(error.actualVersion);
        return this.#refused(stream, events, expected, actual);
      }
      throw mapError(error);
    }
    if (!(position > 0)) position = await this.#positionOf(stream, revision);
    return { revision, position, duplicate: false };
  }

  async #refused(stream: string, events: NewEvent[], expected: ExpectedRevision, actual: number | 'no_stream'): Promise<AppendResult> {
    const stored = await this.#findStored(stream, events);
    if (stored) return stored;
    throw new WrongExpectedRevisionError(stream, expected, actual);
  }

  async #emptyAppend(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
    const current = last === undefined ? -1 : last.revision;
    if (!satisfies(expected, current)) {
      throw new WrongExpectedRevisionError(stream, expected, current < 0 ? 'no_stream' : current);
    }
    return { revision: current, position: last === undefined ? 0 : last.position, duplicate: false };
  }

  // null: no id of the append is among the stream's last events. A result: all of them are.
  async #findStored(stream: string, events: NewEvent[]): Promise<AppendResult | null> {
    const recent = await this.readStream(stream, {
      direction: 'backwards',
      maxCount: events.length + this.#dedupeWindow,
    });
    if (recent.length === 0) return null;
    const byId = new Map(recent.map((e) => [e.id, e]));
    let found = 0;
    for (const event of events) if (byId.has(event.id)) found++;
    if (found === 0) return null;
    const last = byId.get(events[events.length - 1].id);
    if (found === events.length && last !== undefined) {
      return { revision: last.revision, position: last.position, duplicate: true };
    }
    throw new DuplicateEventIdError(
      stream,
      events.map((e) => e.id),
    );
  }

  async #positionOf(stream: string, revision: number): Promise<number> {
    const [event] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (event === undefined) throw new StoreUnavailableError(`EventStoreDB lost ${stream}@${revision} after appending it`);
    return event.position;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.#assertOpen();
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    const out: RecordedEvent[] = [];
    try {
      const read = this.#client.readStream(stream, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of iterate(read)) {
        const event = toRecorded(resolved);
        if (event) out.push(event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw mapError(error);
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.#assertOpen();
    const limit = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return [];
    const after = options.after ?? 0;
    if (options.types !== undefined) return this.#readTypes(options.types, after, limit);
    const out: RecordedEvent[] = [];
    try {
      // No server-side filter on reads in this client: system events are skipped here, so maxCount
      // cannot be passed to the server; the read is cancelled once enough events arrived.
      const read = this.#client.readAll({
        direction: FORWARDS,
        fromPosition: after > 0 ? toPosition(after) : START,
      });
      for await (const resolved of iterate(read)) {
        const event = toRecorded(resolved);
        if (event === undefined || event.position <= after) continue;
        out.push(event);
        if (out.length >= limit) break;
      }
    } catch (error) {
      throw mapError(error);
    }
    return out;
  }

  /**
   * Events of some types only, filtered by the server: the client's reads take no filter, so this
   * is a filtered $all subscription from `after` that stops at the head it saw first (an event at
   * or past it, a filter checkpoint past it, or the server's caught-up signal), or at `limit`.
   */
  async #readTypes(types: readonly string[], after: number, limit: number): Promise<RecordedEvent[]> {
    const distinct = [...new Set(types)];
    if (distinct.length === 0) return [];
    const head = await this.headPosition();
    if (head <= after) return [];
    const out: RecordedEvent[] = [];
    let finish: (error?: unknown) => void = () => undefined;
    const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const source = this.#client.subscribeToAll({
      fromPosition: after > 0 ? toPosition(after) : START,
      filter: eventTypeFilter({
        regex: `^(?:${distinct.map(escape).join('|')})$`,
        checkpointInterval: 1,
        checkpointReached: (_subscription, position) => {
          if (Number(position.prepare) >= head) finish();
        },
      }),
    });
    return new Promise<RecordedEvent[]>((resolve, reject) => {
      let done = false;
      finish = (error?: unknown) => {
        if (done) return;
        done = true;
        void source
          .unsubscribe()
          .catch(() => undefined)
          .then(() => (error === undefined ? resolve(out) : reject(mapError(error))));
      };
      source.on('data', (resolved: AllStreamResolvedEvent) => {
        if (done) return;
        let event: RecordedEvent | undefined;
        try {
          event = toRecorded(resolved);
        } catch (error) {
          finish(error);
          return;
        }
        if (event === undefined || event.position <= after) return;
        if (event.position > head) return finish();
        out.push(event);
        if (out.length >= limit || event.position >= head) finish();
      });
      source.on('caughtUp', () => finish());
      source.on('error', (error: Error) => finish(error));
      source.on('end', () => finish());
    });
  }

  async headPosition(): Promise<number> {
    this.#assertOpen();
    try {
      const read = this.#client.readAll({ direction: BACKWARDS, fromPosition: END });
      for await (const resolved of iterate(read)) {
        const event = toRecorded(resolved);
        if (event) return event.position;
      }
    } catch (error) {
      throw mapError(error);
    }
    return 0;
  }

  /**
   * Catch-up then live, both done by the server's $all subscription (system events filtered out
   * on the server). Batches are what arrived while the previous handler call ran, at most
   * subscriptionBatchSize events.
   */
  subscribeAll(after: number, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    this.#assertOpen();
    const source = this.#client.subscribeToAll({
      fromPosition: after > 0 ? toPosition(after) : START,
      filter: excludeSystemEvents(),
    });
    const subscription = new EventStoreDbSubscription(source, after, handler, options.onError ?? this.onError, this.#batchSize, () =>
      this.#subscriptions.delete(subscription),
    );
    this.#subscriptions.add(subscription);
    return subscription;
  }

  async ping(): Promise<void> {
    this.#assertOpen();
    try {
      const read = this.#client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
      for await (const _ of iterate(read)) break;
    } catch (error) {
      const mapped = mapError(error);
      if (mapped instanceof StoreUnavailableError) throw mapped;
      throw new StoreUnavailableError(`EventStoreDB ping failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#subscriptions].map((s) => s.close()));
    await this.#client.dispose();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreUnavailableError('EventStoreDB event log is closed');
  }
}

class EventStoreDbSubscription implements Subscription {
  #buffer: RecordedEvent[] = [];
  #cursor: number;
  #paused = false;
  #closed = false;
  #failure: unknown;
  #failed = false;
  #wake: (() => void) | undefined;
  readonly #running: Promise<void>;

  constructor(
    private readonly source: AllStreamSubscription,
    after: number,
    private readonly handler: SubscriptionHandler,
    private readonly onError: SubscriptionErrorHandler | undefined,
    private readonly batchSize: number,
    private readonly forget: () => void,
  ) {
    this.#cursor = after;
    source.on('data', (resolved: AllStreamResolvedEvent) => {
      if (this.#closed || this.#failed) return;
      let event: RecordedEvent | undefined;
      try {
        event = toRecorded(resolved);
      } catch (error) {
        this.#fail(error);
        return;
      }
      if (event === undefined || event.position <= this.#cursor) return;
      this.#cursor = event.position;
      this.#buffer.push(event);
      if (this.#buffer.length >= this.batchSize && !this.#paused) {
        this.#paused = true;
        source.pause();
      }
      this.#signal();
    });
    source.on('error', (error: Error) => this.#fail(mapError(error)));
    source.on('end', () => this.#fail(new StoreUnavailableError('EventStoreDB ended the subscription')));
    this.#running = this.#run();
  }

  async #run(): Promise<void> {
    await Promise.resolve();
    while (!this.#closed) {
      if (this.#buffer.length === 0) {
        if (this.#failed) return this.#stop(this.#failure);
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        continue;
      }
      const batch = this.#buffer;
      this.#buffer = [];
      if (this.#paused) {
        this.#paused = false;
        this.source.resume();
      }
      try {
        await this.handler(batch);
      } catch (error) {
        return this.#stop(error);
      }
    }
  }

  async #stop(error: unknown): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.forget();
    await this.source.unsubscribe().catch(() => undefined);
    try {
      if (this.onError) this.onError(error);
      else console.error('event log subscription stopped:', error);
    } catch (callbackError) {
      console.error('event log subscription onError threw:', callbackError);
    }
  }

  #fail(error: unknown): void {
    if (this.#closed || this.#failed) return;
    this.#failed = true;
    this.#failure = error;
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    if (wake) {
      this.#wake = undefined;
      wake();
    }
  }

  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.forget();
      this.#signal();
      await this.source.unsubscribe().catch(() => undefined);
    }
    await this.#running;
  }
}
