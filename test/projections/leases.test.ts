// One active projector per projection set through a lease in the shared read store: a standby
// takes over once the owner's lease has expired (the injected clock moves; nothing sleeps) and
// continues from the checkpoints the owner left.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../events/kernel/clock.ts';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { CheckpointFollower } from '../../projections/follower.ts';
import { Lease, LeaseKeeper } from '../../projections/leases.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import type { Projection } from '../../projections/types.ts';

const TTL = 15_000;

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

/** A projector process as the lease sees it: its keeper starts a runner when the lease is taken and stops it when lost. */
function projector(store: ReadStore, log: SqliteEventLog, owner: string, clock: ManualClock) {
  const state = { runner: null as ProjectionRunner | null, starts: 0, losses: 0 };
  const keeper = new LeaseKeeper(
    new Lease(store, 'projections', owner, TTL, clock),
    {
      async onAcquired() {
        state.starts++;
        state.runner = new ProjectionRunner(log, store, [counter]);
        await state.runner.start();
      },
      async onLost() {
        state.losses++;
        await state.runner?.stop();
        state.runner = null;
      },
    },
    clock,
  );
  return { state, keeper };
}

describe('projections: lease takeover between projectors', () => {
  let dir: string;
  let log: SqliteEventLog;
  // The shared read store (MongoDB in production; the contract suite runs the lease on it too).
  let store: MemoryReadStore;
  let clock: ManualClock;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'leases-'));
    log = SqliteEventLog.open({ path: join(dir, 'log.sqlite') });
    store = new MemoryReadStore();
    clock = new ManualClock('2026-05-01T00:00:00.000Z');
  });
  afterEach(async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = async () => (await store.collection('counter').findOne({ _id: 'n' }))?.n;

  it('runs one projector at a time; after the owner crashes the standby takes over at expiry and continues from the checkpoint', async () => {
    for (let i = 1; i <= 3; i++) await log.append(`s-${i}`, [tick(i)], 'no_stream');
    const a = projector(store, log, 'a', clock);
    const b = projector(store, log, 'b', clock);
    await a.keeper.tick();
    await b.keeper.tick();
    expect([a.state.starts, b.state.starts]).to.deep.equal([1, 0]);
    expect(await count()).to.equal(3);

    // The owner renews within its lease; the standby keeps being refused.
    clock.advance(TTL - 1);
    await a.keeper.tick();
    clock.advance(TTL - 1);
    await b.keeper.tick();
    expect(b.keeper.held).to.equal(false);

    // The owner crashes: it stops applying and never renews (nor releases).
    const crashed = a.state.runner;
    await crashed?.stop();
    const last = await log.append('s-4', [tick(4)], 'no_stream');
    await b.keeper.tick();
    expect(b.state.starts).to.equal(0);
    clock.advance(1);
    await b.keeper.tick();
    expect(b.state.starts).to.equal(1);
    await b.state.runner?.waitFor(last.position);
    // From the checkpoint: events 1-3 are not applied twice.
    expect(await count()).to.equal(4);
    const more = await log.append('s-5', [tick(5)], 'no_stream');
    await b.state.runner?.waitFor(more.position);
    expect(await count()).to.equal(5);

    // The old owner comes back: its renewal fails and it stops (to restart as a standby).
    await a.keeper.tick();
    expect(a.state.losses).to.equal(1);
    expect(a.keeper.held).to.equal(false);
    await b.keeper.stop();
    // A clean stop releases at once: the next projector need not wait for expiry.
    await a.keeper.tick();
    expect(a.keeper.held).to.equal(true);
    expect(a.state.starts).to.equal(2);
    await a.keeper.stop();
  });

  it("lets an api process's follower wait for the projector's checkpoint", async () => {
    const a = projector(store, log, 'a', clock);
    await a.keeper.tick();
    const follower = new CheckpointFollower(store, [counter], { pollMs: 5 });
    await follower.start();
    try {
      const r = await log.append('s-1', [tick(1)], 'no_stream');
      await follower.waitFor(r.position, 10_000);
      expect(follower.position).to.be.at.least(r.position);
      expect(follower.checkpointsByProjection()).to.deep.equal([{ name: 'counter', checkpoint: follower.position, handles: ['Ticked'] }]);
      let refused: unknown;
      await follower.rebuild().catch((e: unknown) => (refused = e));
      expect(refused).to.include({ code: 'rebuild_elsewhere', status: 409 });
    } finally {
      await follower.stop();
      await a.keeper.stop();
    }
  });
});
