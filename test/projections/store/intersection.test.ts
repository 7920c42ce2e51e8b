// The memory store's index intersection (AND_SORTED) for `$all` on a multikey index's first field,
// checked against the plan it replaces (one value's range, every document tested) and against
// mingo over all documents, on random documents and filters; and what it examines (explain).
import { expect } from 'chai';
import { Query } from 'mingo';
import { MemoryReadStore } from '../../../projections/store/memory.ts';
import { SqliteReadStore } from '../../../projections/store/sqlite.ts';
import type { Collection, Doc, Filter, FindOptions, ReadStore } from '../../../projections/store/port.ts';
import { rng } from '../../helpers/random.ts';

/** Tag values: a few common, some rare, of three types (the index orders types apart). */
const VOCAB: Array<string | number | boolean> = ['a', 'a', 'a', 'b', 'b', 'c', 'd', 'e', 'rare', 1, 2, true];

// The SQLite store runs the same engine over tables: its index walks (sqlite/tree.ts) answer alike.
const STORES: Array<[kind: string, open: () => ReadStore]> = [
  ['memory', () => new MemoryReadStore()],
  ['sqlite', () => new SqliteReadStore(':memory:', { cachedDocs: 64 })],
];

for (const [kind, open] of STORES) {
  describe(`${kind} store: index intersection for $all`, () => {
    it('answers like the single-range plan and like mingo, on random documents, filters and writes', async () => {
      const random = rng(20260311);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
      const store = open();
      await store.ensureCollection({
        name: 'x',
        indexes: [
          { name: 'by_tag', keys: { tags: 1, seq: -1 } },
          { name: 'by_cat', keys: { cat: 1 } },
        ],
      });
      const c = store.collection('x');
      const randomDoc = (i: number): Doc => {
        const doc: Doc = { _id: `d${String(i).padStart(4, '0')}`, seq: Math.floor(random() * 400), cat: Math.floor(random() * 3) };
        const r = random();
        if (r < 0.05) return doc; // no tags
        if (r < 0.1)
          doc.tags = pick(VOCAB); // a scalar
        else doc.tags = Array.from({ length: Math.floor(random() * 6) }, () => pick(VOCAB)); // duplicates too
        return doc;
      };
      for (let i = 0; i < 1200; i++) await c.insertOne(randomDoc(i));
      let next = 1200;
      let intersected = 0;

      for (let round = 0; round < 400; round++) {
        // Some writes between the queries: the trees change under later walks.
        for (let w = 0; w < 3; w++) {
          const id = `d${String(Math.floor(random() * next)).padStart(4, '0')}`;
          const r = random();
          if (r < 0.4) await c.updateOne({ _id: id }, { $set: { tags: randomDoc(0).tags ?? [], seq: Math.floor(random() * 400) } });
          else if (r < 0.7) await c.deleteOne({ _id: id });
          else await c.insertOne(randomDoc(next++));
        }
        const values = Array.from({ length: 2 + Math.floor(random() * 3) }, () => (random() < 0.05 ? 'none' : pick(VOCAB)));
        const filter: Filter = { tags: { $all: values } };
        if (random() < 0.3) filter.cat = Math.floor(random() * 3);
        if (random() < 0.2) filter.seq = random() < 0.5 ? { $lt: Math.floor(random() * 400) } : { $gte: Math.floor(random() * 400) };
        const dir = random() < 0.5 ? -1 : 1;
        const options: FindOptions = { sort: { seq: dir }, hint: 'by_tag' };
        if (random() < 0.4) options.skip = Math.floor(random() * 5);
        if (random() < 0.6) options.limit = 1 + Math.floor(random() * 8);
        // The same filter the planner cannot intersect: the first value's range, each document tested.
        const single: Filter = { $and: [{ tags: values[0] }, filter] };
        const label = JSON.stringify([filter, options]);

        const plan = await c.explain(filter, options);
        const distinct = new Set(values).size;
        if (distinct >= 2) {
          expect(plan, label).to.include({ index: 'by_tag', stage: 'AND_SORTED' });
          intersected++;
        }
        const got = await c.find(filter, options);
        const viaSingle = await c.find(single, options);
        // The same documents in the same order; with one distinct value (no intersection: a plan
        // without the index, ties in _id order) the same order of seq.
        const sameAs = (want: Doc[]) =>
          distinct >= 2
            ? expect(ids(got), label).to.deep.equal(ids(want))
            : expect(
                got.map((d) => d.seq),
                label,
              ).to.deep.equal(want.map((d) => d.seq));
        sameAs(viaSingle);
        // mingo over every document, sorted as the index orders ties (_id ascending, reversed with the walk).
        const all = await everything(c);
        const query = new Query(filter);
        const want = all.filter((d) => query.test(d)).sort((x, y) => ((x.seq as number) - (y.seq as number)) * dir || (x._id < y._id ? 1 : -1) * dir);
        const skip = options.skip ?? 0;
        const page = want.slice(skip, options.limit === undefined ? undefined : skip + options.limit);
        sameAs(page);
        // Counts, whole and capped, and the documents examined: only those holding every value.
        const limit = 1 + Math.floor(random() * 10);
        expect(await c.count(filter, { hint: 'by_tag' }), label).to.equal(want.length);
        expect(await c.count(filter, { hint: 'by_tag', limit }), label).to.equal(Math.min(limit, want.length));
        if (distinct >= 2) {
          const holds = new Query({ tags: { $all: values } });
          const holding = all.filter((d) => holds.test(d)).length;
          expect(plan.examined, label).to.be.at.most(holding);
        }
      }
      expect(intersected).to.be.greaterThan(300);
    });

    describe('explain', () => {
      let c: Collection;
      before(async () => {
        const store = open();
        await store.ensureCollection({ name: 'x', indexes: [{ name: 'by_tag', keys: { tags: 1, seq: -1 } }] });
        c = store.collection('x');
        // 'p' in every 3rd document, 'q' in the others, both in every 100th (30 documents).
        for (let i = 0; i < 3000; i++) {
          const tags = i % 3 === 0 ? ['p'] : ['q'];
          if (i % 100 === 0) tags.push(i % 3 === 0 ? 'q' : 'p');
          await c.insertOne({ _id: `d${i}`, seq: i, tags });
        }
      });

      it('examines no document when no document holds every value, for the page and the count', async () => {
        for (const sort of [{ seq: -1 as const }, { seq: 1 as const }]) {
          const plan = await c.explain({ tags: { $all: ['p', 'none'] } }, { sort, limit: 21, hint: 'by_tag' });
          expect(plan).to.deep.include({ index: 'by_tag', examined: 0, stage: 'AND_SORTED' });
          // The walk seeks past the other value's entries: a handful of entries read, not its range.
          expect(plan.keysExamined).to.be.at.most(4);
        }
        const disjoint = { tags: { $all: ['p', 'q', 'r'] } };
        expect(await c.explain(disjoint, { sort: { seq: -1 }, limit: 21, hint: 'by_tag' })).to.deep.include({ examined: 0, stage: 'AND_SORTED' });
        expect(await c.count(disjoint, { hint: 'by_tag', limit: 1001 })).to.equal(0);
      });

      it('fetches only the documents of the page, and none to count a filter the intersection covers', async () => {
        const filter = { tags: { $all: ['q', 'p'] } };
        const page = await c.explain(filter, { sort: { seq: -1 }, limit: 5, hint: 'by_tag' });
        expect(page).to.deep.include({ index: 'by_tag', examined: 5 });
        expect(ids(await c.find(filter, { sort: { seq: -1 }, limit: 5, hint: 'by_tag' }))).to.deep.equal(['d2900', 'd2800', 'd2700', 'd2600', 'd2500']);
        expect(await c.count(filter, { hint: 'by_tag' })).to.equal(30);
        // With another field, each document holding both values is tested, and only those.
        const other = await c.explain({ ...filter, seq: { $gte: 0 }, missing: null }, { sort: { seq: 1 }, hint: 'by_tag' });
        expect(other).to.deep.include({ index: 'by_tag', examined: 30, stage: 'AND_SORTED' });
      });

      it('keeps the single-range plan for one distinct value and for a sort the index does not give', async () => {
        expect((await c.explain({ tags: { $all: ['p', 'p'] } }, { sort: { seq: -1 }, hint: 'by_tag' })).stage).to.equal(undefined);
        expect((await c.explain({ tags: { $all: ['p', 'q'] } }, { sort: { _id: 1 }, hint: 'by_tag' })).stage).to.equal(undefined);
        expect(await c.count({ tags: { $all: ['p', 'q'] } }, { hint: 'by_tag' })).to.equal(30);
      });
    });
  });
}

const ids = (docs: Doc[]) => docs.map((d) => d._id);

async function everything(c: Collection): Promise<Doc[]> {
  return c.find({});
}
