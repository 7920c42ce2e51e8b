import { expect } from 'chai';
import { DomainError } from '../../events/kernel/errors.ts';
import { ProjectionRebuilds } from '../../projections/operations.ts';
import type { RebuildHooks } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection } from '../../projections/types.ts';

/** A runner whose rebuild reports what the test says and ends when the test says. */
function fakeRunner() {
  let hooks: RebuildHooks = {};
  let finish: (r: { position: number; events: number }) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  const projections = [{ name: 'posts', collections: [], handles: new Set<string>(), apply: async () => undefined } satisfies Projection];
  return {
    runner: {
      projections,
      rebuild: (_names: string[] | null, h: RebuildHooks = {}) => {
        hooks = h;
        return new Promise<{ position: number; events: number }>((resolve, reject) => {
          finish = resolve;
          fail = reject;
        });
      },
    },
    progress: (position: number, head: number) => hooks.onProgress?.({ projection: 'posts', position, head, events: position }),
    finish: (position: number) => finish({ position, events: position }),
    fail: (e: Error) => fail(e),
  };
}

describe('projections/operations: ProjectionRebuilds', () => {
  const now = () => new Date('2026-03-10T09:30:00.000Z');

  it('runs one rebuild at a time (409 rebuild_running), refuses unknown names (404), and reports progress then the swap', async () => {
    const fake = fakeRunner();
    const rebuilds = new ProjectionRebuilds(fake.runner, new MemoryReadStore(), now);
    expect(() => rebuilds.start('nope'))
      .to.throw(DomainError)
      .with.property('code', 'projection_not_found');
    const first = rebuilds.start('posts');
    expect(first).to.include({ state: 'running', progress: 0, eta_seconds: null });
    expect(() => rebuilds.start('posts'))
      .to.throw(DomainError)
      .with.property('code', 'rebuild_running');
    fake.progress(250, 1000);
    expect(rebuilds.status('posts')).to.include({ position: 250, target: 1000, progress: 0.25 });
    expect(rebuilds.status('posts')?.eta_seconds).to.be.a('number');
    fake.finish(1200);
    const done = await rebuilds.settled();
    expect(done).to.include({ state: 'swapped', position: 1200, progress: 1, eta_seconds: 0, finished_at: '2026-03-10T09:30:00.000Z' });
    expect(rebuilds.start('posts').state).to.equal('running');
    fake.fail(new Error('boom'));
    expect(await rebuilds.settled()).to.include({ state: 'failed', error: 'boom' });
  });
});
