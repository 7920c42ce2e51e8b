// The replay fast paths of the in-memory store, each checked against the general code it stands in
// for: string index keys against compareValues, the simple-update applier against the general
// applier, and index maintenance on the fast update path against an unindexed store.
import { expect } from 'chai';
import { KeyTree, MemoryReadStore } from '../../../projections/store/memory.ts';
import { DuplicateKeyError, type CollectionSpec, type Doc, type Filter, type FindOptions, type Update } from '../../../projections/store/port.ts';
import {
  EMPTY_ARRAY_KEY,
  KEY_LAST,
  MAX_KEY,
  MIN_KEY,
  NOT_SIMPLE,
  STRING_END,
  UpdateError,
  applySimpleUpdate,
  applyUpdate,
  applyUpdateGeneral,
  cloneValue,
  compareValues,
  keyComponent,
  simpleInsert,
} from '../../../projections/store/updates.ts';
import { simpleFilter } from '../../../projections/store/memory/query.ts';
import { Query } from 'mingo';
import { rng } from '../../helpers/random.ts';

type Obj = Record<string, unknown>;

/** Objects as [key, value] lists, recursively: deep equality that also sees field order. */
function ordered(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(ordered);
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) return Object.keys(v).map((k) => [k, ordered((v as Obj)[k])]);
  return v;
}

describe('index keys: BSON order as string order', () => {
  const random = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const numbers = [0, -0, 1, -1, 1.5, -1.5, 2 ** 53, -(2 ** 53), 1e300, -1e300, 5e-324, -5e-324, Infinity, -Infinity, NaN, 0.1, 3, 255, 256];
  const strings = [
    '',
    'a',
    'ab',
    'b',
    'B',
    '\u0000',
    '\u0001',
    '\u0002',
    'a\u0000',
    'a\u0001b',
    '\u00ef',
    '\u00f0',
    '\u00ff',
    'é',
    '\u0100',
    '\ud83d\ude00',
    '\uffff',
    'a\uffff',
    'ab\u0000c',
    'lead-gen',
    'pst_00001',
  ];

  function value(depth = 0): unknown {
    switch (Math.floor(random() * (depth > 1 ? 9 : 12))) {
      case 0:
      case 1:
        return pick(numbers);
      case 2:
      case 3:
        return pick(strings);
      case 4:
        return pick([true, false]);
      case 5:
        return pick([null, undefined]);
      case 6:
        return new Date(pick([0, 1, -1, 1e12, NaN]));
      case 7:
        return pick([MIN_KEY, MAX_KEY, STRING_END, EMPTY_ARRAY_KEY]);
      case 8:
        return pick([/a/g, /a/, /b/i]);
      case 9:
        return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      case 10: {
        const o: Obj = {};
        for (let i = Math.floor(random() * 3); i > 0; i--) o[pick(['a', 'b', '', 'a\u0000', 'é'])] = value(depth + 1);
        return o;
      }
      default:
        return new Uint8Array(Array.from({ length: Math.floor(random() * 3) }, () => Math.floor(random() * 256)));
    }
  }

  const encode = (values: unknown[], dirs: number[]) => values.map((v, i) => keyComponent(v, dirs[i])).join('');

  it('orders compound keys of random values, in either direction, exactly as compareValues does', () => {
    for (let trial = 0; trial < 30_000; trial++) {
      const width = 1 + Math.floor(random() * 3);
      const dirs = Array.from({ length: width }, () => pick([1, -1]));
      // Mostly equal leading components, so that later components decide.
      const a = Array.from({ length: width }, () => value());
      const b = a.map((v) => (random() < 0.5 ? v : value()));
      let expected = 0;
      for (let i = 0; i < width && expected === 0; i++) expected = Math.sign(compareValues(a[i], b[i])) * dirs[i];
      const ka = encode(a, dirs);
      const kb = encode(b, dirs);
      const got = ka < kb ? -1 : ka > kb ? 1 : 0;
      expect(got, JSON.stringify({ a: String(a), b: String(b), dirs })).to.equal(expected);
    }
  });

  it('gives equal values equal keys, in one-byte chars', () => {
    expect(keyComponent(0, 1)).to.equal(keyComponent(-0, 1));
    expect(keyComponent(NaN, -1)).to.equal(keyComponent(Number('x'), -1));
    expect(keyComponent(null, 1)).to.equal(keyComponent(undefined, 1));
    expect(keyComponent({ a: [1, undefined] }, -1)).to.equal(keyComponent({ a: [1, null] }, -1));
    expect(keyComponent(new Date(5), 1)).to.equal(keyComponent(new Date(5), 1));
    for (let i = 0; i < 5000; i++) {
      const key = keyComponent(value(), pick([1, -1]));
      for (let j = 0; j < key.length; j++) expect(key.charCodeAt(j)).to.be.below(0x100);
    }
  });

  it('is prefix-free, and a prefix plus KEY_LAST sorts after every key extending the prefix', () => {
    for (let i = 0; i < 20_000; i++) {
      const dir = pick([1, -1]);
      const x = keyComponent(value(), dir);
      const y = keyComponent(value(), dir);
      if (x !== y) expect(y.startsWith(x), JSON.stringify([x, y])).to.equal(false);
      const rest = keyComponent(value(), pick([1, -1]));
      expect(x + rest > x).to.equal(true);
      expect(x + rest < x + KEY_LAST).to.equal(true);
    }
  });
});

