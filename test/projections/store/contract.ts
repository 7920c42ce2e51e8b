// The read-store contract: what every adapter must do, with MongoDB's semantics as the reference.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../../events/kernel/clock.ts';
import { Lease } from '../../../projections/leases.ts';
import { collectionChecksum } from '../../../projections/store/checksum.ts';
import { DuplicateKeyError, type Doc, type Filter, type FindOptions, type ReadStore } from '../../../projections/store/port.ts';

type Factory = () => Promise<{ store: ReadStore; cleanup: () => Promise<void> }>;

async function rejects(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

export function readStoreContract(name: string, factory: Factory): void {
  describe(`read store contract: ${name}`, function () {
    let store: ReadStore;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ store, cleanup } = await factory());
    });
    after(async () => {
      await cleanup();
    });

    const fresh = (prefix = 'c') => `${prefix}_${randomBytes(6).toString('hex')}`;

    async function seeded(docs: Doc[]): Promise<string> {
      const name = fresh('seed');
      for (const d of docs) await store.collection(name).insertOne(d);
      return name;
    }

    async function ids(coll: string, filter: Filter, options: FindOptions = { sort: { _id: 1 } }): Promise<string[]> {
      return (await store.collection(coll).find(filter, options)).map((d) => d._id);
    }

    it('answers a ping', async () => {
      await store.ping();
    });

    describe('documents', () => {
      it('inserts a document and reads it back by _id, find and count', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', title: 'hello', n: 1, tags: ['x'], meta: { by: 'u1' } });
        await c.insertOne({ _id: 'b', title: 'bye', n: 2 });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', title: 'hello', n: 1, tags: ['x'], meta: { by: 'u1' } });
        expect((await c.find({})).map((d) => d._id).sort()).to.deep.equal(['a', 'b']);
        expect(await c.count()).to.equal(2);
        expect(await c.count({ n: 2 })).to.equal(1);
      });

      it('returns null, [] and 0 for what does not exist', async () => {
        const c = store.collection(fresh());
        expect(await c.findOne({ _id: 'nope' })).to.equal(null);
        expect(await c.find({ a: 1 })).to.deep.equal([]);
        expect(await c.count()).to.equal(0);
        expect(await c.deleteOne({ _id: 'nope' })).to.equal(0);
        expect(await c.updateOne({ _id: 'nope' }, { $set: { a: 1 } })).to.deep.equal({ matched: 0, modified: 0, upserted: false });
        expect(await c.count()).to.equal(0);
      });

      it('refuses a second document with the same _id with DuplicateKeyError and keeps the first', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', v: 1 });
        const err = await rejects(c.insertOne({ _id: 'a', v: 2 }));
        expect(err).to.be.instanceOf(DuplicateKeyError);
        expect((err as DuplicateKeyError).code).to.equal('duplicate_key');
        expect((err as DuplicateKeyError).status).to.equal(409);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', v: 1 });
      });

      it('stores undefined fields as null, as the MongoDB driver serialises them', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', gone: undefined, list: [1, undefined] });
        await c.updateOne({ _id: 'a' }, { $set: { later: undefined } });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', gone: null, list: [1, null], later: null });
      });

      it('counts matched and modified documents of updateOne and updateMany', async () => {
        const name = await seeded([
          { _id: 'a', g: 1, v: 0 },
          { _id: 'b', g: 1, v: 5 },
          { _id: 'c', g: 2, v: 0 },
        ]);
        const c = store.collection(name);
        expect(await c.updateOne({ _id: 'a' }, { $set: { v: 0 } })).to.deep.equal({ matched: 1, modified: 0, upserted: false });
        expect(await c.updateOne({ _id: 'a' }, { $set: { v: 1 } })).to.deep.equal({ matched: 1, modified: 1, upserted: false });
        expect(await c.updateMany({ g: 1 }, { $set: { v: 5 } })).to.deep.equal({ matched: 2, modified: 1, upserted: false });
        expect(await c.updateMany({ g: 3 }, { $set: { v: 5 } })).to.deep.equal({ matched: 0, modified: 0, upserted: false });
        expect(await ids(name, { v: 5 })).to.deep.equal(['a', 'b']);
      });

      it('deletes one or many matching documents and reports how many', async () => {
        const name = await seeded([
          { _id: 'a', g: 1 },
          { _id: 'b', g: 1 },
          { _id: 'c', g: 2 },
          { _id: 'd', g: 2 },
        ]);
        const c = store.collection(name);
        expect(await c.deleteOne({ g: 1 })).to.equal(1);
        expect(await c.count({ g: 1 })).to.equal(1);
        expect(await c.deleteMany({ g: 2 })).to.equal(2);
        expect(await c.deleteMany({ g: 2 })).to.equal(0);
        expect(await c.count()).to.equal(1);
      });

      it('replaces a document with a plain document in updateOne, keeping its _id', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', x: 1, y: 2 });
        expect(await c.updateOne({ _id: 'a' }, { z: 3 })).to.deep.equal({ matched: 1, modified: 1, upserted: false });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', z: 3 });
      });
    });

    describe('filters', () => {
      let name: string;
      before(async () => {
        name = await seeded([
          { _id: 'a', n: 1, s: 'x', tags: ['red', 'blue'], nested: { k: 1 }, flag: true },
          { _id: 'b', n: 2, s: 'y', tags: ['blue'], nested: { k: 2 }, flag: false },
          { _id: 'c', n: 3, s: 'z', tags: [], nested: { k: 3 }, opt: null },
          { _id: 'd', n: 4, s: 'x', tags: ['green'], nested: { k: 1, deep: { v: 'q' } }, opt: 5 },
          {
            _id: 'e',
            s: 'w',
            items: [
              { sku: 'A', qty: 1 },
              { sku: 'B', qty: 5 },
            ],
          },
          { _id: 'f', n: '7', s: 'v' },
        ]);
      });

      it('matches equality, $eq and $ne (which also matches missing fields)', async () => {
        expect(await ids(name, { s: 'x' })).to.deep.equal(['a', 'd']);
        expect(await ids(name, { s: { $eq: 'y' } })).to.deep.equal(['b']);
        expect(await ids(name, { s: { $ne: 'x' } })).to.deep.equal(['b', 'c', 'e', 'f']);
        expect(await ids(name, { flag: false })).to.deep.equal(['b']);
        expect(await ids(name, { n: { $ne: 1 } })).to.deep.equal(['b', 'c', 'd', 'e', 'f']);
      });

      it('matches $in and $nin', async () => {
        expect(await ids(name, { s: { $in: ['x', 'y'] } })).to.deep.equal(['a', 'b', 'd']);
        expect(await ids(name, { s: { $nin: ['x', 'y'] } })).to.deep.equal(['c', 'e', 'f']);
        expect(await ids(name, { _id: { $in: ['b', 'zz', 'e'] } })).to.deep.equal(['b', 'e']);
        expect(await ids(name, { s: { $in: [] } })).to.deep.equal([]);
      });

      it('matches ranges within the type of the bound (a string "7" is not > 1)', async () => {
        expect(await ids(name, { n: { $gt: 1, $lte: 3 } })).to.deep.equal(['b', 'c']);
        expect(await ids(name, { n: { $gte: 3 } })).to.deep.equal(['c', 'd']);
        expect(await ids(name, { n: { $lt: 2 } })).to.deep.equal(['a']);
        expect(await ids(name, { n: { $gt: 0 } })).to.deep.equal(['a', 'b', 'c', 'd']);
        expect(await ids(name, { s: { $gte: 'x' } })).to.deep.equal(['a', 'b', 'c', 'd']);
        expect(await ids(name, { s: { $gt: 'v', $lt: 'y' } })).to.deep.equal(['a', 'd', 'e']);
      });

      it('matches $exists and null (null matches missing fields too)', async () => {
        expect(await ids(name, { opt: { $exists: true } })).to.deep.equal(['c', 'd']);
        expect(await ids(name, { opt: { $exists: false } })).to.deep.equal(['a', 'b', 'e', 'f']);
        expect(await ids(name, { opt: null })).to.deep.equal(['a', 'b', 'c', 'e', 'f']);
      });

      it('matches $or and $and', async () => {
        expect(await ids(name, { $or: [{ s: 'y' }, { n: 4 }] })).to.deep.equal(['b', 'd']);
        expect(await ids(name, { $and: [{ s: 'x' }, { n: { $gt: 1 } }] })).to.deep.equal(['d']);
        expect(await ids(name, { s: 'x', $or: [{ n: 1 }, { flag: false }] })).to.deep.equal(['a']);
      });

      it('matches dotted paths into sub-documents and arrays of documents', async () => {
        expect(await ids(name, { 'nested.k': 1 })).to.deep.equal(['a', 'd']);
        expect(await ids(name, { 'nested.deep.v': 'q' })).to.deep.equal(['d']);
        expect(await ids(name, { 'items.sku': 'B' })).to.deep.equal(['e']);
        expect(await ids(name, { items: { $elemMatch: { sku: 'B', qty: { $gt: 2 } } } })).to.deep.equal(['e']);
        expect(await ids(name, { items: { $elemMatch: { sku: 'A', qty: { $gt: 2 } } } })).to.deep.equal([]);
      });

      it('matches a value contained in an array field', async () => {
        expect(await ids(name, { tags: 'blue' })).to.deep.equal(['a', 'b']);
        expect(await ids(name, { tags: { $in: ['green', 'red'] } })).to.deep.equal(['a', 'd']);
        expect(await ids(name, { tags: { $size: 0 } })).to.deep.equal(['c']);
        expect(await ids(name, { tags: { $all: ['red', 'blue'] } })).to.deep.equal(['a']);
      });
    });

    describe('sort, skip, limit, projection', () => {
      let name: string;
      before(async () => {
        name = await seeded([
          { _id: 'a', g: 'x', r: 3, t: '2024-01-03T00:00:00.000Z', secret: 's', meta: { k: 1, j: 2 } },
          { _id: 'b', g: 'y', r: 1, t: '2024-01-01T00:00:00.000Z', secret: 's', meta: { k: 2, j: 3 } },
          { _id: 'c', g: 'x', r: 2, t: '2024-01-05T00:00:00.000Z', secret: 's', meta: { k: 3, j: 4 } },
          { _id: 'd', g: 'y', r: 5, t: '2024-01-02T00:00:00.000Z', secret: 's' },
          { _id: 'e', g: 'x', r: 4, t: '2024-01-04T00:00:00.000Z', secret: 's' },
        ]);
      });

      it('sorts ascending and descending on one field', async () => {
        expect(await ids(name, {}, { sort: { r: 1 } })).to.deep.equal(['b', 'c', 'a', 'e', 'd']);
        expect(await ids(name, {}, { sort: { t: -1 } })).to.deep.equal(['c', 'e', 'a', 'd', 'b']);
      });

      it('sorts on compound keys with mixed directions', async () => {
        expect(await ids(name, {}, { sort: { g: 1, r: -1 } })).to.deep.equal(['e', 'a', 'c', 'd', 'b']);
        expect(await ids(name, {}, { sort: { g: -1, t: 1 } })).to.deep.equal(['b', 'd', 'a', 'e', 'c']);
      });

      it('sorts missing fields first ascending (as null)', async () => {
        expect(await ids(name, {}, { sort: { 'meta.k': 1, _id: 1 } })).to.deep.equal(['d', 'e', 'a', 'b', 'c']);
      });

      it('applies skip and limit after sorting and filtering', async () => {
        expect(await ids(name, {}, { sort: { r: 1 }, skip: 1, limit: 2 })).to.deep.equal(['c', 'a']);
        expect(await ids(name, { g: 'x' }, { sort: { r: -1 }, skip: 1, limit: 5 })).to.deep.equal(['a', 'c']);
        expect(await ids(name, {}, { sort: { r: 1 }, skip: 10 })).to.deep.equal([]);
        expect(await store.collection(name).findOne({ g: 'x' }, { sort: { r: -1 } })).to.include({ _id: 'e' });
      });

      it('projects by inclusion, keeping _id unless excluded', async () => {
        const c = store.collection(name);
        expect(await c.findOne({ _id: 'a' }, { projection: { g: 1, r: 1 } })).to.deep.equal({ _id: 'a', g: 'x', r: 3 });
        expect(await c.findOne({ _id: 'a' }, { projection: { g: 1, _id: 0 } })).to.deep.equal({ g: 'x' });
        expect(await c.findOne({ _id: 'a' }, { projection: { 'meta.k': 1 } })).to.deep.equal({ _id: 'a', meta: { k: 1 } });
        const many = await c.find({ g: 'y' }, { sort: { r: 1 }, projection: { r: 1 } });
        expect(many).to.deep.equal([
          { _id: 'b', r: 1 },
          { _id: 'd', r: 5 },
        ]);
      });

      it('answers projected fields in the document order, as copies, whatever object names them', async () => {
        const c = store.collection(name);
        await c.insertOne({ _id: 'p1', z: 1, constructor: 'c', a: { n: [1, 2] }, m: 'm' });
        // Named out of order, and the same projection object twice (it may be compiled once).
        const projection = { m: 1, a: 1, z: 1 } as const;
        const first = await c.findOne({ _id: 'p1' }, { projection });
        expect(Object.keys(first ?? {})).to.deep.equal(['_id', 'z', 'a', 'm']);
        (first?.a as { n: number[] }).n.push(3);
        expect(await c.findOne({ _id: 'p1' }, { projection })).to.deep.equal({ _id: 'p1', z: 1, a: { n: [1, 2] }, m: 'm' });
        // An equal projection in a new object, and one naming a field the document lacks.
        expect(await c.findOne({ _id: 'p1' }, { projection: { m: 1, a: 1, z: 1 } })).to.deep.equal({ _id: 'p1', z: 1, a: { n: [1, 2] }, m: 'm' });
        expect(await c.findOne({ _id: 'p1' }, { projection: { nothing: 1, m: 1 } })).to.deep.equal({ _id: 'p1', m: 'm' });
        await c.deleteOne({ _id: 'p1' });
      });

      it('projects by exclusion', async () => {
        const c = store.collection(name);
        expect(await c.findOne({ _id: 'b' }, { projection: { secret: 0, t: 0 } })).to.deep.equal({ _id: 'b', g: 'y', r: 1, meta: { k: 2, j: 3 } });
        expect(await c.findOne({ _id: 'b' }, { projection: { 'meta.j': 0, secret: 0, _id: 0 } })).to.deep.equal({
          g: 'y',
          r: 1,
          t: '2024-01-01T00:00:00.000Z',
          meta: { k: 2 },
        });
      });
    });

    describe('update operators', () => {
      async function after(doc: Doc, update: Record<string, unknown>): Promise<Doc | null> {
        const c = store.collection(fresh('upd'));
        await c.insertOne(doc);
        await c.updateOne({ _id: doc._id }, update);
        return c.findOne({ _id: doc._id });
      }

      it('$set sets fields and creates the intermediate objects of dotted paths', async () => {
        expect(await after({ _id: 'a', x: 1, o: { p: 1 } }, { $set: { x: 2, 'o.q': 3, 'new.deep.field': 'v' } })).to.deep.equal({
          _id: 'a',
          x: 2,
          o: { p: 1, q: 3 },
          new: { deep: { field: 'v' } },
        });
      });

      it('$set on an array element by index', async () => {
        expect(await after({ _id: 'a', arr: [1, 2, 3] }, { $set: { 'arr.1': 9 } })).to.deep.equal({ _id: 'a', arr: [1, 9, 3] });
      });

      it('$unset removes top-level and nested fields and ignores missing ones', async () => {
        expect(await after({ _id: 'a', x: 1, o: { p: 1, q: 2 } }, { $unset: { x: '', 'o.p': '', missing: '', 'no.such.path': '' } })).to.deep.equal({
          _id: 'a',
          o: { q: 2 },
        });
      });

      it('$inc adds to numbers and sets missing fields to the increment', async () => {
        expect(await after({ _id: 'a', n: 5, o: { c: 1 } }, { $inc: { n: -2, m: 4, 'o.c': 10, 'p.q': 1 } })).to.deep.equal({
          _id: 'a',
          n: 3,
          o: { c: 11 },
          m: 4,
          p: { q: 1 },
        });
      });

      it('$min and $max replace only with a lower or higher value, and set missing fields', async () => {
        expect(await after({ _id: 'a', lo: 5, hi: 5, d: '2024-01-02' }, { $min: { lo: 3, d: '2024-01-01', m: 7 }, $max: { hi: 4, x: 1 } })).to.deep.equal({
          _id: 'a',
          lo: 3,
          hi: 5,
          d: '2024-01-01',
          m: 7,
          x: 1,
        });
        expect(await after({ _id: 'a', lo: 5, hi: 5 }, { $min: { lo: 8 }, $max: { hi: 9 } })).to.deep.equal({ _id: 'a', lo: 5, hi: 9 });
      });

      it('$push appends values, creates the array when missing, and honours $each with $slice', async () => {
        expect(await after({ _id: 'a', arr: [1] }, { $push: { arr: 2, fresh: { k: 1 } } })).to.deep.equal({ _id: 'a', arr: [1, 2], fresh: [{ k: 1 }] });
        expect(await after({ _id: 'a', arr: [1, 2, 3] }, { $push: { arr: { $each: [4, 5], $slice: -3 } } })).to.deep.equal({ _id: 'a', arr: [3, 4, 5] });
        expect(await after({ _id: 'a', arr: [1, 2, 3] }, { $push: { arr: { $each: [4], $slice: 2 } } })).to.deep.equal({ _id: 'a', arr: [1, 2] });
        expect(await after({ _id: 'a' }, { $push: { arr: { $each: [1, 2, 3], $slice: -2 } } })).to.deep.equal({ _id: 'a', arr: [2, 3] });
        expect(await after({ _id: 'a', arr: [1] }, { $push: { arr: [2, 3] } })).to.deep.equal({ _id: 'a', arr: [1, [2, 3]] });
      });

      it('$addToSet adds only missing values (documents compared deeply)', async () => {
        expect(await after({ _id: 'a', s: ['x'] }, { $addToSet: { s: 'x', t: 'y' } })).to.deep.equal({ _id: 'a', s: ['x'], t: ['y'] });
        expect(await after({ _id: 'a', s: ['x'] }, { $addToSet: { s: { $each: ['y', 'x', 'y', 'z'] } } })).to.deep.equal({ _id: 'a', s: ['x', 'y', 'z'] });
        expect(await after({ _id: 'a', s: [{ k: 1, v: [1] }] }, { $addToSet: { s: { k: 1, v: [1] } } })).to.deep.equal({ _id: 'a', s: [{ k: 1, v: [1] }] });
        expect(await after({ _id: 'a', s: [{ k: 1 }] }, { $addToSet: { s: { k: 2 } } })).to.deep.equal({ _id: 'a', s: [{ k: 1 }, { k: 2 }] });
      });

      it('$pull removes equal values, values in $in, and documents matching a condition', async () => {
        expect(await after({ _id: 'a', s: ['x', 'y', 'x'] }, { $pull: { s: 'x' } })).to.deep.equal({ _id: 'a', s: ['y'] });
        expect(await after({ _id: 'a', s: [1, 2, 3, 4] }, { $pull: { s: { $in: [2, 4] } } })).to.deep.equal({ _id: 'a', s: [1, 3] });
        expect(
          await after(
            {
              _id: 'a',
              items: [
                { sku: 'A', q: 1 },
                { sku: 'B', q: 2 },
                { sku: 'A', q: 3 },
              ],
            },
            { $pull: { items: { sku: 'A' } } },
          ),
        ).to.deep.equal({ _id: 'a', items: [{ sku: 'B', q: 2 }] });
        expect(await after({ _id: 'a', s: [1, 5, 9] }, { $pull: { s: { $gte: 5 } }, $set: { touched: true } })).to.deep.equal({
          _id: 'a',
          s: [1],
          touched: true,
        });
        expect(await after({ _id: 'a' }, { $pull: { s: 'x' } })).to.deep.equal({ _id: 'a' });
      });

      it('uses the positional $ operator with the filter that matched the array element', async () => {
        const c = store.collection(fresh());
        await c.insertOne({
          _id: 'a',
          items: [
            { sku: 'A', q: 1 },
            { sku: 'B', q: 2 },
          ],
        });
        await c.updateOne({ _id: 'a', 'items.sku': 'B' }, { $inc: { 'items.$.q': 5 } });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({
          _id: 'a',
          items: [
            { sku: 'A', q: 1 },
            { sku: 'B', q: 7 },
          ],
        });
      });

      it('$setOnInsert applies on an upsert that inserts and is ignored on an update', async () => {
        const c = store.collection(fresh());
        await c.updateOne({ _id: 'a' }, { $setOnInsert: { created: 1 }, $set: { v: 1 } }, { upsert: true });
        await c.updateOne({ _id: 'a' }, { $setOnInsert: { created: 2 }, $set: { v: 2 } }, { upsert: true });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', created: 1, v: 2 });
      });

      it('rejects an update that does not fit the document and leaves the document unchanged', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', s: 'text', n: 1 });
        await rejects(c.updateOne({ _id: 'a' }, { $set: { n: 2 }, $inc: { s: 1 } }));
        await rejects(c.updateOne({ _id: 'a' }, { $push: { s: 1 } }));
        await rejects(c.updateOne({ _id: 'a' }, { $set: { 's.x': 1 } }));
        await rejects(c.updateOne({ _id: 'a' }, { $set: { n: 1, 'n.x': 2 } }));
        await rejects(c.updateOne({ _id: 'a' }, { $set: { _id: 'b' } }));
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', s: 'text', n: 1 });
      });
    });

    describe('upserts', () => {
      it('seeds a new document with the _id and the equality fields of the filter', async () => {
        const c = store.collection(fresh());
        const r = await c.updateOne({ _id: 'u1', kind: 'post', 'meta.src': 'feed', n: { $gt: 3 } }, { $set: { v: 1 }, $inc: { hits: 1 } }, { upsert: true });
        expect(r).to.deep.equal({ matched: 0, modified: 0, upserted: true });
        expect(await c.findOne({ _id: 'u1' })).to.deep.equal({ _id: 'u1', kind: 'post', meta: { src: 'feed' }, v: 1, hits: 1 });
        const again = await c.updateOne({ _id: 'u1', kind: 'post' }, { $inc: { hits: 1 } }, { upsert: true });
        expect(again).to.deep.equal({ matched: 1, modified: 1, upserted: false });
        expect(await c.count()).to.equal(1);
      });

      it('gives an upserted document without _id in its filter a new string _id', async () => {
        const c = store.collection(fresh());
        await c.updateOne({ email: 'a@b.c' }, { $set: { n: 1 } }, { upsert: true });
        const doc = await c.findOne({ email: 'a@b.c' });
        expect(doc).to.not.equal(null);
        expect(doc?._id).to.be.a('string').with.length(24);
        expect(doc).to.deep.include({ email: 'a@b.c', n: 1 });
      });
    });

    describe('index hints', () => {
      it('answers find and count with the named index, with the same results as without it', async () => {
        const name = fresh('hint');
        await store.ensureCollection({
          name,
          indexes: [
            { name: 'by_room', keys: { room: 1, hidden: 1, seq: -1 } },
            { name: 'by_term', keys: { terms: 1, seq: -1 } },
          ],
        });
        const c = store.collection(name);
        for (let i = 0; i < 40; i++) await c.insertOne({ _id: `d${i}`, room: 'r', hidden: false, seq: i, terms: i % 10 === 0 ? ['rare', 'x'] : ['x'] });
        const filter = { $and: [{ terms: 'rare' }], hidden: false, room: 'r' };
        const options: FindOptions = { sort: { seq: -1 }, limit: 3 };
        const hinted = await c.find(filter, { ...options, hint: 'by_term' });
        expect(hinted.map((d) => d._id)).to.deep.equal(['d30', 'd20', 'd10']);
        expect(hinted).to.deep.equal(await c.find(filter, options));
        expect(await c.count(filter, { hint: 'by_term' })).to.equal(4);
        // A capped count stops at its limit (covered by the index, filtered on documents, or no filter).
        expect(await c.count(filter, { hint: 'by_term', limit: 3 })).to.equal(3);
        expect(await c.count(filter, { hint: 'by_term', limit: 10 })).to.equal(4);
        expect(await c.count({ terms: 'x' }, { limit: 25 })).to.equal(25);
        expect(await c.count({ terms: 'rare' }, { hint: 'by_term', limit: 2 })).to.equal(2);
        expect(await c.count({}, { limit: 7 })).to.equal(7);
        const plan = await c.explain(filter, { ...options, hint: 'by_term' });
        expect(plan.index).to.equal('by_term');
        expect(plan.examined).to.be.at.most(4);
      });

      it('refuses a hint that names no index', async () => {
        const name = await seeded([{ _id: 'a', n: 1 }]);
        let refused = false;
        await store
          .collection(name)
          .find({ n: 1 }, { hint: 'no_such_index' })
          .catch(() => (refused = true));
        expect(refused).to.equal(true);
      });
    });

    describe('$all on a multikey indexed field (index intersection in memory)', () => {
      const TAGS = ['a', 'b', 'c', 'd'];
      /** 40 documents: tags from TAGS (some empty, scalar, missing, or holding a value twice), seqs not in _id order. */
      const docs: Doc[] = Array.from({ length: 40 }, (_, i) => {
        const seq = (i * 17) % 40;
        const tags = TAGS.filter((_, t) => (i >> t) % 2 === 1 || (i + t) % 5 === 0);
        const doc: Doc = { _id: `d${String(i).padStart(2, '0')}`, seq, cat: i % 3 };
        if (i === 3) doc.tags = 'a';
        else if (i === 5) doc.tags = [];
        else if (i === 6) doc.tags = ['a', 'b', 'a', 'b'];
        else if (i !== 7) doc.tags = tags;
        return doc;
      });
      /** MongoDB's `$all` of two or more distinct values: an array holding each. */
      const holdsAll = (d: Doc, values: string[]) => Array.isArray(d.tags) && values.every((v) => (d.tags as string[]).includes(v));
      const expected = (values: string[], cat: number | null, dir: 1 | -1) =>
        docs
          .filter((d) => holdsAll(d, values) && (cat === null || d.cat === cat))
          .sort((x, y) => ((x.seq as number) - (y.seq as number)) * dir)
          .map((d) => d._id);
      let name: string;

      before(async () => {
        name = fresh('all');
        await store.ensureCollection({ name, indexes: [{ name: 'by_tag', keys: { tags: 1, seq: -1 } }] });
        for (const d of docs) await store.collection(name).insertOne(d);
      });

      it('finds the documents holding every value, sorted either way, with skip and limit, hinted or not', async () => {
        const c = store.collection(name);
        expect(expected(['a', 'b'], null, -1))
          .to.include('d06')
          .and.not.include('d03');
        for (const values of [
          ['a', 'b'],
          ['b', 'a'],
          ['a', 'b', 'c'],
          ['c', 'd'],
          ['a', 'b', 'c', 'd'],
        ]) {
          for (const dir of [-1, 1] as const) {
            const all = expected(values, null, dir);
            expect(all.length, values.join()).to.be.greaterThan(0);
            for (const hint of ['by_tag', undefined]) {
              const base: FindOptions = { sort: { seq: dir }, ...(hint === undefined ? {} : { hint }) };
              expect(await ids(name, { tags: { $all: values } }, base), `${values} ${dir}`).to.deep.equal(all);
              expect(await ids(name, { tags: { $all: values } }, { ...base, skip: 1, limit: 2 })).to.deep.equal(all.slice(1, 3));
              expect(await ids(name, { tags: { $all: values } }, { ...base, skip: all.length })).to.deep.equal([]);
              expect(await ids(name, { tags: { $all: values } }, { ...base, limit: 1 })).to.deep.equal(all.slice(0, 1));
            }
          }
          expect((await c.find({ tags: { $all: values } }, { hint: 'by_tag' })).map((d) => d._id).sort()).to.deep.equal(expected(values, null, 1).sort());
        }
        expect((await c.explain({ tags: { $all: ['a', 'b'] } }, { sort: { seq: -1 }, hint: 'by_tag' })).index).to.equal('by_tag');
      });

      it('tests the other fields of the filter on the documents holding every value', async () => {
        for (const cat of [0, 1, 2]) {
          for (const dir of [-1, 1] as const) {
            const all = expected(['a', 'b'], cat, dir);
            const filter = { tags: { $all: ['a', 'b'] }, cat };
            expect(await ids(name, filter, { sort: { seq: dir }, hint: 'by_tag' }), `cat ${cat}`).to.deep.equal(all);
            expect(await ids(name, filter, { sort: { seq: dir }, skip: 1, limit: 1, hint: 'by_tag' })).to.deep.equal(all.slice(1, 2));
            expect(await ids(name, { ...filter, seq: { $lt: 20 } }, { sort: { seq: dir }, hint: 'by_tag' })).to.deep.equal(
              all.filter((id) => (docs.find((d) => d._id === id)?.seq as number) < 20),
            );
          }
          expect(await store.collection(name).count({ tags: { $all: ['a', 'b'] }, cat }, { hint: 'by_tag' })).to.equal(expected(['a', 'b'], cat, 1).length);
        }
      });

      it('counts, with and without a limit, the documents holding every value', async () => {
        const c = store.collection(name);
        const n = expected(['a', 'b'], null, 1).length;
        expect(n).to.be.greaterThan(3);
        expect(await c.count({ tags: { $all: ['a', 'b'] } }, { hint: 'by_tag' })).to.equal(n);
        expect(await c.count({ tags: { $all: ['a', 'b'] } })).to.equal(n);
        expect(await c.count({ tags: { $all: ['a', 'b'] } }, { hint: 'by_tag', limit: 3 })).to.equal(3);
        expect(await c.count({ tags: { $all: ['a', 'b'] } }, { hint: 'by_tag', limit: n + 5 })).to.equal(n);
        expect(await c.count({ tags: { $all: ['a', 'b'] }, cat: 1 }, { hint: 'by_tag', limit: 1 })).to.equal(Math.min(1, expected(['a', 'b'], 1, 1).length));
      });

      it('ignores duplicates in the $all list, and matches nothing when a value is held by no document', async () => {
        const c = store.collection(name);
        const opts: FindOptions = { sort: { seq: -1 }, hint: 'by_tag' };
        expect(await ids(name, { tags: { $all: ['a', 'b', 'a'] } }, opts)).to.deep.equal(expected(['a', 'b'], null, -1));
        expect(await ids(name, { tags: { $all: ['b', 'a', 'b', 'a'] } }, { ...opts, sort: { seq: 1 } })).to.deep.equal(expected(['a', 'b'], null, 1));
        expect(await c.count({ tags: { $all: ['a', 'b', 'b'] } }, { hint: 'by_tag' })).to.equal(expected(['a', 'b'], null, 1).length);
        expect(await ids(name, { tags: { $all: ['a', 'zzz'] } }, opts)).to.deep.equal([]);
        expect(await ids(name, { tags: { $all: ['zzz', 'a', 'b'] } }, opts)).to.deep.equal([]);
        expect(await c.count({ tags: { $all: ['a', 'zzz'] } }, { hint: 'by_tag' })).to.equal(0);
        expect(await c.count({ tags: { $all: ['a', 'zzz'] } }, { hint: 'by_tag', limit: 5 })).to.equal(0);
      });

      it('finds a document holding a value twice in its array once', async () => {
        const found = await ids(name, { tags: { $all: ['a', 'b'] } }, { sort: { seq: -1 }, hint: 'by_tag' });
        expect(found.filter((id) => id === 'd06')).to.have.length(1);
        expect(await ids(name, { tags: { $all: ['b', 'a'] }, cat: 0 }, { sort: { seq: 1 }, hint: 'by_tag' })).to.include('d06');
      });
    });

    describe('unique indexes', () => {
      async function withUnique(): Promise<string> {
        const name = fresh('uniq');
        await store.ensureCollection({
          name,
          indexes: [
            { name: 'handle_1', keys: { handle: 1 }, unique: true },
            { name: 'owner_slot', keys: { owner: 1, slot: 1 }, unique: true },
            { name: 'score_-1', keys: { score: -1 } },
          ],
        });
        return name;
      }

      it('creates the declared indexes idempotently', async () => {
        const name = await withUnique();
        await store.ensureCollection({ name, indexes: [{ name: 'handle_1', keys: { handle: 1 }, unique: true }] });
        expect(await store.listCollections()).to.include(name);
        expect(await store.collection(name).count()).to.equal(0);
      });

      it('refuses an insert that repeats a unique value, and keeps the store unchanged', async () => {
        const name = await withUnique();
        const c = store.collection(name);
        await c.insertOne({ _id: 'a', handle: 'neo', owner: 'o', slot: 1 });
        expect(await rejects(c.insertOne({ _id: 'b', handle: 'neo', owner: 'o', slot: 2 }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejects(c.insertOne({ _id: 'c', handle: 'trinity', owner: 'o', slot: 1 }))).to.be.instanceOf(DuplicateKeyError);
        await c.insertOne({ _id: 'd', handle: 'trinity', owner: 'o', slot: 2 });
        expect(await ids(name, {})).to.deep.equal(['a', 'd']);
        expect(await ids(name, { handle: 'trinity' })).to.deep.equal(['d']);
        expect(await ids(name, { owner: 'o', slot: 2 })).to.deep.equal(['d']);
      });

      it('refuses an update and an upsert that would repeat a unique value, leaving documents unchanged', async () => {
        const name = await withUnique();
        const c = store.collection(name);
        await c.insertOne({ _id: 'a', handle: 'neo', owner: 'o', slot: 1 });
        await c.insertOne({ _id: 'b', handle: 'smith', owner: 'o', slot: 2 });
        expect(await rejects(c.updateOne({ _id: 'b' }, { $set: { handle: 'neo', x: 1 } }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejects(c.updateOne({ _id: 'z' }, { $set: { handle: 'neo' } }, { upsert: true }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejects(c.applyAt('y', 1, { $set: { handle: 'smith' } }))).to.be.instanceOf(DuplicateKeyError);
        expect(await c.findOne({ _id: 'b' })).to.deep.equal({ _id: 'b', handle: 'smith', owner: 'o', slot: 2 });
        expect(await ids(name, { handle: 'neo' })).to.deep.equal(['a']);
        expect(await c.count()).to.equal(2);
        await c.updateOne({ _id: 'b' }, { $set: { handle: 'morpheus' } });
        await c.insertOne({ _id: 'c', handle: 'smith', owner: 'p', slot: 1 });
        expect(await ids(name, { handle: { $in: ['smith', 'morpheus'] } })).to.deep.equal(['b', 'c']);
      });

      it('treats a missing unique field as null: a second document without it is a duplicate', async () => {
        const name = await withUnique();
        const c = store.collection(name);
        await c.insertOne({ _id: 'a', owner: 'o', slot: 1 });
        expect(await rejects(c.insertOne({ _id: 'b', owner: 'o', slot: 2 }))).to.be.instanceOf(DuplicateKeyError);
      });
    });

    describe('applyAt (the idempotent projection write)', () => {
      it('upserts a missing document and records the position', async () => {
        const c = store.collection(fresh());
        expect(await c.applyAt('a', 10, { $set: { name: 'x' }, $inc: { n: 1 } })).to.equal(true);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', name: 'x', n: 1, _pos: 10 });
      });

      it('skips an older or equal position and applies a newer one', async () => {
        const c = store.collection(fresh());
        await c.applyAt('a', 10, { $inc: { n: 1 } });
        expect(await c.applyAt('a', 10, { $inc: { n: 1 } })).to.equal(false);
        expect(await c.applyAt('a', 7, { $inc: { n: 1 }, $set: { old: true } })).to.equal(false);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', n: 1, _pos: 10 });
        expect(await c.applyAt('a', 11, { $inc: { n: 1 }, $push: { log: 'e11' } })).to.equal(true);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', n: 2, log: ['e11'], _pos: 11 });
      });

      it('applies to a document that has no position yet', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', n: 1 });
        expect(await c.applyAt('a', 3, { $inc: { n: 1 } })).to.equal(true);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', n: 2, _pos: 3 });
      });

      it('applies $setOnInsert only when the document is created', async () => {
        const c = store.collection(fresh());
        await c.applyAt('a', 1, { $setOnInsert: { created_at: 't1' }, $set: { v: 1 } });
        await c.applyAt('a', 2, { $setOnInsert: { created_at: 't2' }, $set: { v: 2 } });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', created_at: 't1', v: 2, _pos: 2 });
      });

      it('gives the same document when a sequence of events is delivered twice', async () => {
        const c = store.collection(fresh());
        const events: Array<[number, Record<string, unknown>]> = [
          [1, { $set: { title: 't' }, $setOnInsert: { votes: 0 } }],
          [2, { $inc: { votes: 1 }, $addToSet: { voters: 'u1' } }],
          [3, { $inc: { votes: 1 }, $addToSet: { voters: 'u2' } }],
          [4, { $inc: { votes: -1 }, $pull: { voters: 'u1' } }],
        ];
        for (const [p, u] of events) await c.applyAt('p', p, u);
        const once = await c.findOne({ _id: 'p' });
        for (const [p, u] of events) expect(await c.applyAt('p', p, u)).to.equal(false);
        expect(await c.findOne({ _id: 'p' })).to.deep.equal(once);
        expect(once).to.deep.equal({ _id: 'p', title: 't', votes: 1, voters: ['u2'], _pos: 4 });
      });
    });

    describe('collections', () => {
      it('lists, drops (also a missing one) and recreates collections', async () => {
        const name = await seeded([{ _id: 'a' }]);
        expect(await store.listCollections()).to.include(name);
        await store.dropCollection(name);
        expect(await store.listCollections()).to.not.include(name);
        expect(await store.collection(name).find({})).to.deep.equal([]);
        await store.dropCollection(fresh('never'));
        await store.collection(name).insertOne({ _id: 'b' });
        expect(await ids(name, {})).to.deep.equal(['b']);
      });

      it('swaps rebuilt collections in, replacing the targets, with their indexes', async () => {
        const liveA = await seeded([{ _id: 'old-a' }]);
        const liveB = await seeded([{ _id: 'old-b' }]);
        const newA = fresh('rebuild');
        const newB = fresh('rebuild');
        await store.ensureCollection({ name: newA, indexes: [{ name: 'handle_1', keys: { handle: 1 }, unique: true }] });
        await store.collection(newA).insertOne({ _id: 'new-a', handle: 'h' });
        await store.collection(newB).insertOne({ _id: 'new-b' });
        await store.swapCollections([
          [newA, liveA],
          [newB, liveB],
        ]);
        expect(await ids(liveA, {})).to.deep.equal(['new-a']);
        expect(await ids(liveB, {})).to.deep.equal(['new-b']);
        const names = await store.listCollections();
        expect(names).to.include.members([liveA, liveB]);
        expect(names).to.not.include(newA);
        expect(names).to.not.include(newB);
        expect(await rejects(store.collection(liveA).insertOne({ _id: 'x', handle: 'h' }))).to.be.instanceOf(DuplicateKeyError);
      });

      it('swaps into a target name that does not exist yet', async () => {
        const from = await seeded([{ _id: 'a' }]);
        const to = fresh('target');
        await store.swapCollections([[from, to]]);
        expect(await ids(to, {})).to.deep.equal(['a']);
        expect(await store.listCollections()).to.not.include(from);
      });
    });

    describe('isolation', () => {
      it('returns copies: mutating a result does not change the store', async () => {
        const c = store.collection(fresh());
        await c.insertOne({ _id: 'a', tags: ['x'], o: { k: 1 } });
        const one = await c.findOne({ _id: 'a' });
        (one?.tags as string[]).push('y');
        (one?.o as Record<string, unknown>).k = 2;
        const [many] = await c.find({ _id: 'a' });
        (many.tags as string[]).push('z');
        const projected = await c.findOne({ _id: 'a' }, { projection: { o: 1 } });
        (projected?.o as Record<string, unknown>).k = 3;
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', tags: ['x'], o: { k: 1 } });
      });

      it('copies what it stores: later changes to an inserted or $set object do not leak in', async () => {
        const c = store.collection(fresh());
        const doc = { _id: 'a', tags: ['x'] };
        await c.insertOne(doc);
        doc.tags.push('y');
        const value = { k: [1] };
        await c.updateOne({ _id: 'a' }, { $set: { v: value }, $push: { list: value } });
        value.k.push(2);
        await c.updateOne({ _id: 'a' }, { $push: { 'v.k': 3 } });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', tags: ['x'], v: { k: [1, 3] }, list: [{ k: [1] }] });
      });
    });

    describe('checksum', () => {
      it('is equal for equal content whatever the insertion and field order, and differs otherwise', async () => {
        const a = await seeded([
          { _id: '2', x: 1, o: { p: 1, q: [1, { r: 2, s: 3 }] } },
          { _id: '1', y: 'z' },
        ]);
        const b = await seeded([
          { _id: '1', y: 'z' },
          { _id: '2', o: { q: [1, { s: 3, r: 2 }], p: 1 }, x: 1 },
        ]);
        const ca = await collectionChecksum(store, a);
        expect(ca.count).to.equal(2);
        expect(ca.sha256).to.match(/^[0-9a-f]{64}$/);
        expect(await collectionChecksum(store, b)).to.deep.equal(ca);
        await store.collection(b).updateOne({ _id: '2' }, { $set: { 'o.p': 2 } });
        expect((await collectionChecksum(store, b)).sha256).to.not.equal(ca.sha256);
      });
    });

    // The projector lease (projections/leases.ts) is one conditional upsert: its compare-and-set
    // must hold on every adapter, MongoDB above all.
    describe('leases (conditional upsert as compare-and-set)', () => {
      it('gives a free lease to one owner, refuses it to another until it expires, then hands it over', async () => {
        const clock = new ManualClock('2026-05-01T00:00:00.000Z');
        const name = fresh('lease');
        const a = new Lease(store, name, 'projector-a', 30_000, clock);
        const b = new Lease(store, name, 'projector-b', 30_000, clock);
        expect(await a.acquire()).to.equal(true);
        expect(await b.acquire()).to.equal(false);
        clock.advance(20_000);
        expect(await a.acquire()).to.equal(true);
        clock.advance(29_999);
        expect(await b.acquire()).to.equal(false);
        expect(await a.holder()).to.deep.equal({ owner: 'projector-a', expires_at: Date.parse('2026-05-01T00:00:50.000Z') });
        clock.advance(1);
        expect(await b.acquire()).to.equal(true);
        expect(await a.acquire()).to.equal(false);
        expect((await b.holder())?.owner).to.equal('projector-b');
      });

      it('lets exactly one of many simultaneous claimants take a free or expired lease', async () => {
        const clock = new ManualClock('2026-05-01T00:00:00.000Z');
        const name = fresh('lease');
        const claimants = Array.from({ length: 8 }, (_, i) => new Lease(store, name, `p${i}`, 10_000, clock));
        expect((await Promise.all(claimants.map((l) => l.acquire()))).filter(Boolean)).to.have.length(1);
        clock.advance(10_000);
        expect((await Promise.all(claimants.map((l) => l.acquire()))).filter(Boolean)).to.have.length(1);
      });

      it('releases only its own lease', async () => {
        const clock = new ManualClock('2026-05-01T00:00:00.000Z');
        const name = fresh('lease');
        const a = new Lease(store, name, 'a', 10_000, clock);
        const b = new Lease(store, name, 'b', 10_000, clock);
        expect(await a.acquire()).to.equal(true);
        await b.release();
        expect((await a.holder())?.owner).to.equal('a');
        await a.release();
        expect(await a.holder()).to.equal(null);
        expect(await b.acquire()).to.equal(true);
      });
    });
  });
}
