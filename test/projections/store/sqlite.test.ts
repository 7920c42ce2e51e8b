// The SQLite read store: the read-store contract, and what it adds: documents, indexes and their
// multikey flags kept in the file across a reopen, writes durable only once committed, renames.
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '../../../projections/store/sqlite.ts';
import { readStoreContract } from './contract.ts';

/** Edits the file of a closed store behind its back (a corrupted file). */
function tamper(path: string, edit: (db: Database.Database, docTable: string) => void): void {
  const db = new Database(path);
  try {
    const docTable = db.prepare<[], string>("SELECT doc_table FROM _collections WHERE name = 'c'").pluck().get();
    expect(docTable).to.be.a('string');
    edit(db, String(docTable));
  } finally {
    db.close();
  }
}

/** Reads the file of a store (open or closed) on a read-only connection of its own. */
function withFile<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The index metadata `_collections` holds for collection `c`. */
function storedIndexes(db: Database.Database): Array<{ table: string; deferred?: boolean }> {
  return JSON.parse(String(db.prepare<[], string>("SELECT indexes FROM _collections WHERE name = 'c'").pluck().get())) as Array<{
    table: string;
    deferred?: boolean;
  }>;
}

function tempPath(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
  return { path: join(dir, 'read-models.sqlite'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

readStoreContract('sqlite', async () => {
  const { path, cleanup } = tempPath();
  // A small document cache, so that reads go to the tables too.
  const store = new SqliteReadStore(path, { cachedDocs: 16 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      cleanup();
    },
  };
});

describe('sqlite read store: the file', () => {
  let path: string;
  let cleanup: () => void;
  beforeEach(() => ({ path, cleanup } = tempPath()));
  afterEach(() => cleanup());

  it('keeps documents, indexes and multikey flags across a clean reopen', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'tagged', indexes: [{ name: 'by_tag', keys: { tags: 1, seq: -1 } }] });
    const posts = a.collection('tagged');
    for (let i = 0; i < 50; i++) await posts.applyAt(`p${i}`, i + 1, { $set: { seq: i, tags: i % 2 === 0 ? ['x', 'y'] : ['y'] } });
    await a.close();

    const b = new SqliteReadStore(path);
    const reopened = b.collection('tagged');
    expect(await reopened.count()).to.equal(50);
    const xs = await reopened.find({ tags: 'x' }, { sort: { seq: -1 }, limit: 3 });
    expect(xs.map((d) => d._id)).to.deep.equal(['p48', 'p46', 'p44']);
    expect((await reopened.explain({ tags: 'x' }, { sort: { seq: -1 } })).index).to.equal('by_tag');
    // Multikey: a document listed under two tags is found once.
    expect(await reopened.count({ tags: { $in: ['x', 'y'] } })).to.equal(50);
    expect(await reopened.applyAt('p3', 4, { $set: { seq: 1000 } })).to.equal(false);
    await b.close();
  });

  it('loses writes after the last commit when the process dies, and keeps those before', async () => {
    const a = new SqliteReadStore(path);
    const c = a.collection('c');
    await c.applyAt('kept', 1, { $set: { v: 1 } });
    a.commit();
    await c.applyAt('lost', 2, { $set: { v: 2 } });
    await c.applyAt('kept', 3, { $set: { v: 3 } });
    // Another connection sees the file as a restart after a kill -9 would: the open transaction is not in it.
    const b = new SqliteReadStore(path);
    expect(await b.collection('c').find({})).to.deep.equal([{ _id: 'kept', v: 1, _pos: 1 }]);
    await b.close();
    // Reads on the writer's connection see its open transaction.
    expect(await c.count()).to.equal(2);
    await a.close();
  });

  it('groups the batches the runner reports into one commit per groupCommitMs', async () => {
    let now = 1_000_000;
    const a = new SqliteReadStore(path, { groupCommitMs: 250, now: () => now });
    const c = a.collection('c');
    const seenByRestart = async () => {
      const b = new SqliteReadStore(path);
      const ids = (await b.collection('c').find({})).map((d) => d._id);
      await b.close();
      return ids;
    };
    await c.applyAt('first', 1, { $set: { v: 1 } });
    a.checkpointed();
    expect(await seenByRestart()).to.deep.equal(['first']);
    // Within the group: left for the next commit (which writes both documents once).
    now += 100;
    await c.applyAt('second', 2, { $set: { v: 2 } });
    a.checkpointed();
    expect(await seenByRestart()).to.deep.equal(['first']);
    now += 150;
    await c.applyAt('third', 3, { $set: { v: 3 } });
    a.checkpointed();
    expect(await seenByRestart()).to.deep.equal(['first', 'second', 'third']);
    await a.close();
  });

  it('stores JSON-exact documents as JSON text, and keeps the types of the others', async () => {
    const a = new SqliteReadStore(path);
    const c = a.collection('c');
    const at = new Date('2026-01-02T03:04:05.006Z');
    await c.insertOne({ _id: 'plain', n: 1.5, s: 'x', list: [1, 'two', null, { deep: [true] }], nested: { k: null } });
    await c.insertOne({ _id: 'dated', at });
    await c.insertOne({ _id: 'negative-zero', z: -0 });
    await c.insertOne({ _id: 'pattern', re: /x+/i });
    await a.close();

    const kinds = withFile(path, (raw) => {
      const table = raw.prepare<[], string>("SELECT doc_table FROM _collections WHERE name = 'c'").pluck().get();
      return raw.prepare<[], { id: string; kind: string }>(`SELECT id, typeof(doc) AS kind FROM "${String(table)}" ORDER BY rid`).all();
    });
    expect(kinds).to.deep.equal([
      { id: 'plain', kind: 'text' },
      { id: 'dated', kind: 'blob' },
      { id: 'negative-zero', kind: 'blob' },
      { id: 'pattern', kind: 'blob' },
    ]);

    const b = new SqliteReadStore(path, { cachedDocs: 1 });
    const r = b.collection('c');
    expect(await r.findOne({ _id: 'plain' })).to.deep.equal({ _id: 'plain', n: 1.5, s: 'x', list: [1, 'two', null, { deep: [true] }], nested: { k: null } });
    const dated = await r.findOne({ _id: 'dated' });
    expect(dated?.at).to.be.instanceOf(Date);
    expect(dated?.at).to.deep.equal(at);
    expect(Object.is((await r.findOne({ _id: 'negative-zero' }))?.z, -0)).to.equal(true);
    expect(String((await r.findOne({ _id: 'pattern' }))?.re)).to.equal('/x+/i');
    await b.close();
  });

  it('finishes a bulk load that a crash cut short: its deferred indexes are built on the next start', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'c', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    a.deferIndexes(['c']);
    const c = a.collection('c');
    for (let i = 0; i < 30; i++) await c.applyAt(`d${i}`, i + 1, { $set: { v: i % 3 } });
    a.commit();
    // The process dies here (a is never closed): a restart sees the committed file.
    const stored = () => withFile(path, storedIndexes);
    expect(stored()[0].deferred).to.equal(true);
    const b = new SqliteReadStore(path);
    b.buildIndexes(['c']);
    b.commit();
    expect(stored()[0].deferred).to.equal(undefined);
    const reopened = b.collection('c');
    expect((await reopened.explain({ v: 2 })).index).to.equal('by_v');
    expect((await reopened.find({ v: 2 }, { sort: { _id: 1 } })).map((d) => d._id)).to.deep.equal([
      'd11',
      'd14',
      'd17',
      'd2',
      'd20',
      'd23',
      'd26',
      'd29',
      'd5',
      'd8',
    ]);
    await b.close();
  });

  it('answers a query from a deferred index as soon as it is asked, and records the index as built', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'c', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    a.deferIndexes(['c']);
    for (let i = 0; i < 10; i++) await a.collection('c').applyAt(`d${i}`, i + 1, { $set: { v: i } });
    expect(await a.collection('c').count({ v: { $gte: 5 } })).to.equal(5);
    await a.close();
    const b = new SqliteReadStore(path);
    expect((await b.collection('c').explain({ v: 7 })).index).to.equal('by_v');
    expect(await b.collection('c').count({ v: { $gte: 5 } })).to.equal(5);
    await b.close();
  });

  it('does not defer the indexes of a collection that holds documents', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'c', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    await a.collection('c').insertOne({ _id: 'x', v: 1 });
    a.deferIndexes(['c']);
    await a.collection('c').insertOne({ _id: 'y', v: 2 });
    await a.close();
    const [meta, entries] = withFile(path, (raw) => {
      const indexes = storedIndexes(raw);
      return [indexes, raw.prepare<[], number>(`SELECT count(*) FROM "${indexes[0].table}"`).pluck().get()] as const;
    });
    expect(meta[0].deferred).to.equal(undefined);
    expect(entries).to.equal(2);
  });

  it('swaps collections atomically and durably', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'live', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    await a.ensureCollection({ name: '_rebuild_live', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    await a.collection('live').insertOne({ _id: 'old', v: 1 });
    await a.collection('_rebuild_live').insertOne({ _id: 'new', v: 2 });
    await a.swapCollections([['_rebuild_live', 'live']]);
    expect(await a.listCollections()).to.deep.equal(['live']);
    const b = new SqliteReadStore(path);
    expect(await b.collection('live').find({ v: { $gte: 0 } })).to.deep.equal([{ _id: 'new', v: 2 }]);
    await b.close();
    await a.close();
  });

  it('refuses a stored document that is not one, and index metadata that is malformed', async () => {
    const a = new SqliteReadStore(path);
    await a.ensureCollection({ name: 'c', indexes: [{ name: 'by_v', keys: { v: 1 } }] });
    await a.collection('c').insertOne({ _id: 'x', v: 1 });
    await a.close();

    tamper(path, (db, table) => db.prepare(`UPDATE "${table}" SET doc = ? WHERE id = 'x'`).run(JSON.stringify([1, 2])));
    const b = new SqliteReadStore(path, { cachedDocs: 1 });
    let failure: unknown;
    await b
      .collection('c')
      .findOne({ _id: 'x' })
      .catch((err: unknown) => (failure = err));
    expect(String(failure)).to.match(/stored document is malformed/);
    await b.close();

    tamper(path, (db) => db.prepare(`UPDATE _collections SET indexes = ? WHERE name = 'c'`).run(JSON.stringify([{ name: 'by_v', keys: { v: 1 } }])));
    expect(() => new SqliteReadStore(path)).to.throw(/index metadata of collection c is malformed/);
  });

  it('creates its file private to its owner when the caller made it so', async () => {
    const a = new SqliteReadStore(path);
    await a.collection('c').insertOne({ _id: 'x' });
    await a.close();
    expect(statSync(path).isFile()).to.equal(true);
  });
});
