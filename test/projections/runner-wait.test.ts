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
  const tick = (i: number) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, type: 'Ticked', data: { i }, metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date(0).toISOString(), schema_version: 1 } });

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
    const error = await runner.waitFor(1_000_000, 300).then(() => null, (e: Error) => e);
    expect(error?.message).to.match(/did not reach position 1000000/);
    expect(Date.now() - started).to.be.within(250, 2000);
    expect((runner as unknown as { sweeper: unknown }).sweeper).to.equal(null);
  });
});
