// Read-your-writes waits of the projection runner: resolved once the position is applied, refused
// after their deadline, and no timer left behind once nobody waits.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
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

  it('given a position never written, when waiting with a short deadline, then the wait is refused, and the sweeper stops', async () => {
    const started = Date.now();
    const error = await runner.waitFor(1_000_000, 300).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).to.match(/did not reach position 1000000/);
    expect(Date.now() - started).to.be.within(250, 2000);
    expect((runner as unknown as { sweeper: unknown }).sweeper).to.equal(null);
  });
});

describe('projections: a stop during the catch-up (start-up interrupted)', () => {
  let dir: string;
  let log: SqliteEventLog;
  // Each event is handled after a timer turn, so the catch-up of 2,000 events takes a while and
  // a stop lands in the middle of it.
  const slow: Projection = {
    name: 'slow',
    collections: [{ name: 'slow', indexes: [{ name: 'by_i', keys: { i: 1 } }] }],
    handles: new Set(['Ticked']),
    async apply(event, ctx) {
      if (event.position % 100 === 0) await new Promise((r) => setTimeout(r, 1));
      await ctx.collection('slow').applyAt(`t-${event.position}`, event.position, { $set: { i: (event.data as { i: number }).i } });
    },
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
    const started = runner.start();
    while (runner.position < 300) await new Promise((r) => setTimeout(r, 2));
    await runner.stop();
    expect(await started).to.equal(false);
    const cut = runner.position;
    expect(cut).to.be.within(300, 1999);
    expect(cut % 100).to.equal(0); // pages of 100: the batch under way was finished, no later one begun
    expect(await store.collection('_checkpoints').findOne({ _id: 'slow' })).to.include({ position: cut });
    expect(await store.collection('slow').count({})).to.equal(cut);
    // A waiter the stop leaves behind is refused rather than left hanging.
    expect(await waiting).to.equal('RunnerStoppedError');
  });

  it('given a stopped catch-up, when started again, then it carries on from the cut and ends equal to an uninterrupted catch-up', async () => {
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(log, store, [slow], undefined, 500);
    const started = runner.start();
    while (runner.position < 300) await new Promise((r) => setTimeout(r, 2));
    await runner.stop();
    expect(await started).to.equal(false);
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
