import { expect } from 'chai';
import { MemoryReadStore } from '../../../projections/store/memory.ts';
import type { Doc, Filter, FindOptions, IndexSpec } from '../../../projections/store/port.ts';
import { UpdateError, applyUpdate, compareValues } from '../../../projections/store/updates.ts';
import { readStoreContract } from './contract.ts';
import { rng } from '../../helpers/random.ts';

readStoreContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});

const POST_INDEXES: IndexSpec[] = [
  { name: 'room_published', keys: { room_slug: 1, published_at: -1 } },
  { name: 'tags_published', keys: { tags: 1, published_at: -1 } },
  { name: 'agent_seq', keys: { agent_id: 1, seq: 1 } },
];

function post(i: number): Doc {
  return {
    _id: `p${String(i).padStart(6, '0')}`,
    room_slug: `room-${i % 50}`,
    agent_id: `a${i % 1000}`,
    hidden: i % 7 === 0,
    seq: i,
    published_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    tags: [`t${i % 13}`, `t${(i * 7) % 17}`],
    body: `post ${i}`,
  };
}

describe('memory read store: index-served queries on 100,000 documents', function () {
  this.timeout(600_000);
  const N = 100_000;
  const store = new MemoryReadStore();
  const c = store.collection<string>('posts');
  const all: Doc[] = [];

  before(async () => {
    await store.ensureCollection({ name: 'posts', indexes: POST_INDEXES });
    for (let i = 0; i < N; i++) {
      const d = post(i);
      all.push(d);
      await c.insertOne(d);
    }
  });

  const byPublishedDesc = (a: Doc, b: Doc) => compareValues(b.published_at, a.published_at);

  it('serves equality + descending sort from the compound index, examining about one page', async () => {
    const filter = { room_slug: 'room-7', hidden: false };
    const opts: FindOptions = { sort: { published_at: -1 }, limit: 20 };
    const plan = await c.explain(filter, opts);
    expect(plan.index).to.equal('room_published');
    expect(plan.examined).to.be.at.most(25);
    const expected = all
      .filter((d) => d.room_slug === 'room-7' && !d.hidden)
      .sort(byPublishedDesc)
      .slice(0, 20);
    expect((await c.find(filter, opts)).map((d) => d._id)).to.deep.equal(expected.map((d) => d._id));
  });

  it('walks the index backwards for the opposite direction', async () => {
    const opts: FindOptions = { sort: { published_at: 1 }, limit: 10 };
    const plan = await c.explain({ room_slug: 'room-3' }, opts);
    expect(plan).to.deep.equal({ index: 'room_published', examined: 10 });
    const expected = all.filter((d) => d.room_slug === 'room-3').slice(0, 10);
    expect((await c.find({ room_slug: 'room-3' }, opts)).map((d) => d._id)).to.deep.equal(expected.map((d) => d._id));
  });

  it('serves a multikey (array field) equality with sort, each document once', async () => {
    const opts: FindOptions = { sort: { published_at: -1 }, limit: 20 };
    const plan = await c.explain({ tags: 't5' }, opts);
    expect(plan).to.deep.equal({ index: 'tags_published', examined: 20 });
    const expected = all
      .filter((d) => (d.tags as string[]).includes('t5'))
      .sort(byPublishedDesc)
      .slice(0, 20);
    expect((await c.find({ tags: 't5' }, opts)).map((d) => d._id)).to.deep.equal(expected.map((d) => d._id));
    const both = await c.find({ tags: { $in: ['t1', 't7'] } }, { sort: { published_at: -1 }, limit: 50 });
    expect(new Set(both.map((d) => d._id)).size).to.equal(50);
  });

  it('merges the ranges of an $in on the leading field to keep the sort order', async () => {
    const filter = { room_slug: { $in: ['room-1', 'room-2', 'room-3'] } };
    const opts: FindOptions = { sort: { published_at: -1 }, skip: 5, limit: 15 };
    const plan = await c.explain(filter, opts);
    expect(plan.index).to.equal('room_published');
    expect(plan.examined).to.be.at.most(20);
    const expected = all
      .filter((d) => ['room-1', 'room-2', 'room-3'].includes(d.room_slug as string))
      .sort(byPublishedDesc)
      .slice(5, 20);
    expect((await c.find(filter, opts)).map((d) => d._id)).to.deep.equal(expected.map((d) => d._id));
  });

  it('serves a range on the field after the equality prefix', async () => {
    const from = all[50_000].published_at as string;
    const to = all[52_000].published_at as string;
    const filter = { room_slug: 'room-9', published_at: { $gte: from, $lt: to } };
    const plan = await c.explain(filter, { sort: { published_at: -1 } });
    expect(plan.index).to.equal('room_published');
    const expected = all.filter((d) => d.room_slug === 'room-9' && (d.published_at as string) >= from && (d.published_at as string) < to).sort(byPublishedDesc);
    expect(plan.examined).to.equal(expected.length);
    expect((await c.find(filter, { sort: { published_at: -1 } })).map((d) => d._id)).to.deep.equal(expected.map((d) => d._id));
    expect(await c.count(filter)).to.equal(expected.length);
  });

  it('uses an ascending compound index for equality + ascending sort with skip', async () => {
    const plan = await c.explain({ agent_id: 'a42' }, { sort: { seq: 1 }, skip: 40, limit: 20 });
    expect(plan).to.deep.equal({ index: 'agent_seq', examined: 60 });
    const got = await c.find({ agent_id: 'a42' }, { sort: { seq: 1 }, skip: 40, limit: 20 });
    expect(got.map((d) => d.seq)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 42 + (40 + i) * 1000));
  });

  it('serves _id equality and $in by direct lookups', async () => {
    expect(await c.explain({ _id: 'p000123' })).to.deep.equal({ index: '_id_', examined: 1 });
    expect(await c.explain({ _id: { $in: ['p000001', 'p000002', 'nope'] } })).to.deep.equal({ index: '_id_', examined: 2 });
  });

  it('reports a full scan (index null) when no index fits, and still answers correctly', async () => {
    const plan = await c.explain({ body: 'post 77' }, { limit: 1 });
    expect(plan.index).to.equal(null);
    const sorted = await c.explain({ hidden: true }, { sort: { seq: -1 }, limit: 5 });
    expect(sorted).to.deep.equal({ index: null, examined: N });
    expect((await c.find({ hidden: true }, { sort: { seq: -1 }, limit: 2 })).map((d) => d.seq)).to.deep.equal([99_995, 99_988]);
  });

  it('counts through the index, not a scan of the collection', async () => {
    // count() plans like find(): the index narrows to the room's documents, the filter on a field
    // outside it examines only those.
    expect(await c.explain({ room_slug: 'room-11' })).to.deep.equal({ index: 'room_published', examined: N / 50 });
    expect(await c.explain({ room_slug: 'room-11', hidden: false })).to.deep.equal({ index: 'room_published', examined: N / 50 });
    expect(await c.count({ room_slug: 'room-11' })).to.equal(N / 50);
    expect(await c.count({ room_slug: 'room-11', hidden: false })).to.equal(all.filter((d) => d.room_slug === 'room-11' && !d.hidden).length);
  });
});

