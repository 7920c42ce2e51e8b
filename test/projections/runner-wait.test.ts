// Read-your-writes waits of the projection runner: resolved once the position is applied, refused
// after their deadline, and no timer left behind once nobody waits.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { mock } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection } from '../../projections/types.ts';

describe('projections: read-your-writes waits', () => {
  let dir: string;
  let log: SqliteEventLog;
  let runner: ProjectionRunner;
  const counter: Projection = {
    name: 'counter',
    collections: [{ name: 'counter', indexes: [] }],
    handles: new Set(['Ticked']),
    async apply(event, ctx) {
      await ctx.collection('counter').applyAt('n', event.position, { $inc: { n: 1 } });
    },
  };
  const tick = (i: number) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    type: 'Ticked',
    data: { i },
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date(0).toISOString(), schema_version: 1 },
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runner-wait-'));
    log = SqliteEventLog.open({ path: join(dir, 'log.sqlite') });
    runner = new ProjectionRunner(log, new MemoryReadStore(), [counter]);
    await runner.start();
  });
  afterEach(async () => {
    await runner.stop();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given appends, when waiting for their positions, then each wait resolves once the event is applied', async () => {
    const results = await Promise.all([1, 2, 3].map((i) => log.append(`s-${i}`, [tick(i)], 'no_stream')));
    await Promise.all(results.map((r) => runner.waitFor(r.position)));
    expect(runner.position).to.be.at.least(Math.max(...results.map((r) => r.position)));
  });

  it('given a position never written, when waiting with a short deadline, then the wait is refused once it passes, and the sweeper stops', async () => {
    // Node's mock timers drive the deadline (Date) and the sweeper (setInterval); nothing else runs meanwhile.
    mock.timers.enable({ apis: ['Date', 'setInterval'], now: 0 });
    try {
      let outcome = 'waiting';
      const settled = runner.waitFor(1_000_000, 300).then(
        () => (outcome = 'resolved'),
        (e: Error) => (outcome = e.message),
      );
      const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
      mock.timers.tick(250);
      await turn();
      expect(outcome, 'before the deadline').to.equal('waiting');
      mock.timers.tick(250);
      await settled;
      expect(outcome).to.match(/did not reach position 1000000/);
      expect((runner as unknown as { sweeper: unknown }).sweeper).to.equal(null);
    } finally {
      mock.timers.reset();
    }
  });
});

describe('projections: a stop during the catch-up (start-up interrupted)', () => {
  let dir: string;
  let log: SqliteEventLog;
  // The catch-up can be held at one event, so a stop lands in the middle of it, during a batch.
  let hold: { at: number; reached: () => void; released: Promise<void> } | null = null;
  const slow: Projection = {
    name: 'slow',
    collections: [{ name: 'slow', indexes: [{ name: 'by_i', keys: { i: 1 } }] }],
    handles: new Set(['Ticked']),
    async apply(event, ctx) {
      if (hold !== null && event.position === hold.at) {
        hold.reached();
        await hold.released;
      }
      await ctx.collection('slow').applyAt(`t-${event.position}`, event.position, { $set: { i: (event.data as { i: number }).i } });
    },
  };
  /** Holds the catch-up at the event at `position`: `arrived` resolves once it gets there, `release()` lets it go on. */
  const holdAt = (position: number) => {
    let reached: () => void = () => undefined;
    let release: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    hold = { at: position, reached, released };
    return { arrived, release };
  };
  /** Starts `runner`, and stops it while the catch-up is held in the batch of events 201-300. */
  const stopDuringCatchUp = async (runner: ProjectionRunner) => {
    const held = holdAt(250);
    const started = runner.start();
    await held.arrived;
    const stopping = runner.stop();
    held.release();
    await stopping;
    hold = null;
    return started;
  };
  const tick = (i: number) => ({
    id: `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`,
    type: 'Ticked',
    data: { i },
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date(0).toISOString(), schema_version: 1 },
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runner-stop-'));
    log = SqliteEventLog.open({ path: join(dir, 'log.sqlite'), catchUpPageSize: 100 });
    for (let i = 0; i < 20; i++)
      await log.append(
        `s-${i}`,
        Array.from({ length: 100 }, (_, j) => tick(i * 100 + j)),
        'no_stream',
      );
  });
  afterEach(async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given a long catch-up, when the runner is stopped in the middle, then start resolves false at a batch boundary with checkpoints and documents at that cut', async () => {
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(log, store, [slow], undefined, 500);
    const waiting = runner.waitFor(2000, 60_000).then(
      () => 'resolved',
      (e: Error) => e.name,
    );
    expect(await stopDuringCatchUp(runner)).to.equal(false);
    const cut = runner.position;
    expect(cut).to.equal(300); // pages of 100: the batch under way was finished, no later one begun
    expect(await store.collection('_checkpoints').findOne({ _id: 'slow' })).to.include({ position: cut });
    expect(await store.collection('slow').count({})).to.equal(cut);
    // A waiter the stop leaves behind is refused rather than left hanging.
    expect(await waiting).to.equal('RunnerStoppedError');
  });

  it('given a stopped catch-up, when started again, then it carries on from the cut and ends equal to an uninterrupted catch-up', async () => {
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(log, store, [slow], undefined, 500);
    expect(await stopDuringCatchUp(runner)).to.equal(false);
    expect(runner.position).to.equal(300);
    expect(await runner.start()).to.equal(true);
    await runner.stop();
    const whole = new MemoryReadStore();
    const reference = new ProjectionRunner(log, whole, [slow], undefined, 500);
    expect(await reference.start()).to.equal(true);
    await reference.stop();
    const docs = async (s: MemoryReadStore) => s.collection('slow').find({ i: { $gte: 0 } }, { sort: { i: 1 } });
    expect(await docs(store)).to.deep.equal(await docs(whole));
    expect((await docs(store)).length).to.equal(2000);
    expect(runner.position).to.equal(2000);
  });

  it('given a stop while start prepares, then start resolves false without catching up', async () => {
    const runner = new ProjectionRunner(log, new MemoryReadStore(), [slow]);
    const started = runner.start();
    await runner.stop();
    expect(await started).to.equal(false);
    expect(runner.position).to.equal(0);
  });
});
