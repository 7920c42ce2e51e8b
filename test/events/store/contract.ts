// The behaviour every EventLog adapter must have. Stream names carry a random suffix so the suite
// also runs against a shared EventStoreDB server, and reads of $all only look at this test's streams.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { WrongExpectedRevisionError, type EventLog, type EventMetadata, type NewEvent, type RecordedEvent } from '../../../events/store/port.ts';

export interface EventLogFixture {
  log: EventLog;
  cleanup: () => Promise<void>;
}

function metadata(overrides: Partial<EventMetadata> = {}): EventMetadata {
  return {
    actor: 'agent-1',
    request_id: randomUUID(),
    correlation_id: randomUUID(),
    causation_id: null,
    occurred_at: '2025-01-02T03:04:05.678Z',
    schema_version: 1,
    ...overrides,
  };
}

function event(type = 'TestHappened', data: unknown = { n: 1 }): NewEvent {
  return { id: randomUUID(), type, data, metadata: metadata() };
}

function events(count: number, type = 'TestHappened'): NewEvent[] {
  return Array.from({ length: count }, (_, i) => event(type, { n: i }));
}

function uniqueStream(category = 'test'): string {
  return `${category}-${randomUUID().replace(/-/g, '')}`;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function expectWrongRevision(promise: Promise<unknown>, stream: string, actual: number | 'no_stream'): Promise<void> {
  const error = await rejection(promise);
  expect(error).to.be.instanceOf(WrongExpectedRevisionError);
  const wrong = error as WrongExpectedRevisionError;
  expect(wrong.code).to.equal('wrong_expected_revision');
  expect(wrong.status).to.equal(409);
  expect(wrong.stream).to.equal(stream);
  expect(wrong.actual).to.equal(actual);
}

function ids(recorded: RecordedEvent[]): string[] {
  return recorded.map((e) => e.id);
}

function strip(recorded: RecordedEvent): NewEvent {
  return { id: recorded.id, type: recorded.type, data: recorded.data, metadata: recorded.metadata };
}

/** Resolves when `predicate` holds after a handler call, so tests wait on events, not on time. */
class Collector {
  readonly received: RecordedEvent[] = [];
  calls = 0;
  overlapping = 0;
  #active = false;
  #waiters: Array<{ predicate: () => boolean; resolve: () => void }> = [];

  constructor(private readonly streams: Set<string>) {}

  readonly handler = async (batch: RecordedEvent[]): Promise<void> => {
    if (this.#active) this.overlapping++;
    this.#active = true;
    this.calls++;
    // Yield inside the handler so that an adapter calling it again too early would be caught.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const e of batch) if (this.streams.has(e.stream)) this.received.push(e);
    this.#active = false;
    this.#check();
  };

  until(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ predicate, resolve }));
  }

  #check(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.predicate()) return true;
      w.resolve();
      return false;
    });
  }
}