describe('memory read store: index maintenance', () => {
  async function setup() {
    const store = new MemoryReadStore();
    await store.ensureCollection({ name: 'posts', indexes: POST_INDEXES });
    const c = store.collection<string>('posts');
    for (let i = 0; i < 200; i++) await c.insertOne(post(i));
    return { store, c };
  }

  const page = { sort: { published_at: -1 }, limit: 1000 } as const;

  it('moves a document between index ranges when an update changes an indexed field', async () => {
    const { c } = await setup();
    await c.updateOne({ _id: 'p000010' }, { $set: { room_slug: 'moved' } });
    expect((await c.find({ room_slug: 'moved' }, page)).map((d) => d._id)).to.deep.equal(['p000010']);
    expect((await c.find({ room_slug: 'room-10' }, page)).map((d) => d._id)).to.not.include('p000010');
    expect(await c.count({ room_slug: 'room-10' })).to.equal(3);
    expect((await c.explain({ room_slug: 'moved' }, page)).index).to.equal('room_published');
  });

  it('re-sorts a document whose sort field changed', async () => {
    const { c } = await setup();
    await c.applyAt('p000000', 1, { $set: { published_at: '2030-01-01T00:00:00.000Z' } });
    const first = await c.find({ room_slug: 'room-0' }, { sort: { published_at: -1 }, limit: 2 });
    expect(first.map((d) => d._id)).to.deep.equal(['p000000', 'p000150']);
  });

  it('follows $push and $pull on a multikey field', async () => {
    const { c } = await setup();
    await c.updateOne({ _id: 'p000005' }, { $push: { tags: 'fresh' } });
    await c.applyAt('p000006', 1, { $addToSet: { tags: 'fresh' } });
    expect((await c.find({ tags: 'fresh' }, page)).map((d) => d._id)).to.deep.equal(['p000006', 'p000005']);
    await c.updateOne({ _id: 'p000005' }, { $pull: { tags: 'fresh' } });
    expect((await c.find({ tags: 'fresh' }, page)).map((d) => d._id)).to.deep.equal(['p000006']);
    await c.updateOne({ _id: 'p000006' }, { $unset: { tags: '' } });
    expect(await c.find({ tags: 'fresh' }, page)).to.deep.equal([]);
    expect((await c.find({ tags: null }, page)).map((d) => d._id)).to.deep.equal(['p000006']);
  });

  it('removes deleted documents from every index', async () => {
    const { c } = await setup();
    expect(await c.deleteMany({ room_slug: 'room-4' })).to.equal(4);
    expect(await c.find({ room_slug: 'room-4' }, page)).to.deep.equal([]);
    expect(await c.count({ room_slug: 'room-4' })).to.equal(0);
    expect((await c.find({ tags: 't4' }, page)).map((d) => d._id)).to.not.include('p000004');
    expect(await c.find({ agent_id: 'a4' }, { sort: { seq: 1 } })).to.deep.equal([]);
    await c.deleteOne({ _id: 'p000017' });
    expect((await c.find({ room_slug: 'room-17' }, page)).map((d) => d._id)).to.deep.equal(['p000167', 'p000117', 'p000067']);
  });

  it('leaves documents and indexes untouched when an update fails', async () => {
    const { c } = await setup();
    const before = await c.findOne({ _id: 'p000003' });
    let failed = false;
    try {
      await c.updateOne({ _id: 'p000003' }, { $set: { room_slug: 'elsewhere' }, $inc: { body: 1 } });
    } catch (err) {
      failed = err instanceof UpdateError;
    }
    expect(failed).to.equal(true);
    expect(await c.findOne({ _id: 'p000003' })).to.deep.equal(before);
    expect(await c.find({ room_slug: 'elsewhere' }, page)).to.deep.equal([]);
    expect((await c.find({ room_slug: 'room-3' }, page)).map((d) => d._id)).to.include('p000003');
  });

  it('refuses an upsert whose filter names a non-string _id (its documents have string ids), storing nothing', async () => {
    const { c } = await setup();
    for (const _id of [5, true, { k: 1 }]) {
      let failed: unknown;
      try {
        await c.updateOne({ _id }, { $set: { room_slug: 'room-1' } }, { upsert: true });
      } catch (err) {
        failed = err;
      }
      expect(failed).to.be.instanceOf(UpdateError);
      expect(await c.count({ _id })).to.equal(0);
    }
    expect(await c.count()).to.equal(200);
    // A filter's string _id, or none at all (a new ObjectId), is upserted as before.
    await c.updateOne({ _id: 'fresh' }, { $set: { room_slug: 'room-1' } }, { upsert: true });
    await c.updateOne({ room_slug: 'nowhere' }, { $set: { seq: -1 } }, { upsert: true });
    expect(await c.findOne({ _id: 'fresh' })).to.deep.equal({ _id: 'fresh', room_slug: 'room-1' });
    expect((await c.findOne({ room_slug: 'nowhere' }))?._id).to.match(/^[0-9a-f]{24}$/);
  });

  it('builds a declared index over documents already stored, and refuses duplicates there', async () => {
    const store = new MemoryReadStore();
    const c = store.collection<string>('agents');
    await c.insertOne({ _id: 'a', handle: 'x', score: 3 });
    await c.insertOne({ _id: 'b', handle: 'y', score: 5 });
    await store.ensureCollection({ name: 'agents', indexes: [{ name: 'score', keys: { score: -1 } }] });
    expect(await c.explain({}, { sort: { score: -1 }, limit: 1 })).to.deep.equal({ index: 'score', examined: 1 });
    expect((await c.findOne({}, { sort: { score: -1 } }))?._id).to.equal('b');
    await c.insertOne({ _id: 'c', handle: 'x' });
    let failed: unknown;
    try {
      await store.ensureCollection({ name: 'agents', indexes: [{ name: 'handle', keys: { handle: 1 }, unique: true }] });
    } catch (err) {
      failed = err;
    }
    expect(failed).to.be.an('error');
    await c.deleteOne({ _id: 'c' });
    await store.ensureCollection({ name: 'agents', indexes: [{ name: 'handle', keys: { handle: 1 }, unique: true }] });
    expect((await c.explain({ handle: 'y' })).index).to.equal('handle');
  });

  it('answers every query the same with and without indexes (random documents and queries)', async () => {
    const random = rng(42);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
    const indexed = new MemoryReadStore();
    const plain = new MemoryReadStore();
    await indexed.ensureCollection({
      name: 'x',
      indexes: [
        { name: 'a_b', keys: { a: 1, b: -1 } },
        { name: 'tags_b', keys: { tags: 1, b: 1 } },
        { name: 'o_k', keys: { 'o.k': -1 } },
      ],
    });
    const values = [0, 1, 2, 3, 'x', 'y', null, true];
    for (let i = 0; i < 1500; i++) {
      const d: Doc = { _id: `d${i}` };
      if (random() < 0.9) d.a = pick(values);
      if (random() < 0.9) d.b = Math.floor(random() * 20);
      if (random() < 0.7) d.tags = Array.from({ length: Math.floor(random() * 3) }, () => pick(['r', 'g', 'b', 'w']));
      if (random() < 0.5) d.o = { k: pick(values) };
      await indexed.collection('x').insertOne(d);
      await plain.collection('x').insertOne(d);
    }
    for (let i = 0; i < 300; i++) {
      const id = `d${Math.floor(random() * 1500)}`;
      const update = pick<Record<string, unknown>>([
        { $set: { a: pick(values) } },
        { $inc: { b: 1 } },
        { $push: { tags: pick(['r', 'g', 'z']) } },
        { $pull: { tags: 'r' } },
        { $set: { 'o.k': pick(values) } },
        { $unset: { a: '' } },
      ]);
      await indexed.collection('x').updateOne({ _id: id }, update);
      await plain.collection('x').updateOne({ _id: id }, update);
      if (i % 50 === 0) {
        await indexed.collection('x').deleteOne({ _id: id });
        await plain.collection('x').deleteOne({ _id: id });
      }
    }
    const filters: Array<() => Filter> = [
      () => ({ a: pick(values) }),
      () => ({ a: { $in: [pick(values), pick(values)] } }),
      () => ({ a: pick(values), b: { $gte: Math.floor(random() * 20) } }),
      () => ({ a: pick(values), b: { $gt: Math.floor(random() * 20), $lte: Math.floor(random() * 20) + 5 } }),
      () => ({ tags: pick(['r', 'g', 'b', 'w', 'z']) }),
      () => ({ tags: { $in: ['r', 'b'] }, b: { $lt: 10 } }),
      () => ({ 'o.k': pick(values) }),
      () => ({ 'o.k': { $gte: 1 } }),
      () => ({ a: { $gte: 'x' } }),
      () => ({ a: pick(values), b: { $ne: Math.floor(random() * 20) } }),
      () => ({ a: { $in: [pick(values), pick(values)], $nin: [pick(values)] } }),
      () => ({ a: pick(values), b: { $exists: false } }),
      () => ({ 'o.k': { $ne: pick(values) } }),
      () => ({ tags: pick(['r', 'g']), $or: [{ a: pick(values) }, { b: { $lt: 5 } }] }),
      () => ({ _id: { $in: [`d${Math.floor(random() * 1500)}`, `d${Math.floor(random() * 1500)}`] }, b: { $gt: 5 } }),
      () => ({}),
    ];
    const sorts: Array<FindOptions['sort']> = [undefined, { b: -1 }, { b: 1 }, { a: 1, b: -1 }, { 'o.k': -1 }, { b: 1, _id: 1 }];
    let indexServed = 0;
    for (let i = 0; i < 400; i++) {
      const filter = pick(filters)();
      const sort = pick(sorts);
      const options: FindOptions = { sort: sort === undefined ? undefined : { ...sort, _id: 1 }, skip: pick([0, 0, 3]), limit: pick([0, 5, 20]) };
      const a = await indexed.collection('x').find(filter, options);
      const b = await plain.collection('x').find(filter, options);
      const label = JSON.stringify({ filter, options });
      if (options.sort === undefined && options.limit === 0 && options.skip === 0) {
        expect(a.map((d) => d._id).sort(), label).to.deep.equal(b.map((d) => d._id).sort());
      } else if (options.sort !== undefined) {
        expect(a, label).to.deep.equal(b);
      } else {
        expect(a.length, label).to.equal(b.length);
      }
      expect(await indexed.collection('x').count(filter), label).to.equal(await plain.collection('x').count(filter));
      if ((await indexed.collection('x').explain(filter, options)).index !== null) indexServed++;
    }
    expect(indexServed).to.be.above(200);
  });
});

