import { expect } from 'chai';
import { BoundedCache } from '../../events/kernel/cache.ts';
import { ManualClock } from '../../events/kernel/clock.ts';

describe('events/kernel/cache: the bounded cache', () => {
  it('never holds more than its max, dropping the least recently used entry first', () => {
    const cache = new BoundedCache<string, number>({ max: 3 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).to.equal(1); // a is now the most recently used
    cache.set('d', 4);
    expect(cache.size).to.equal(3);
    expect(cache.get('b')).to.equal(undefined);
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).to.deep.equal([1, 3, 4]);
    for (let i = 0; i < 100; i++) cache.set(`k${i}`, i);
    expect(cache.size).to.equal(3);
    expect([cache.get('k97'), cache.get('k98'), cache.get('k99')]).to.deep.equal([97, 98, 99]);
  });

  it('keeps the entries it already holds when full (it does not empty itself)', () => {
    const cache = new BoundedCache<number, number>({ max: 1000 });
    for (let i = 0; i < 1001; i++) cache.set(i, i);
    expect(cache.size).to.equal(1000);
    expect(cache.get(1)).to.equal(1);
    expect(cache.get(0)).to.equal(undefined);
  });

  it('remembers what `remember` made, null included, and makes it only once', () => {
    const cache = new BoundedCache<string, string | null>({ max: 10 });
    let made = 0;
    const make = () => {
      made++;
      return null;
    };
    expect(cache.remember('x', make)).to.equal(null);
    expect(cache.remember('x', make)).to.equal(null);
    expect(made).to.equal(1);
    expect(cache.has('x')).to.equal(true);
  });

  it('drops an entry once its ttlMs have passed on the given clock', () => {
    const clock = new ManualClock();
    const cache = new BoundedCache<string, string>({ max: 10, ttlMs: 60_000, now: () => clock.now().getTime() });
    cache.set('k', 'v');
    clock.advance(59_999);
    expect(cache.get('k')).to.equal('v');
    clock.advance(1);
    expect(cache.get('k')).to.equal(undefined);
    expect(cache.has('k')).to.equal(false);
  });

  it('refuses a bound that is not one', () => {
    expect(() => new BoundedCache({ max: 0 })).to.throw(RangeError);
    expect(() => new BoundedCache({ max: 1.5 })).to.throw(RangeError);
    expect(() => new BoundedCache({ max: 1, ttlMs: 1 })).to.throw(RangeError);
  });
});

describe('the service caches through BoundedCache', () => {
  it('has no hand-made cache that empties itself when full', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const offenders: string[] = [];
    for (const dir of ['events', 'commands', 'projections', 'queries', 'api', 'workers', 'cli']) {
      for (const file of await readdir(dir, { recursive: true })) {
        if (!file.endsWith('.ts')) continue;
        const text = await readFile(`${dir}/${file}`, 'utf8');
        if (/\.size\s*>=?\s*[\w.#]+\)\s*[\w.#]+\.(clear\(\)|delete\()/.test(text)) offenders.push(`${dir}/${file}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