describe('filters: the simple-filter fast path', () => {
  const random = rng(5);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const fields = ['a', 'b', 'tags', 'n', 'toString', '_id'];
  const scalars = [0, -0, 1, 2.5, NaN, '', 'v', 'w', '1', true, false, null];

  function value(): unknown {
    const r = random();
    if (r < 0.45) return pick(scalars);
    if (r < 0.55) return undefined;
    if (r < 0.8) return Array.from({ length: Math.floor(random() * 4) }, () => (random() < 0.1 ? [pick(scalars)] : pick(scalars)));
    if (r < 0.9) return { k: pick(scalars) };
    return new Date(Math.floor(random() * 1e12));
  }

  function doc(): Obj {
    const d: Obj = {};
    for (const f of fields) {
      const v = value();
      if (v !== undefined) d[f] = v;
    }
    return d;
  }

  /** Mostly filters the fast path takes; now and then one it must decline (operators, dots, null, NaN, empty $all). */
  function filter(): Filter {
    const f: Obj = {};
    for (let i = 1 + Math.floor(random() * 3); i > 0; i--) {
      const r = random();
      const field = random() < 0.05 ? 'a.k' : pick(fields);
      if (r < 0.55) f[field] = pick(scalars);
      else if (r < 0.85) f[field] = { $all: Array.from({ length: Math.floor(random() * 3) }, () => pick(scalars)) };
      else if (r < 0.9) f[field] = { $in: [pick(scalars)] };
      else if (r < 0.95) f[field] = [pick(scalars)];
      else f[field] = { k: pick(scalars) };
    }
    return f as Filter;
  }

  it('matches what mingo matches, on 20,000 random documents and filters, and declines what it cannot test', () => {
    let taken = 0;
    for (let i = 0; i < 20_000; i++) {
      const f = filter();
      const fast = simpleFilter(f);
      if (fast === null) continue;
      taken++;
      const d = doc();
      expect(fast.test(d as Doc), `${JSON.stringify(f)} on ${JSON.stringify(d)}`).to.equal(new Query(f, {}).test(d));
    }
    expect(taken).to.be.greaterThan(5_000);
    for (const declined of [
      { a: null },
      { a: NaN },
      { a: { $all: [] } },
      { 'a.k': 1 },
      { $or: [{ a: 1 }] },
      { a: { $in: [1] } },
      { a: [1] },
      { a: { $all: [1], $ne: 2 } },
    ])
      expect(simpleFilter(declined as Filter), JSON.stringify(declined)).to.equal(null);
  });
});