describe('memory read store: collections and snapshots of state', () => {
  it('swaps several collections at once, exchanging two names', async () => {
    const store = new MemoryReadStore();
    await store.collection('a').insertOne({ _id: 'from-a' });
    await store.collection('b').insertOne({ _id: 'from-b' });
    await store.swapCollections([
      ['a', 'b'],
      ['b', 'a'],
    ]);
    expect((await store.collection('a').find({})).map((d) => d._id)).to.deep.equal(['from-b']);
    expect((await store.collection('b').find({})).map((d) => d._id)).to.deep.equal(['from-a']);
  });

  it('refuses to swap from a collection that does not exist, changing nothing', async () => {
    const store = new MemoryReadStore();
    await store.collection('a').insertOne({ _id: '1' });
    let failed = false;
    try {
      await store.swapCollections([
        ['a', 'b'],
        ['missing', 'c'],
      ]);
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(await store.listCollections()).to.deep.equal(['a']);
  });

  it('applies repeated projection writes to the same documents, each once', async () => {
    const store = new MemoryReadStore();
    await store.ensureCollection({
      name: 'agents',
      indexes: [
        { name: 'handle', keys: { handle: 1 }, unique: true },
        { name: 'karma', keys: { karma: -1 } },
      ],
    });
    const c = store.collection<string>('agents');
    for (let i = 0; i < 1000; i++) await c.applyAt(`a${i}`, i + 1, { $set: { handle: `h${i}`, karma: 0 } });
    for (let i = 0; i < 100_000; i++) await c.applyAt(`a${i % 1000}`, 2000 + i, { $set: { last_seen: 'x' }, $inc: { posts: 1 } });
    expect((await c.findOne({ _id: 'a7' }))?.posts).to.equal(100);
    // A position already applied is ignored (replay after a crash).
    await c.applyAt('a7', 2007, { $inc: { posts: 1 } });
    expect((await c.findOne({ _id: 'a7' }))?.posts).to.equal(100);
    expect(await c.count({ posts: 100 })).to.equal(1000);
  });
});

describe('updates: the fast MongoDB update applier', () => {
  const apply = (doc: Record<string, unknown>, update: Record<string, unknown>, isInsert = false) => applyUpdate(doc, update, { isInsert });

  it('$inc on a missing field sets it to the increment', () => {
    const d = { _id: 'a' };
    expect(apply(d, { $inc: { n: 3, 'o.m': -1 } })).to.equal(true);
    expect(d).to.deep.equal({ _id: 'a', n: 3, o: { m: -1 } });
  });

  it('$push creates the array when the field is missing', () => {
    const d = { _id: 'a' };
    apply(d, { $push: { list: 'x', 'o.deep': { $each: [1, 2] } } });
    expect(d).to.deep.equal({ _id: 'a', list: ['x'], o: { deep: [1, 2] } });
  });

  it('$push supports $position, $sort and $slice', () => {
    const d = { _id: 'a', l: [1, 2, 3] };
    apply(d, { $push: { l: { $each: [9], $position: 1 } } });
    expect(d.l).to.deep.equal([1, 9, 2, 3]);
    apply(d, { $push: { l: { $each: [5], $sort: -1, $slice: 3 } } });
    expect(d.l).to.deep.equal([9, 5, 3]);
    const docs = { _id: 'b', l: [{ s: 2 }, { s: 1 }] };
    apply(docs, { $push: { l: { $each: [{ s: 3 }], $sort: { s: 1 } } } });
    expect(docs.l).to.deep.equal([{ s: 1 }, { s: 2 }, { s: 3 }]);
  });

  it('$addToSet does not add a value (or an equal document) twice', () => {
    const d = { _id: 'a', s: ['x', { k: 1, v: [2] }] };
    expect(apply(d, { $addToSet: { s: 'x' } })).to.equal(false);
    expect(apply(d, { $addToSet: { s: { k: 1, v: [2] } } })).to.equal(false);
    expect(apply(d, { $addToSet: { s: { $each: ['y', 'y', 'x'] } } })).to.equal(true);
    expect(d.s).to.deep.equal(['x', { k: 1, v: [2] }, 'y']);
    // MongoDB compares embedded documents field by field in order.
    expect(apply(d, { $addToSet: { s: { v: [2], k: 1 } } })).to.equal(true);
    expect(d.s).to.have.length(4);
  });

  it('$unset removes a nested path and keeps its siblings', () => {
    const d = { _id: 'a', o: { p: { q: 1, r: 2 }, s: 3 } };
    expect(apply(d, { $unset: { 'o.p.q': '' } })).to.equal(true);
    expect(d).to.deep.equal({ _id: 'a', o: { p: { r: 2 }, s: 3 } });
    expect(apply(d, { $unset: { 'o.p.q': '', 'o.s.t': '', 'x.y': '' } })).to.equal(false);
  });

  it('$unset on an array element sets it to null', () => {
    const d = { _id: 'a', l: [1, 2, 3] };
    apply(d, { $unset: { 'l.1': '' } });
    expect(d.l).to.deep.equal([1, null, 3]);
  });

  it('$set on an index past the end pads the array with null', () => {
    const d = { _id: 'a', l: [1] };
    apply(d, { $set: { 'l.3': 4 } });
    expect(d.l).to.deep.equal([1, null, null, 4]);
  });

  it('$min and $max compare across types in BSON order', () => {
    const d = { _id: 'a', v: 5, w: 'text' };
    apply(d, { $min: { v: 'a' }, $max: { w: 1 } });
    expect(d).to.deep.equal({ _id: 'a', v: 5, w: 'text' });
    apply(d, { $max: { v: 'a' }, $min: { w: 1 } });
    expect(d).to.deep.equal({ _id: 'a', v: 'a', w: 1 });
  });

  it('$pull removes equal values, $in members and matching documents', () => {
    const d = { _id: 'a', s: ['a', 'b', 'a', 'c'], n: [1, 2, 3], docs: [{ k: 1, x: 1 }, { k: 2 }, 'k'] };
    expect(apply(d, { $pull: { s: 'a', n: { $in: [1, 3] }, docs: { k: 1 } } })).to.equal(true);
    expect(d).to.deep.equal({ _id: 'a', s: ['b', 'c'], n: [2], docs: [{ k: 2 }, 'k'] });
    expect(apply(d, { $pull: { s: 'zz' } })).to.equal(false);
  });

  it('$setOnInsert applies only when inserting', () => {
    const d = { _id: 'a' };
    apply(d, { $setOnInsert: { c: 1 } }, false);
    expect(d).to.deep.equal({ _id: 'a' });
    apply(d, { $setOnInsert: { c: 1 } }, true);
    expect(d).to.deep.equal({ _id: 'a', c: 1 });
  });

  it('reports no change when the update leaves the document as it was', () => {
    const d = { _id: 'a', n: 1, m: 2, p: 3, q: 4, r: 5, t: 6, s: ['x'], o: { k: [1] } };
    const noop = {
      $set: { n: 1, o: { k: [1] } },
      $inc: { m: 0 },
      $min: { p: 4, r: 5 },
      $max: { q: 0, t: 6 },
      $unset: { nope: '' },
      $addToSet: { s: 'x' },
      $pull: { u: 'x' },
    };
    expect(apply(d, noop)).to.equal(false);
    expect(d).to.deep.equal({ _id: 'a', n: 1, m: 2, p: 3, q: 4, r: 5, t: 6, s: ['x'], o: { k: [1] } });
    expect(apply(d, { $set: { n: 2 } })).to.equal(true);
  });

  it('rejects a failing update atomically: no partial change survives', () => {
    const d = { _id: 'a', s: 'text', l: [1], o: { k: 1 } };
    const before = structuredClone(d);
    expect(() => apply(d, { $set: { 'new.deep': 1, 'o.k': 2 }, $push: { l: 2 }, $inc: { s: 1 } })).to.throw(UpdateError);
    expect(d).to.deep.equal(before);
    expect(() => apply(d, { $addToSet: { l: 5 }, $pull: { s: 'x' } })).to.throw(UpdateError, /non-array/);
    expect(d).to.deep.equal(before);
    expect(() => apply(d, { $set: { 's.x': 1 } })).to.throw(UpdateError, /Cannot create field/);
    expect(() => apply(d, { $push: { s: 1 } })).to.throw(UpdateError, /must be an array/);
    expect(d).to.deep.equal(before);
  });

  it('rejects conflicting paths, _id changes, mixed documents and __proto__ paths', () => {
    const d = { _id: 'a', o: { k: 1 } };
    expect(() => apply(d, { $set: { o: {} }, $inc: { 'o.k': 1 } })).to.throw(UpdateError, /conflict/);
    expect(() => apply(d, { $set: { x: 1 }, $unset: { x: '' } })).to.throw(UpdateError, /conflict/);
    expect(() => apply(d, { $set: { _id: 'b' } })).to.throw(UpdateError, /immutable/);
    expect(apply(d, { $set: { _id: 'a' } })).to.equal(false);
    expect(() => apply(d, { $set: { x: 1 }, y: 2 })).to.throw(UpdateError);
    expect(() => apply(d, { $set: { '__proto__.polluted': 1 } })).to.throw(UpdateError);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(d).to.deep.equal({ _id: 'a', o: { k: 1 } });
  });

  it('replaces the document (keeping _id) when given a plain document', () => {
    const d: Record<string, unknown> = { _id: 'a', x: 1 };
    expect(apply(d, { y: 2 })).to.equal(true);
    expect(d).to.deep.equal({ _id: 'a', y: 2 });
    expect(apply(d, { y: 2 })).to.equal(false);
  });

  it('copies the values it stores', () => {
    const value = { k: [1] };
    const d: Record<string, unknown> = { _id: 'a' };
    apply(d, { $set: { v: value }, $push: { l: value }, $addToSet: { s: value } });
    value.k.push(2);
    expect(d).to.deep.equal({ _id: 'a', v: { k: [1] }, l: [{ k: [1] }], s: [{ k: [1] }] });
  });

  it('falls back to mingo for the operators it does not implement', () => {
    const d: Record<string, unknown> = { _id: 'a', n: 2, l: [1, 2, 3], old: 'v' };
    expect(apply(d, { $mul: { n: 5 }, $pop: { l: -1 }, $rename: { old: 'new' } })).to.equal(true);
    expect(d).to.deep.equal({ _id: 'a', n: 10, l: [2, 3], new: 'v' });
    const p = {
      _id: 'a',
      items: [
        { k: 'x', q: 1 },
        { k: 'y', q: 1 },
      ],
    };
    applyUpdate(p, { $inc: { 'items.$.q': 2 } }, { isInsert: false, filter: { 'items.k': 'y' } });
    expect(p.items).to.deep.equal([
      { k: 'x', q: 1 },
      { k: 'y', q: 3 },
    ]);
  });

  it('orders values like BSON: null < numbers < strings < objects < arrays < booleans', () => {
    const sorted = [true, [1], { a: 1 }, 'b', 'a', 10, 2, null].sort(compareValues);
    expect(sorted).to.deep.equal([null, 2, 10, 'a', 'b', { a: 1 }, [1], true]);
    expect(compareValues({ a: 1, b: 2 }, { b: 2, a: 1 })).to.not.equal(0);
    expect(compareValues({ a: 1 }, { a: 1 })).to.equal(0);
    expect(compareValues(undefined, null)).to.equal(0);
  });

  it('applies the common projection update ($set and $inc, nested) the same way every time', () => {
    const d: Record<string, unknown> = { _id: 'a', n: 0, name: 'x', o: { c: 0 } };
    const n = 100_000;
    for (let i = 0; i < n; i++) apply(d, { $set: { name: i & 1 ? 'a' : 'b', at: '2024-01-01' }, $inc: { n: 1, 'o.c': 2 } });
    expect(d).to.deep.equal({ _id: 'a', n, name: 'a', o: { c: 2 * n }, at: '2024-01-01' });
  });
});
