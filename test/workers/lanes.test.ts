// inLanes: the bounded concurrency of the start-up sweeps (grants due, notifications expired).
import { expect } from 'chai';
import { inLanes } from '../../workers/lanes.ts';

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