describe('updates: the simple-update fast path', () => {
  const random = rng(11);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const fields = ['a', 'b', 'n', 'm', 'o', 'l', 'toString', 'x'];
  const scalars = [0, 1, -1, 2.5, NaN, '', 'v', 'w', null, true, false];

  function value(): unknown {
    const r = random();
    if (r < 0.6) return pick(scalars);
    if (r < 0.7) return undefined;
    if (r < 0.8) return [pick(scalars), pick(scalars)];
    if (r < 0.9) return { k: pick(scalars), d: [pick(scalars)] };
    return new Date(Math.floor(random() * 1e12));
  }

  function doc(): Obj {
    const d: Obj = { _id: 'id' };
    for (const f of fields) if (random() < 0.5) d[f] = random() < 0.6 ? pick([0, 1, 7, -3]) : cloneValue(value() ?? null);
    return d;
  }

  function spec(numbers: boolean): Obj {
    const s: Obj = {};
    for (let i = 1 + Math.floor(random() * 4); i > 0; i--) s[pick(fields)] = numbers ? (random() < 0.9 ? pick([0, 1, -2, 0.5]) : pick(['1', null])) : value();
    return s;
  }

  /** Mostly simple updates; now and then one the fast path must decline. */
  function update(): Update {
    const u: Update = {};
    for (const op of ['$setOnInsert', '$set', '$inc', '$unset']) {
      if (random() < 0.45)
        u[op] = op === '$inc' ? spec(true) : op === '$unset' ? Object.fromEntries(Object.keys(spec(false)).map((k) => [k, ''])) : spec(false);
    }
    const r = random();
    if (r < 0.04) u.$push = { l: 1 };
    else if (r < 0.08) u.$set = { ...(u.$set as Obj), 'o.k': 1 };
    else if (r < 0.1) u.$set = { ...(u.$set as Obj), _id: 'id' };
    else if (r < 0.12) return { a: 1 };
    // Reorder the operators now and then: field order follows operator order.
    if (random() < 0.3) return Object.fromEntries(Object.entries(u).reverse());
    return u;
  }

  function attempt<T>(f: () => T): T | Error {
    try {
      return f();
    } catch (err) {
      return err as Error;
    }
  }

  it('gives the same document (field order included), result and errors as the general path', () => {
    let fast = 0;
    let declined = 0;
    for (let trial = 0; trial < 20_000; trial++) {
      const original = doc();
      const u = update();
      const isInsert = random() < 0.3;
      const a = cloneValue(original);
      const b = cloneValue(original);
      const r = attempt(() => applySimpleUpdate(a, u, isInsert));
      const label = JSON.stringify({ original: ordered(original), u, isInsert });
      if (r === NOT_SIMPLE) {
        declined++;
        expect(ordered(a), label).to.deep.equal(ordered(original));
        continue;
      }
      fast++;
      expect(r, label).to.not.be.instanceOf(Error);
      expect(applyUpdateGeneral(b, u, { isInsert }), label).to.equal(r);
      expect(ordered(a), label).to.deep.equal(ordered(b));
      // And applyUpdate (fast path first) agrees with both, errors included.
      const c = cloneValue(original);
      expect(applyUpdate(c, u, { isInsert }), label).to.equal(r);
    }
    expect(fast).to.be.above(6000);
    expect(declined).to.be.above(2000);
  });

  it('declines every update it cannot apply without error, leaving the document as it was', () => {
    const d = { _id: 'a', s: 'text', n: 1 };
    for (const u of [
      { $inc: { s: 1 } },
      { $inc: { n: '1' } },
      { $set: { n: 2 }, $inc: { n: 1 } },
      { $set: { 'o.k': 1 } },
      { $set: { _id: 'b' } },
      { $push: { l: 1 } },
      { n: 1 },
      {},
    ]) {
      expect(applySimpleUpdate(d, u, false), JSON.stringify(u)).to.equal(NOT_SIMPLE);
      expect(d).to.deep.equal({ _id: 'a', s: 'text', n: 1 });
    }
    expect(() => applyUpdate(d, { $inc: { s: 1 } }, { isInsert: false })).to.throw(UpdateError);
    expect(() => applyUpdate(d, { $set: { n: 2 }, $inc: { n: 1 } }, { isInsert: false })).to.throw(UpdateError, /conflict/);
  });

  it('inserts the same document as the general path, with copies of the values', () => {
    let built = 0;
    for (let trial = 0; trial < 10_000; trial++) {
      const u = update();
      const fast = attempt(() => simpleInsert('id', u));
      if (fast === NOT_SIMPLE) continue;
      built++;
      const general: Obj = { _id: 'id' };
      applyUpdateGeneral(general, u, { isInsert: true });
      expect(ordered(fast), JSON.stringify(u)).to.deep.equal(ordered(general));
    }
    expect(built).to.be.above(3000);
    const tags = ['x'];
    const inserted = simpleInsert('p', { $set: { tags, o: { k: [1] }, gone: undefined }, $inc: { n: 1 } }) as Obj;
    tags.push('y');
    expect(inserted).to.deep.equal({ _id: 'p', tags: ['x'], o: { k: [1] }, gone: null, n: 1 });
  });
});

