// inLanes: the bounded concurrency of the start-up sweeps (grants due, notifications expired);
// yieldingLanes: the lanes of the mail reactors, narrowed while requests are in flight.
import { expect } from 'chai';
import { Foreground } from '../../events/kernel/foreground.ts';
import { inLanes, yieldingLanes } from '../../workers/lanes.ts';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('workers: inLanes', () => {
  it('given more items than lanes, then every item is worked on once, never more than `lanes` at a time', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await inLanes(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (i) => {
        running++;
        most = Math.max(most, running);
        await tick();
        done.push(i);
        running--;
      },
    );
    expect(most).to.equal(4);
    expect([...done].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
  });

  it('given a failure, then no lane takes another item, the items under way finish, and it rejects with that failure', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const error = await inLanes(
      Array.from({ length: 40 }, (_, i) => i),
      3,
      async (i) => {
        started.push(i);
        if (i === 4) throw new Error('item 4 failed');
        // Items take long enough that the failure is seen before any item under way ends.
        await new Promise((r) => setTimeout(r, 25));
        finished.push(i);
      },
    ).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).to.equal('item 4 failed');
    // Items 0-2 ran first; as they ended, lanes took 3 and 4; item 4 failed at once while 3 was
    // under way: 3 finished, and the lane that ended item 2 took nothing more.
    expect(started).to.deep.equal([0, 1, 2, 3, 4]);
    expect(finished.sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3]);
  });

  it('given no items, then it resolves without calling the work', async () => {
    let calls = 0;
    await inLanes([], 16, async () => {
      calls++;
    });
    expect(calls).to.equal(0);
  });
});

describe('workers: yieldingLanes (background work yields to requests in flight)', () => {
  /** Work items that end when the test says so, and a record of which started. */
  const gate = () => {
    const started: number[] = [];
    const release = new Map<number, () => void>();
    const work = (i: number) => () =>
      new Promise<void>((resolve) => {
        started.push(i);
        release.set(i, resolve);
      });
    return { started, work, end: (i: number) => release.get(i)?.() };
  };
  const settle = () => new Promise((r) => setImmediate(r));

  it('given no request in flight, then items run in the idle lanes', async () => {
    const fg = new Foreground();
    const lanes = yieldingLanes(fg, { idle: 4, busy: 1, backlogBound: 100 });
    const g = gate();
    const all = Array.from({ length: 6 }, (_, i) => lanes(g.work(i)));
    await settle();
    expect(g.started).to.deep.equal([0, 1, 2, 3]);
    expect(lanes.pending()).to.equal(6);
    for (let i = 0; i < 6; i++) g.end(i);
    await settle();
    for (let i = 0; i < 6; i++) g.end(i);
    await Promise.all(all);
    expect(g.started).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(lanes.pending()).to.equal(0);
  });

  it('given a request in flight, then one lane; once it ended and the grace passed, the next finished item opens the idle lanes again', async () => {
    let now = 0;
    const fg = new Foreground(50, () => now);
    const lanes = yieldingLanes(fg, { idle: 4, busy: 1, backlogBound: 100 });
    const g = gate();
    fg.enter();
    const all = Array.from({ length: 6 }, (_, i) => lanes(g.work(i)));
    await settle();
    expect(g.started).to.deep.equal([0]);
    expect(lanes.lanes()).to.equal(1);
    g.end(0);
    await settle();
    expect(g.started).to.deep.equal([0, 1]);
    fg.leave();
    // Within the grace after the last request, the gap between two waves of requests: still one lane.
    now = 49;
    g.end(1);
    await settle();
    expect(g.started).to.deep.equal([0, 1, 2]);
    expect(lanes.lanes()).to.equal(1);
    now = 50;
    g.end(2);
    await settle();
    expect(lanes.lanes()).to.equal(4);
    expect(g.started).to.deep.equal([0, 1, 2, 3, 4, 5]);
    for (let i = 3; i < 6; i++) g.end(i);
    await Promise.all(all);
  });

  it('given a backlog at its bound, then the idle lanes even while requests are in flight', async () => {
    const fg = new Foreground();
    const lanes = yieldingLanes(fg, { idle: 3, busy: 1, backlogBound: 5 });
    const g = gate();
    fg.enter();
    const first = Array.from({ length: 4 }, (_, i) => lanes(g.work(i)));
    await settle();
    expect(g.started).to.deep.equal([0]);
    const more = lanes(g.work(4));
    await settle();
    expect(lanes.lanes()).to.equal(3);
    expect(g.started).to.deep.equal([0, 1, 2]);
    for (let i = 0; i < 5; i++) g.end(i);
    await settle();
    for (let i = 0; i < 5; i++) g.end(i);
    await Promise.all([...first, more]);
    fg.leave();
  });

  it('given no foreground (a process that serves no requests), then always the idle lanes', async () => {
    const lanes = yieldingLanes(undefined, { idle: 2, busy: 1, backlogBound: 100 });
    const g = gate();
    const all = Array.from({ length: 3 }, (_, i) => lanes(g.work(i)));
    await settle();
    expect(g.started).to.deep.equal([0, 1]);
    for (let i = 0; i < 3; i++) g.end(i);
    await settle();
    g.end(2);
    await Promise.all(all);
  });
});
