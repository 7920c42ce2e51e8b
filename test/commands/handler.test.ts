import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Aggregate } from '../../commands/handler.ts';
import type { Event } from '../../events/types.ts';
import { deriveOrderedUuid, deriveUuid } from '../../events/kernel/ids.ts';
import type { SqliteEventLog } from '../../events/store/sqlite.ts';
import { CommandBus } from '../../commands/handler.ts';
import type { ManualClock } from '../../events/kernel/clock.ts';
import { closeCommandBus, openCommandBus } from '../helpers/commands.ts';

// A counter: each command appends one Ticked event carrying the count it saw.
const counter: Aggregate<number, Ticked> = { initialState: () => 0, evolve: (n) => n + 1 };
type Ticked = Event<'Ticked', { seen: number }>;
const tick = (n: number): Ticked[] => [{ type: 'Ticked', data: { seen: n } }];

describe('CommandBus: event ids', () => {
  let dir: string;
  let log: SqliteEventLog;
  let clock: ManualClock;
  let bus: CommandBus;
  beforeEach(() => ({ dir, log, clock, bus } = openCommandBus('bus-ids-')));
  afterEach(() => closeCommandBus(log, dir));

  it('given a fresh command whose cached state went stale, when it is decided again, then its events keep the time-ordered ids of the command time', async () => {
    const stream = 'counter-1';
    await bus.handle(stream, counter, tick, bus.context({ commandId: randomUUID(), fresh: true }));
    // Another writer moves the stream behind the bus's cache: the next append fails its revision check.
    await log.append(
      stream,
      [
        {
          id: randomUUID(),
          type: 'Ticked',
          data: { seen: -1 },
          metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: clock.now().toISOString(), schema_version: 1 },
        },
      ],
      'any',
    );
    const commandId = randomUUID();
    const ctx = bus.context({ commandId, fresh: true });
    clock.advance(60_000); // the retry happens later; the ids still come from the command's own time
    const result = await bus.handle(stream, counter, tick, ctx);
    expect(result.events.map((e) => e.id)).to.deep.equal([deriveOrderedUuid(commandId, `${stream}#0`, ctx.now.getTime())]);
    expect(result.events[0].data).to.deep.equal({ seen: 2 });
    const stored = await log.readStream(stream);
    expect(stored.map((e) => e.id).at(-1)).to.equal(result.events[0].id);
  });

  it('given a retryable command (no fresh flag), when it runs, then its ids depend on the command id alone', async () => {
    const commandId = `grant:agt_x:${randomUUID()}`;
    const first = await bus.handle('counter-2', counter, tick, bus.context({ commandId }));
    expect(first.events[0].id).to.equal(deriveUuid(commandId, 'counter-2#0'));
    clock.advance(3_600_000);
    const again = await bus.handle('counter-2', counter, () => tick(0), bus.context({ commandId }));
    expect(again.duplicate).to.equal(true);
    expect(await log.readStream('counter-2')).to.have.length(1);
  });

  it("given a retryable command with a shared id time (a mail attempt's record), when it is appended again later, then its ids are time-ordered at that time and nothing is appended twice", async () => {
    const commandId = `mail:mail_x:${randomUUID()}`;
    const idTime = Date.parse('2026-11-28T08:00:00.000Z');
    const first = await bus.appendRaw('counter-3', tick(1), 'any', bus.context({ commandId, idTime }));
    expect(first.events[0].id).to.equal(deriveOrderedUuid(commandId, 'counter-3#0', idTime));
    clock.advance(3_600_000);
    const again = await bus.appendRaw('counter-3', tick(1), 'any', bus.context({ commandId, idTime }));
    expect(again.duplicate).to.equal(true);
    expect(await log.readStream('counter-3')).to.have.length(1);
  });
});

describe('CommandBus.create: a stream the command has just made', () => {
  let dir: string;
  let log: SqliteEventLog;
  let clock: ManualClock;
  let bus: CommandBus;
  beforeEach(() => ({ dir, log, clock, bus } = openCommandBus('bus-create-')));
  afterEach(() => closeCommandBus(log, dir));

  /** Counts the stream reads the bus makes. */
  const countReads = () => {
    const calls: string[] = [];
    const read = log.readStream.bind(log);
    log.readStream = (stream, options) => {
      calls.push(stream);
      return read(stream, options);
    };
    return calls;
  };

  it('given no stream, when a command creates it, then it is decided on the initial state without a read', async () => {
    const reads = countReads();
    const r = await bus.create('counter-new', counter, tick, bus.context({ commandId: randomUUID() }));
    expect(r.events[0].data).to.deep.equal({ seen: 0 });
    expect(r.revision).to.equal(0);
    expect(reads).to.deep.equal([]);
    expect((await log.readStream('counter-new')).map((e) => e.data)).to.deep.equal([{ seen: 0 }]);
  });

  it('given the stream exists already (written elsewhere), when a command "creates" it, then it is decided again on the stream read', async () => {
    await bus.handle('counter-old', counter, tick, bus.context({ commandId: randomUUID() }));
    // Another bus (another process) has nothing cached; the stream has one event.
    const fresh = new CommandBus(log, clock);
    const reads = countReads();
    const r = await fresh.create('counter-old', counter, tick, fresh.context({ commandId: randomUUID() }));
    expect(r.events[0].data).to.deep.equal({ seen: 1 });
    expect(r.revision).to.equal(1);
    expect(reads).to.deep.equal(['counter-old']);
  });

  it('given the same command again, when it creates the stream a second time, then the log keeps one copy', async () => {
    const commandId = randomUUID();
    await bus.create('counter-again', counter, tick, bus.context({ commandId }));
    const fresh = new CommandBus(log, clock);
    const again = await fresh.create('counter-again', counter, tick, fresh.context({ commandId }));
    expect(again.duplicate).to.equal(true);
    expect(await log.readStream('counter-again')).to.have.length(1);
  });
});