describe('memory store: index maintenance on the fast update path', () => {
  it('keeps every index equal to an unindexed store under random updates, refused ones changing nothing', async () => {
    const random = rng(5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const indexed = new MemoryReadStore();
    const plain = new MemoryReadStore();
    await indexed.ensureCollection({
      name: 'x',
      indexes: [
        { name: 'a_b', keys: { a: 1, b: -1 } },
        { name: 'u', keys: { u: 1 }, unique: true },
        { name: 'tags_n', keys: { tags: 1, n: -1 } },
        { name: 'o_k', keys: { 'o.k': 1 } },
      ],
    });
    const I = indexed.collection('x');
    const P = plain.collection('x');
    const values = [0, 1, 2, 'x', 'y', null, true];
    const ids = Array.from({ length: 300 }, (_, i) => `d${i}`);
    let position = 1;
    for (const id of ids) {
      const u = {
        $set: {
          a: pick(values),
          b: Math.floor(random() * 10),
          u: id,
          tags: random() < 0.5 ? [pick(['r', 'g']), pick(['b', 'r'])] : pick(['r', 'g']),
          n: Math.floor(random() * 5),
          o: { k: pick(values) },
        },
      };
      await I.applyAt(id, position, u);
      await P.applyAt(id, position++, u);
    }
    const updates: Array<() => Update> = [
      () => ({ $set: { a: pick(values) } }),
      () => ({ $set: { a: pick(values), b: Math.floor(random() * 10) }, $inc: { c: 1 } }),
      () => ({ $set: { b: pick([3, 3, 4]) } }), // often unchanged: no index work
      () => ({ $set: { u: pick(['d1', 'd2', `fresh${position}`]) } }), // duplicates are refused
      () => ({ $set: { tags: pick([['r', 'z'], 'g', [], ['b']]) } }),
      () => ({ $set: { n: pick([1, [1, 2]]) }, $inc: { c: 1 } }), // an array beside array tags is refused
      () => ({ $unset: { a: '', u: '' } }),
      () => ({ $inc: { b: 1 }, $set: { other: 'v' } }),
      () => ({ $set: { o: { k: pick(values) } } }),
      () => ({ $push: { tags: 'w' } }), // the general path
      () => ({ $setOnInsert: { a: 'never' }, $set: { n: 3 } }),
    ];
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const id = pick(ids);
      const u = pick(updates)();
      const before = await I.findOne({ _id: id });
      const viaApplyAt = random() < 0.7;
      let error: unknown;
      try {
        if (viaApplyAt) await I.applyAt(id, position, u);
        else await I.updateOne({ _id: id }, u);
      } catch (err) {
        error = err;
      }
      if (error instanceof UpdateError) {
        // Refused by the update itself: the unindexed store refuses it too.
        let plainError: unknown;
        try {
          await P.updateOne({ _id: id }, u);
        } catch (err) {
          plainError = err;
        }
        expect(plainError).to.be.instanceOf(UpdateError);
        expect(await I.findOne({ _id: id })).to.deep.equal(before);
        continue;
      }
      if (error !== undefined) {
        // Refused by an index: a duplicate, or parallel arrays.
        refused++;
        expect(error instanceof DuplicateKeyError || /parallel arrays/.test(String(error)), String(error)).to.equal(true);
        expect(await I.findOne({ _id: id })).to.deep.equal(before);
        continue;
      }
      if (viaApplyAt) await P.applyAt(id, position++, u);
      else await P.updateOne({ _id: id }, u);
    }
    expect(refused).to.be.above(50);
    expect(await I.find({}, { sort: { _id: 1 } })).to.deep.equal(await P.find({}, { sort: { _id: 1 } }));
    const queries: Array<[Filter, FindOptions]> = [];
    for (const v of values) {
      queries.push([{ a: v }, { sort: { b: -1, _id: 1 } }], [{ a: v, b: { $gte: 3 } }, { sort: { b: -1, _id: 1 } }], [{ 'o.k': v }, { sort: { _id: 1 } }]);
    }
    for (const t of ['r', 'g', 'b', 'z', 'w']) queries.push([{ tags: t }, { sort: { n: -1, _id: 1 } }], [{ tags: t, n: { $lt: 3 } }, {}]);
    for (const u of ['d1', 'd2', 'd77', null]) queries.push([{ u }, {}]);
    queries.push([{ tags: { $in: ['r', 'b'] } }, { sort: { n: -1, _id: 1 }, limit: 30 }]);
    let served = 0;
    for (const [filter, options] of queries) {
      const label = JSON.stringify({ filter, options });
      const got = await I.find(filter, options);
      const want = await P.find(filter, options);
      if (options.sort === undefined) expect(got.map((d) => d._id).sort(), label).to.deep.equal(want.map((d) => d._id).sort());
      else expect(got, label).to.deep.equal(want);
      expect(await I.count(filter), label).to.equal(await P.count(filter));
      if ((await I.explain(filter, options)).index !== null) served++;
    }
    expect(served).to.equal(queries.length);
  });

  it('serves findOne by _id directly, with projection, and honours skip', async () => {
    const store = new MemoryReadStore();
    const c = store.collection('x');
    await c.insertOne({ _id: 'a', n: 1, o: { k: 2 } });
    const found = (await c.findOne({ _id: 'a' })) as Doc;
    (found.o as Obj).k = 3;
    expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', n: 1, o: { k: 2 } });
    expect(await c.findOne({ _id: 'a' }, { projection: { n: 1 } })).to.deep.equal({ _id: 'a', n: 1 });
    expect(await c.findOne({ _id: 'a' }, { skip: 1 })).to.equal(null);
    expect(await c.findOne({ _id: 'b' })).to.equal(null);
  });
});