export function eventLogContract(name: string, factory: () => Promise<EventLogFixture>): void {
  describe(`EventLog contract: ${name}`, function () {
    let log: EventLog;
    let cleanup: () => Promise<void>;

    beforeEach(async function () {
      ({ log, cleanup } = await factory());
    });

    afterEach(async function () {
      await cleanup();
    });

    describe('expected revision', function () {
      it('creates a new stream with no_stream and numbers its events from revision 0', async function () {
        const stream = uniqueStream();
        const result = await log.append(stream, events(2), 'no_stream');
        expect(result.revision).to.equal(1);
        expect(result.duplicate).to.equal(false);
        expect(result.position).to.be.greaterThan(0);
        const stored = await log.readStream(stream);
        expect(stored.map((e) => e.revision)).to.deep.equal([0, 1]);
      });

      it('refuses no_stream on an existing stream with the actual revision, writing nothing', async function () {
        const stream = uniqueStream();
        await log.append(stream, events(3), 'no_stream');
        await expectWrongRevision(log.append(stream, events(1), 'no_stream'), stream, 2);
        expect(await log.readStream(stream)).to.have.length(3);
      });

      it('refuses stream_exists on a missing stream and accepts it on an existing one', async function () {
        const stream = uniqueStream();
        await expectWrongRevision(log.append(stream, events(1), 'stream_exists'), stream, 'no_stream');
        expect(await log.readStream(stream)).to.deep.equal([]);
        await log.append(stream, events(1), 'no_stream');
        const result = await log.append(stream, events(1), 'stream_exists');
        expect(result.revision).to.equal(1);
      });

      it('accepts the exact current revision and refuses a stale or a future one', async function () {
        const stream = uniqueStream();
        await log.append(stream, events(2), 'no_stream');
        const result = await log.append(stream, events(1), 1);
        expect(result.revision).to.equal(2);
        await expectWrongRevision(log.append(stream, events(1), 1), stream, 2);
        await expectWrongRevision(log.append(stream, events(1), 5), stream, 2);
        expect(await log.readStream(stream)).to.have.length(3);
      });

      it('refuses a numeric revision on a missing stream', async function () {
        const stream = uniqueStream();
        await expectWrongRevision(log.append(stream, events(1), 0), stream, 'no_stream');
        expect(await log.readStream(stream)).to.deep.equal([]);
      });

      it('appends with any whether or not the stream exists', async function () {
        const stream = uniqueStream();
        expect((await log.append(stream, events(1), 'any')).revision).to.equal(0);
        expect((await log.append(stream, events(2), 'any')).revision).to.equal(2);
      });

      it('lets exactly one of several racing appends with the same expected revision win', async function () {
        const stream = uniqueStream();
        await log.append(stream, events(1), 'no_stream');
        const racers = Array.from({ length: 8 }, () => log.append(stream, events(2), 0));
        const settled = await Promise.allSettled(racers);
        const won = settled.filter((s) => s.status === 'fulfilled');
        const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
        expect(won).to.have.length(1);
        expect(lost).to.have.length(7);
        for (const l of lost) expect(l.reason).to.be.instanceOf(WrongExpectedRevisionError);
        const stored = await log.readStream(stream);
        expect(stored.map((e) => e.revision)).to.deep.equal([0, 1, 2]);
      });

      it('lets exactly one of several racing no_stream appends create the stream', async function () {
        const stream = uniqueStream('reservation');
        const settled = await Promise.allSettled(Array.from({ length: 6 }, () => log.append(stream, events(1), 'no_stream')));
        expect(settled.filter((s) => s.status === 'fulfilled')).to.have.length(1);
        expect(await log.readStream(stream)).to.have.length(1);
      });

      it('checks the expected revision of an empty append and writes nothing', async function () {
        const stream = uniqueStream();
        await expectWrongRevision(log.append(stream, [], 'stream_exists'), stream, 'no_stream');
        const first = await log.append(stream, events(2), 'no_stream');
        const empty = await log.append(stream, [], 1);
        expect(empty.revision).to.equal(1);
        expect(empty.duplicate).to.equal(false);
        expect(await log.readStream(stream)).to.have.length(2);
        expect(first.revision).to.equal(1);
      });
    });

    describe('idempotent append by event ids', function () {
      it('reports a retried append as duplicate and writes nothing, whatever the expected revision', async function () {
        const stream = uniqueStream();
        const batch = events(2);
        const first = await log.append(stream, batch, 'no_stream');
        await log.append(stream, events(1), 1);
        const head = await log.headPosition();
        for (const expected of ['no_stream', 0, 2, 'any', 'stream_exists'] as const) {
          const retry = await log.append(stream, batch, expected);
          expect(retry, `expected ${expected}`).to.deep.equal({
            revision: first.revision,
            position: first.position,
            duplicate: true,
          });
        }
        expect(await log.readStream(stream)).to.have.length(3);
        expect(await log.headPosition()).to.equal(head);
        expect(await log.readAll({ after: head })).to.deep.equal([]);
      });

      it('refuses an append where only some ids are already stored, writing nothing', async function () {
        const stream = uniqueStream();
        const stored = events(2);
        await log.append(stream, stored, 'no_stream');
        const error = await rejection(log.append(stream, [stored[1], event()], 'any'));
        expect(error).to.have.property('code', 'duplicate_event_id');
        expect(await log.readStream(stream)).to.have.length(2);
      });
    });

    describe('readStream', function () {
      let stream: string;
      let appended: NewEvent[];

      beforeEach(async function () {
        stream = uniqueStream();
        appended = events(5);
        await log.append(stream, appended.slice(0, 2), 'no_stream');
        await log.append(stream, appended.slice(2), 1);
      });

      it('reads forwards from the start by default', async function () {
        const read = await log.readStream(stream);
        expect(ids(read)).to.deep.equal(ids(appended as RecordedEvent[]));
        expect(read.map((e) => e.revision)).to.deep.equal([0, 1, 2, 3, 4]);
        expect(read.every((e) => e.stream === stream)).to.equal(true);
      });

      it('reads backwards from the end', async function () {
        const read = await log.readStream(stream, { direction: 'backwards' });
        expect(read.map((e) => e.revision)).to.deep.equal([4, 3, 2, 1, 0]);
      });

      it('starts at fromRevision inclusively in both directions', async function () {
        expect((await log.readStream(stream, { fromRevision: 3 })).map((e) => e.revision)).to.deep.equal([3, 4]);
        expect((await log.readStream(stream, { direction: 'backwards', fromRevision: 1 })).map((e) => e.revision)).to.deep.equal([1, 0]);
      });

      it('stops after maxCount in both directions', async function () {
        expect((await log.readStream(stream, { maxCount: 2 })).map((e) => e.revision)).to.deep.equal([0, 1]);
        expect((await log.readStream(stream, { direction: 'backwards', maxCount: 1 })).map((e) => e.revision)).to.deep.equal([4]);
        expect((await log.readStream(stream, { fromRevision: 1, maxCount: 3 })).map((e) => e.revision)).to.deep.equal([1, 2, 3]);
      });

      it('returns nothing past the end of the stream', async function () {
        expect(await log.readStream(stream, { fromRevision: 5 })).to.deep.equal([]);
      });

      it('returns [] for a stream that does not exist', async function () {
        expect(await log.readStream(uniqueStream())).to.deep.equal([]);
        expect(await log.readStream(uniqueStream(), { direction: 'backwards' })).to.deep.equal([]);
      });
    });

    describe('readAll and positions', function () {
      it('reads the whole log from position 0 in append order with strictly increasing positions', async function () {
        const a = uniqueStream();
        const b = uniqueStream();
        await log.append(a, events(2), 'no_stream');
        await log.append(b, events(1), 'no_stream');
        await log.append(a, events(1), 1);
        const all = await log.readAll();
        const after0 = await log.readAll({ after: 0 });
        expect(ids(after0)).to.deep.equal(ids(all));
        for (let i = 1; i < all.length; i++) expect(all[i].position).to.be.greaterThan(all[i - 1].position);
        expect(all.every((e) => e.position > 0)).to.equal(true);
        const mine = all.filter((e) => e.stream === a || e.stream === b);
        expect(mine.map((e) => `${e.stream === a ? 'a' : 'b'}${e.revision}`)).to.deep.equal(['a0', 'a1', 'b0', 'a2']);
      });

      it('reads after a position exclusively, and stops after maxCount', async function () {
        const stream = uniqueStream();
        const head = await log.headPosition();
        await log.append(stream, events(4), 'no_stream');
        const mine = await log.readAll({ after: head });
        expect(mine.map((e) => e.revision)).to.deep.equal([0, 1, 2, 3]);
        const afterSecond = await log.readAll({ after: mine[1].position });
        expect(ids(afterSecond)).to.deep.equal(ids(mine.slice(2)));
        expect(ids(await log.readAll({ after: mine[0].position, maxCount: 2 }))).to.deep.equal(ids(mine.slice(1, 3)));
        expect(await log.readAll({ after: mine[3].position })).to.deep.equal([]);
      });

      it('returns the revision and position of the last appended event, matching what is read back', async function () {
        const stream = uniqueStream();
        const first = await log.append(stream, events(3), 'no_stream');
        const second = await log.append(stream, events(1), 2);
        const read = await log.readStream(stream);
        expect(first).to.deep.equal({ revision: 2, position: read[2].position, duplicate: false });
        expect(second).to.deep.equal({ revision: 3, position: read[3].position, duplicate: false });
        expect(second.position).to.be.greaterThan(first.position);
      });

      it('gives every event the same position in readStream and readAll', async function () {
        const stream = uniqueStream();
        const head = await log.headPosition();
        await log.append(stream, events(3), 'no_stream');
        expect(await log.readAll({ after: head })).to.deep.equal(await log.readStream(stream));
      });

      it('reads only the event types asked for, in log order, after a position and up to maxCount', async function () {
        const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
        const [a, b, c] = [`TypeA${suffix}`, `TypeB${suffix}`, `TypeC${suffix}`];
        const head = await log.headPosition();
        const stream = uniqueStream();
        await log.append(
          stream,
          [event(a, { n: 0 }), event(b, { n: 1 }), event(c, { n: 2 }), event(a, { n: 3 }), event(c, { n: 4 }), event(b, { n: 5 })],
          'no_stream',
        );
        const all = await log.readAll({ after: head });
        const ofTypes = await log.readAll({ after: head, types: [a, b] });
        expect(ofTypes).to.deep.equal(all.filter((e) => e.type === a || e.type === b));
        expect((await log.readAll({ after: head, types: [c] })).map((e) => e.data)).to.deep.equal([{ n: 2 }, { n: 4 }]);
        expect(await log.readAll({ after: ofTypes[1].position, types: [b, a], maxCount: 1 })).to.deep.equal([ofTypes[2]]);
        expect(await log.readAll({ after: head, types: [] })).to.deep.equal([]);
        expect(await log.readAll({ after: head, types: [`Missing${suffix}`] })).to.deep.equal([]);
      });

      it('tells its observer of every append: latency, outcome and events, and the commits', async function () {
        const seen: Array<{ outcome: string; count: number }> = [];
        let committed = 0;
        log.observer = {
          appended: (seconds, outcome, written) => {
            expect(seconds).to.be.a('number').and.at.least(0);
            seen.push({ outcome, count: written.length });
          },
          committed: (appends) => (committed += appends),
        };
        try {
          const stream = uniqueStream();
          const batch = events(2);
          await log.append(stream, batch, 'no_stream');
          await log.append(stream, batch, 'no_stream');
          await rejection(log.append(stream, events(1), 7));
          expect(seen).to.deep.equal([
            { outcome: 'written', count: 2 },
            { outcome: 'duplicate', count: 2 },
            { outcome: 'conflict', count: 1 },
          ]);
          expect(committed).to.equal(1);
        } finally {
          log.observer = null;
        }
      });

      it('reports the head position as the position of the last event', async function () {
        const stream = uniqueStream();
        const result = await log.append(stream, events(2), 'no_stream');
        expect(await log.headPosition()).to.equal(result.position);
      });
    });

    describe('data and metadata', function () {
      it('round-trip exactly: unicode, nesting, numbers, nulls, empty values', async function () {
        const stream = uniqueStream();
        const data = {
          text: 'héllo wörld — ünïcödé 日本語 한국어 العربية 🚀👩‍👩‍👧‍👦 e\u0301 \u2028\u2029 "quotes" \\ back\\slash\n\ttab',
          empty: '',
          nested: { list: [1, 2.5, -3, 0, { deep: [[[]]], flag: true }], none: null, obj: {} },
          big: Number.MAX_SAFE_INTEGER,
          negative: -Number.MAX_SAFE_INTEGER,
          small: 1e-7,
          falsy: [false, 0, '', null],
          '键 with spaces': 'value',
        };
        const meta = metadata({ actor: null, causation_id: 'cause-✓', schema_version: 3 });
        const appended: NewEvent[] = [
          { id: randomUUID(), type: 'UnicodeTested', data, metadata: meta },
          { id: randomUUID(), type: 'ArrayData', data: [1, 'two', { three: 3 }], metadata: metadata() },
          { id: randomUUID(), type: 'StringData', data: 'just a string', metadata: metadata() },
        ];
        const head = await log.headPosition();
        await log.append(stream, appended, 'no_stream');
        expect((await log.readStream(stream)).map(strip)).to.deep.equal(appended);
        expect((await log.readAll({ after: head })).map(strip)).to.deep.equal(appended);
      });
    });

    describe('subscribeAll', function () {
      it('catches up from a position, then delivers live appends in order with no gap and no duplicate', async function () {
        const stream = uniqueStream();
        const other = uniqueStream();
        const streams = new Set([stream, other]);
        const head = await log.headPosition();
        // More events than the adapters' catch-up pages (SQLite reads 5000 at a time).
        const stored = 6000;
        for (let i = 0; i < stored / 1000; i++) await log.append(stream, events(1000), i === 0 ? 'no_stream' : i * 1000 - 1);
        const collector = new Collector(streams);
        let appendedWhileCatchingUp: Promise<unknown> | undefined;
        const subscription = log.subscribeAll(head, async (batch) => {
          if (appendedWhileCatchingUp === undefined) {
            // Appends racing the catch-up: committed while the first page is being handled.
            appendedWhileCatchingUp = Promise.all([log.append(other, events(3), 'no_stream'), log.append(stream, events(2), stored - 1)]);
          }
          await collector.handler(batch);
        });
        try {
          await collector.until(() => collector.received.length >= stored + 5);
          await appendedWhileCatchingUp;
          await log.append(other, events(2), 2);
          await log.append(stream, events(1), stored + 1);
          await collector.until(() => collector.received.length >= stored + 8);

          const expected = (await log.readAll({ after: head })).filter((e) => streams.has(e.stream));
          expect(expected).to.have.length(stored + 8);
          expect(collector.received.map((e) => e.position)).to.deep.equal(expected.map((e) => e.position));
          expect(collector.received).to.deep.equal(expected);
          expect(collector.overlapping).to.equal(0);
        } finally {
          await subscription.close();
        }
      });

      it('starts strictly after the given position', async function () {
        const stream = uniqueStream();
        await log.append(stream, events(4), 'no_stream');
        const stored = await log.readStream(stream);
        const collector = new Collector(new Set([stream]));
        const subscription = log.subscribeAll(stored[1].position, collector.handler);
        try {
          await collector.until(() => collector.received.length >= 2);
          await log.append(stream, events(1), 3);
          await collector.until(() => collector.received.length >= 3);
          expect(collector.received.map((e) => e.revision)).to.deep.equal([2, 3, 4]);
        } finally {
          await subscription.close();
        }
      });

      it('delivers live events of concurrent appends to several streams, each exactly once', async function () {
        const streams = Array.from({ length: 20 }, () => uniqueStream());
        const collector = new Collector(new Set(streams));
        const subscription = log.subscribeAll(await log.headPosition(), collector.handler);
        try {
          await Promise.all(streams.map((s) => log.append(s, events(2), 'no_stream')));
          await collector.until(() => collector.received.length >= 40);
          const positions = collector.received.map((e) => e.position);
          expect(new Set(positions).size).to.equal(40);
          expect([...positions].sort((x, y) => x - y)).to.deep.equal(positions);
        } finally {
          await subscription.close();
        }
      });

      it('stops delivering after close()', async function () {
        const stream = uniqueStream();
        const first = new Collector(new Set([stream]));
        const start = await log.headPosition();
        const subscription = log.subscribeAll(start, first.handler);
        await log.append(stream, events(1), 'no_stream');
        await first.until(() => first.received.length >= 1);
        await subscription.close();

        await log.append(stream, events(1), 0);
        // A second subscription seeing the event proves it was delivered to whoever was listening.
        const second = new Collector(new Set([stream]));
        const witness = log.subscribeAll(start, second.handler);
        try {
          await second.until(() => second.received.length >= 2);
          await new Promise<void>((resolve) => setImmediate(resolve));
          expect(first.received).to.have.length(1);
        } finally {
          await witness.close();
        }
      });
    });
  });
}
