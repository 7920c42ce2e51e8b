import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { MongoReadStore } from '../../../projections/store/mongodb.ts';
import { readStoreContract } from './contract.ts';

const url = process.env.MONGODB_URL;

describe('mongodb read store: connection', () => {
  it('fails fast when no server answers', async function () {
    // The driver's default selection timeout (30 s) would outlast this test's.
    this.timeout(300_000);
    let failed: unknown;
    try {
      const store = await MongoReadStore.connect('mongodb://127.0.0.1:9/none', undefined, { serverSelectionTimeoutMS: 500 });
      await store.close();
    } catch (err) {
      failed = err;
    }
    expect(failed).to.be.an('error').with.property('name', 'MongoServerSelectionError');
  });
});

if (url) {
  // Each run gets its own database, dropped afterwards.
  readStoreContract('mongodb', async () => {
    const store = await MongoReadStore.connect(url, `readstore_test_${randomBytes(6).toString('hex')}`);
    return {
      store,
      cleanup: async () => {
        await store.db.dropDatabase();
        await store.close();
      },
    };
  });

  describe('mongodb read store: explain', () => {
    let store: MongoReadStore;
    before(async () => {
      store = await MongoReadStore.connect(url, `readstore_test_${randomBytes(6).toString('hex')}`);
    });
    after(async () => {
      await store.db.dropDatabase();
      await store.close();
    });

    it('reports the index and the documents examined of an index-served query', async () => {
      await store.ensureCollection({ name: 'posts', indexes: [{ name: 'room_published', keys: { room_slug: 1, published_at: -1 } }] });
      const c = store.collection<string>('posts');
      for (let i = 0; i < 300; i++) await c.insertOne({ _id: `p${i}`, room_slug: `r${i % 3}`, published_at: String(1000 + i) });
      const plan = await c.explain({ room_slug: 'r1' }, { sort: { published_at: -1 }, limit: 10 });
      expect(plan).to.deep.equal({ index: 'room_published', examined: 10 });
      expect((await c.explain({ _id: 'p1' })).index).to.equal('_id_');
      expect(await c.explain({ other: 1 })).to.deep.equal({ index: null, examined: 300 });
    });
  });
} else {
  describe('read store contract: mongodb', () => {
    it('runs against MongoDB only when MONGODB_URL is set (not set here: skipped)');
  });
}