describe('memory store: the index B+ tree', () => {
  /** The same operations on a sorted array: the model the tree must agree with. */
  class Model {
    readonly keys: string[] = [];
    readonly vals = new Map<string, string>();
    set(k: string, v: string) {
      if (!this.vals.has(k)) {
        this.keys.push(k);
        this.keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      }
      this.vals.set(k, v);
    }
    delete(k: string): boolean {
      if (!this.vals.delete(k)) return false;
      this.keys.splice(this.keys.indexOf(k), 1);
      return true;
    }
  }

  const take = <T>(it: Iterator<T>, n: number): T[] => {
    const out: T[] = [];
    for (let r = it.next(); !r.done && out.length < n; r = it.next()) out.push(r.value);
    return out;
  };

  for (const [pattern, seed] of [
    ['ascending', 1],
    ['descending', 2],
    ['random', 3],
    ['runs per prefix', 4],
  ] as const) {
    it(`agrees with a sorted array under ${pattern} inserts, overwrites and deletes`, () => {
      const random = rng(seed);
      const tree = new KeyTree();
      const model = new Model();
      const keyAt = (i: number): string => {
        switch (pattern) {
          case 'ascending':
            return `k${String(i).padStart(6, '0')}`;
          case 'descending':
            return `k${String(1e6 - i).padStart(7, '0')}`;
          case 'random':
            return `k${Math.floor(random() * 5000)}`;
          case 'runs per prefix':
            return `${'abcdefghij'[Math.floor(random() * 10)]}${String(1e6 - i).padStart(7, '0')}`;
        }
      };
      const probe = () =>
        (random() < 0.5 && model.keys.length > 0 ? model.keys[Math.floor(random() * model.keys.length)] : keyAt(Math.floor(random() * 4000))) +
        (random() < 0.2 ? '\u0000' : '');
      for (let step = 0; step < 6000; step++) {
        const r = random();
        if (r < 0.7) {
          const k = keyAt(step);
          tree.set(k, `v${step}`);
          model.set(k, `v${step}`);
        } else if (r < 0.95 || step > 5000) {
          // Deletes come in bursts near the end, emptying whole leaves.
          const k = probe();
          expect(tree.delete(k)).to.equal(model.delete(k));
        }
        if (step % 500 === 0 || step > 5900) {
          expect(tree.size).to.equal(model.keys.length);
          const from = probe();
          const lo = model.keys.findIndex((k) => k >= from);
          const asc = lo < 0 ? [] : model.keys.slice(lo, lo + 40);
          expect(take(tree.entries(from), 40).map(([k, v]) => [k, v])).to.deep.equal(asc.map((k) => [k, model.vals.get(k)]));
          let hi = -1;
          for (let j = 0; j < model.keys.length; j++) if (model.keys[j] <= from) hi = j;
          const desc = model.keys.slice(Math.max(0, hi - 39), hi + 1).reverse();
          expect(take(tree.entriesReversed(from), 40).map(([k]) => k)).to.deep.equal(desc);
          const to = probe();
          expect(tree.countRange(from, to)).to.equal(model.keys.filter((k) => k >= from && k <= to).length);
          // scan: the values of [from, to] both ways, whole or stopped after 25.
          const inRange = model.keys.filter((k) => k >= from && k <= to).map((k) => model.vals.get(k));
          for (const reverse of [false, true]) {
            const want = reverse ? [...inRange].reverse() : inRange;
            const seen: Array<string | undefined> = [];
            expect(tree.scan(from, to, reverse, (v) => (seen.push(v), true))).to.equal(true);
            expect(seen).to.deep.equal(want);
            const first: Array<string | undefined> = [];
            expect(tree.scan(from, to, reverse, (v) => (first.push(v), first.length < 25))).to.equal(want.length < 25);
            expect(first).to.deep.equal(want.slice(0, 25));
          }
          expect(tree.pairFrom(from, false)?.[0]).to.equal(model.keys.find((k) => k >= from));
          expect(tree.pairFrom(from, true)?.[0]).to.equal(model.keys.find((k) => k > from));
          // cursor: steps and seeks over [from, to] both ways, as the sorted array's positions move.
          for (const reverse of [false, true]) {
            const want = model.keys.filter((k) => k >= from && k <= to);
            if (reverse) want.reverse();
            const cursor = tree.cursor(from, to, reverse);
            let at = 0;
            for (let move = 0; move < 60; move++) {
              expect(cursor.key).to.equal(want[at]);
              if (cursor.key !== undefined) expect(cursor.value()).to.equal(model.vals.get(cursor.key));
              if (random() < 0.6) {
                cursor.next();
                if (at < want.length) at++;
              } else {
                const target = probe();
                cursor.seek(target);
                if (at < want.length) {
                  const past = (k: string) => (reverse ? k <= target : k >= target);
                  const found = want.findIndex((k, j) => j >= at && past(k));
                  at = found < 0 ? want.length : found;
                }
              }
            }
          }
        }
      }
      // Everything out in random order (checking as leaves and branches empty), then in again.
      const rest = [...model.keys];
      for (let j = rest.length - 1; j > 0; j--) {
        const r = Math.floor(random() * (j + 1));
        [rest[j], rest[r]] = [rest[r], rest[j]];
      }
      for (const [j, k] of rest.entries()) {
        expect(tree.delete(k)).to.equal(model.delete(k));
        if (j % 97 === 0) {
          const from = probe();
          const lo = model.keys.findIndex((x) => x >= from);
          expect(take(tree.entries(from), 30).map(([x]) => x)).to.deep.equal(lo < 0 ? [] : model.keys.slice(lo, lo + 30));
          expect(tree.countRange('', '\u00ff')).to.equal(model.keys.length);
          tree.set(from, 'again');
          model.set(from, 'again');
          expect(tree.delete(from)).to.equal(model.delete(from));
        }
      }
      expect(tree.size).to.equal(0);
      expect(take(tree.entries(''), 5)).to.deep.equal([]);
      tree.set('b', '1');
      tree.set('a', '2');
      expect(take(tree.entries(''), 5)).to.deep.equal([
        ['a', '2'],
        ['b', '1'],
      ]);
      expect(take(tree.entriesReversed('\u00ff'), 5)).to.deep.equal([
        ['b', '1'],
        ['a', '2'],
      ]);
    });
  }
});

describe('memory store: an index tree that derives its values from its keys', () => {
  const derive = (key: string) => `id:${key.slice(-4)}`;
  const take = <T>(it: Iterator<T>, n: number): T[] => {
    const out: T[] = [];
    for (let r = it.next(); !r.done && out.length < n; r = it.next()) out.push(r.value);
    return out;
  };

  it('stores no value while each is the derived one, answers like a tree that stores them, and stores them all from the first that differs', () => {
    const random = rng(21);
    for (const switchAt of [Number.POSITIVE_INFINITY, 0, 1500, 2999]) {
      const derived = new KeyTree(derive);
      const plain = new KeyTree();
      const keyAt = () => `${'abc'[Math.floor(random() * 3)]}${String(Math.floor(random() * 9000)).padStart(4, '0')}`;
      for (let step = 0; step < 3000; step++) {
        const k = keyAt();
        if (random() < 0.8) {
          const v = step === switchAt ? 'differs' : derive(k);
          derived.set(k, v);
          plain.set(k, v);
        } else {
          expect(derived.delete(k)).to.equal(plain.delete(k));
        }
        if (step % 250 === 0 || step === switchAt) {
          const from = keyAt();
          const to = keyAt();
          expect(derived.size).to.equal(plain.size);
          expect(take(derived.entries(from), 50)).to.deep.equal(take(plain.entries(from), 50));
          expect(take(derived.entriesReversed(from), 50)).to.deep.equal(take(plain.entriesReversed(from), 50));
          expect(derived.countRange(from, to)).to.equal(plain.countRange(from, to));
          for (const reverse of [false, true]) {
            const values = (t: KeyTree) => {
              const out: string[] = [];
              t.scan(from, to, reverse, (v) => (out.push(v), true));
              return out;
            };
            expect(values(derived)).to.deep.equal(values(plain));
          }
          expect(derived.pairFrom(from, false)).to.deep.equal(plain.pairFrom(from, false));
        }
      }
      expect([...derived.entries('')]).to.deep.equal([...plain.entries('')]);
      const { keys, vals } = derived.sorted();
      // Values are handed out (for a snapshot) only once the tree had to store them.
      expect(vals === null, `switch at ${switchAt}`).to.equal(switchAt >= 3000);
      expect(keys).to.deep.equal(plain.sorted().keys);
    }
  });

  it('loads from sorted keys alone, then behaves like a tree loaded with the values', () => {
    const keys = Array.from({ length: 700 }, (_, i) => `k${String(i * 2).padStart(5, '0')}`);
    const loaded = KeyTree.fromSorted(keys, null, derive);
    const explicit = KeyTree.fromSorted(keys, keys.map(derive));
    expect([...loaded.entriesReversed('\u00ff')]).to.deep.equal([...explicit.entriesReversed('\u00ff')]);
    for (const [k, v] of [
      ['k00003', derive('k00003')],
      ['k00005', 'other'],
      ['k00007', derive('k00007')],
    ]) {
      loaded.set(k, v);
      explicit.set(k, v);
    }
    expect(loaded.delete('k00004')).to.equal(true);
    expect(explicit.delete('k00004')).to.equal(true);
    expect([...loaded.entries('')]).to.deep.equal([...explicit.entries('')]);
    expect(() => KeyTree.fromSorted(keys, null)).to.throw(/derive/);
  });
});

describe('memory store: bulk loading (deferred indexes)', () => {
  type Entries = Array<[string, string]>;
  /** Every entry of every index of a collection, in tree order (white-box: the trees themselves). */
  function indexEntries(store: MemoryReadStore, name: string): Record<string, Entries> {
    const out: Record<string, Entries> = {};
    for (const ix of store._data(name, false)?.indexes ?? []) out[ix.name] = [...ix.tree.entries('')];
    return out;
  }

  it('loads a tree from sorted keys that then behaves like one built key by key', () => {
    const random = rng(11);
    for (const n of [0, 1, 31, 32, 33, 64, 65, 1000, 5000]) {
      const keys = Array.from({ length: n }, (_, i) => `k${String(i * 2).padStart(6, '0')}`);
      const loaded = KeyTree.fromSorted(
        keys,
        keys.map((k) => `v${k}`),
      );
      const grown = new KeyTree();
      for (const k of keys) grown.set(k, `v${k}`);
      const probe = () => `k${String(Math.floor(random() * (n * 2 + 4))).padStart(6, '0')}${random() < 0.3 ? '\u0000' : ''}`;
      for (let step = 0; step < 400; step++) {
        const k = probe();
        if (random() < 0.6) {
          loaded.set(k, `w${step}`);
          grown.set(k, `w${step}`);
        } else {
          expect(loaded.delete(k)).to.equal(grown.delete(k));
        }
        if (step % 40 === 0) {
          const from = probe();
          const to = probe();
          expect(loaded.size).to.equal(grown.size);
          expect([...loaded.entries(from)]).to.deep.equal([...grown.entries(from)]);
          expect([...loaded.entriesReversed(from)]).to.deep.equal([...grown.entriesReversed(from)]);
          expect(loaded.countRange(from, to)).to.equal(grown.countRange(from, to));
          expect(loaded.pairFrom(from, true)).to.deep.equal(grown.pairFrom(from, true));
        }
      }
    }
  });

  it('builds the same entries whatever the _ids hold (chars the key encoding escapes, its string tag)', async () => {
    for (const ids of [
      ['p1', 'p2', 'é3', ''],
      ['p1', 'a\u0016b'],
      ['p1', '東京'],
      ['p1', 'x\u0001y'],
      ['\u00ff', 'p2'],
    ]) {
      const spec: CollectionSpec = {
        name: 'w',
        indexes: [
          { name: 'g_n', keys: { g: 1, n: -1 } },
          { name: 'tags', keys: { tags: 1 } },
        ],
      };
      const live = new MemoryReadStore();
      const bulk = new MemoryReadStore();
      await live.ensureCollection(spec);
      await bulk.ensureCollection(spec);
      bulk.deferIndexes(['w']);
      for (const [i, id] of ids.entries()) {
        for (const store of [live, bulk]) await store.collection('w').applyAt(id, i + 1, { $set: { g: i % 2, n: i, tags: ['t', `t${i}`] } });
      }
      bulk.buildIndexes(['w']);
      expect(indexEntries(bulk, 'w'), JSON.stringify(ids)).to.deep.equal(indexEntries(live, 'w'));
      expect(indexEntries(bulk, 'w').g_n).to.have.length(ids.length);
    }
  });

  it('ends with the same documents and index entries as a collection maintained write by write, building on the first query', async () => {
    const random = rng(12);
    const spec: CollectionSpec = {
      name: 'x',
      indexes: [
        { name: 'a_seq', keys: { a: 1, seq: -1 } },
        { name: 'u', keys: { u: 1 }, unique: true },
        { name: 'tags', keys: { tags: 1, seq: -1 } },
      ],
    };
    const live = new MemoryReadStore();
    const bulk = new MemoryReadStore();
    await live.ensureCollection(spec);
    await bulk.ensureCollection(spec);
    bulk.deferIndexes(['x']);
    const L = live.collection('x');
    const B = bulk.collection('x');
    let refusedBoth = 0;
    for (let i = 1; i <= 3000; i++) {
      const id = `d${Math.floor(random() * 400)}`;
      const r = random();
      const seed = Math.floor(random() * 2 ** 31);
      // The same write on both stores: its random values come from a generator seeded per write.
      const replay = async (c: typeof L) => {
        const local = rng(seed);
        const localPick = <T>(xs: readonly T[]): T => xs[Math.floor(local() * xs.length)];
        try {
          if (r < 0.6)
            await c.applyAt(id, i, {
              $set: { a: localPick(['p', 'q', 'r', null]), seq: i, u: `u${Math.floor(local() * 2000)}`, tags: localPick([['t1', 't2'], 't3', []]) },
            });
          else if (r < 0.8) await c.applyAt(id, i, { $set: { a: localPick(['p', 'q']) }, $inc: { n: 1 } });
          else if (r < 0.9) await c.deleteOne({ _id: id });
          else await c.updateMany({ _id: { $in: [id, `d${(Number(id.slice(1)) + 1) % 400}`] } }, { $set: { tags: ['t2'] } });
          return 'ok';
        } catch (err) {
          expect(err).to.be.instanceOf(DuplicateKeyError);
          return 'refused';
        }
      };
      const a = await replay(L);
      const b = await replay(B);
      expect(b, `write ${i}`).to.equal(a);
      if (a === 'refused') refusedBoth++;
      if (i % 700 === 0) {
        // A query needs the indexes: the bulk-loading collection builds them, then defers again.
        const q = { a: 'p' };
        expect(await B.find(q, { sort: { seq: -1 }, limit: 5 })).to.deep.equal(await L.find(q, { sort: { seq: -1 }, limit: 5 }));
        expect(indexEntries(bulk, 'x')).to.deep.equal(indexEntries(live, 'x'));
        bulk.deferIndexes(['x']);
        expect(indexEntries(bulk, 'x').a_seq).to.deep.equal([]);
      }
    }
    expect(refusedBoth).to.be.above(0);
    bulk.buildIndexes(['x']);
    expect(await B.find({}, { sort: { _id: 1 } })).to.deep.equal(await L.find({}, { sort: { _id: 1 } }));
    expect(indexEntries(bulk, 'x')).to.deep.equal(indexEntries(live, 'x'));
    expect(await B.explain({ tags: 't2' }, { sort: { seq: -1 }, limit: 3 })).to.deep.equal(await L.explain({ tags: 't2' }, { sort: { seq: -1 }, limit: 3 }));
  });
});
