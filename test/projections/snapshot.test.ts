import { expect } from 'chai';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { restoreReadModels, saveReadModels } from '../../projections/snapshots.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { projectionCodeFingerprint, readSnapshot, removeStaleTemporaries, SnapshotRejected, writeSnapshot } from '../../projections/store/snapshot.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { checksumsOf } from '../helpers/checksums.ts';

const collections = [...new Set(allProjections.flatMap((p) => p.collections.map((c) => c.name)))];

const checksums = (store: MemoryReadStore) => checksumsOf(store, [...collections, '_checkpoints']);

/** Every index's entries and multikey flags, by collection and index name. */
function entries(store: MemoryReadStore) {
  const out: Record<string, unknown> = {};
  for (const name of collections) {
    for (const ix of store._data(name, false)?.indexes ?? []) out[`${name}.${ix.name}`] = { entries: [...ix.tree.entries('')], multikey: ix.multikeyFields };
  }
  return out;
}

async function replayed(log: SqliteEventLog): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  const runner = new ProjectionRunner(log, store, allProjections);
  await runner.start();
  await runner.stop();
  return store;
}

describe('read-model snapshots (embedded store)', () => {
  let svc: TestService;
  let dir: string;
  const fingerprint = projectionCodeFingerprint();

  /** Some of everything the feed keeps: agents in rooms, posts with hashtags (by_term is multikey), comments, reactions. */
  async function write(round: number): Promise<void> {
    const agents = [];
    for (let i = 0; i < 3; i++) agents.push(await svc.register({ capabilities: ['lead-gen', `snap-room-${i % 2}`] }));
    for (const [i, a] of agents.entries()) {
      const post = await svc.req('POST', '/api/feed/posts', {
        apiKey: a.api_key,
        body: {
          title: `round ${round} post ${i}`,
          body: `#snap${i} #round${round} body ${i}`,
          post_type: 'signal_found',
          room_slug: i % 2 ? 'lead-gen' : null,
        },
      });
      expect(post.status).to.equal(200);
      await svc.req('POST', `/api/feed/posts/${post.body.post_id}/comments`, {
        apiKey: agents[(i + 1) % 3].api_key,
        body: { content: `comment ${round}.${i}` },
      });
      await svc.req('POST', `/api/feed/posts/${post.body.post_id}/react`, { apiKey: agents[(i + 2) % 3].api_key, body: { reaction: 'insightful' } });
    }
  }

  before(async function () {
    this.timeout(300_000);
    svc = await startTestService({ READ_STORE: 'memory' });
    await write(1);
    dir = mkdtempSync(join(tmpdir(), 'agent-network-snapshot-'));
  });
  after(async () => {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restores the live read models exactly: documents, index entries, multikey flags, checkpoints, and the plans of indexed queries', async () => {
    const { store, log, runner } = svc.running.services;
    const live = store as MemoryReadStore;
    const path = join(dir, 'exact.snapshot');
    const bytes = await saveReadModels(live, log, runner.position, path, '2026-03-10T09:30:00.000Z', fingerprint);
    expect(bytes).to.be.greaterThan(1000);
    const restored = new MemoryReadStore();
    const outcome = await restoreReadModels(restored, log, path, fingerprint);
    expect(outcome.kind).to.equal('restored');
    expect(await checksums(restored)).to.deep.equal(await checksums(live));
    const want = entries(live);
    expect(Object.values(want).some((e) => (e as { multikey: boolean[] }).multikey.includes(true))).to.equal(true);
    expect(entries(restored)).to.deep.equal(want);
    const query = { hidden: false };
    const opts = { sort: { seq: -1 as const }, limit: 2 };
    expect(await restored.collection('posts').explain(query, opts)).to.deep.equal(await live.collection('posts').explain(query, opts));
    expect(await restored.collection('posts').find({ terms: 'snap1' })).to.deep.equal(await live.collection('posts').find({ terms: 'snap1' }));
  });

  it('an older snapshot plus the events appended since gives the same read models as a full replay', async () => {
    const { store, log, runner } = svc.running.services;
    const path = join(dir, 'older.snapshot');
    const at = runner.position;
    await saveReadModels(store as MemoryReadStore, log, at, path, '2026-03-10T09:30:00.000Z', fingerprint);
    await write(2);
    expect(runner.position).to.be.greaterThan(at);
    const restored = new MemoryReadStore();
    const outcome = await restoreReadModels(restored, log, path, fingerprint);
    expect(outcome.kind).to.equal('restored');
    const catchUp = new ProjectionRunner(log, restored, allProjections);
    await catchUp.start();
    await catchUp.stop();
    const full = await replayed(log as SqliteEventLog);
    expect(await checksums(restored)).to.deep.equal(await checksums(full));
    expect(entries(restored)).to.deep.equal(entries(full));
    expect(await checksums(restored)).to.deep.equal(await checksums(store as MemoryReadStore));
  });

  it('indexes left deferred at the save (a bulk load under way) are rebuilt from the documents', async () => {
    const { store, log, runner } = svc.running.services;
    const copy = new MemoryReadStore();
    const path = join(dir, 'deferred.snapshot');
    await saveReadModels(store as MemoryReadStore, log, runner.position, path, '2026-03-10T09:30:00.000Z', fingerprint);
    await restoreReadModels(copy, log, path, fingerprint);
    copy.buildIndexes(collections);
    copy.deferIndexes(['posts']);
    await saveReadModels(copy, log, runner.position, path, '2026-03-10T09:30:00.000Z', fingerprint);
    const snapshot = readSnapshot(path, fingerprint);
    const posts = snapshot?.collections.find((c) => c.name === 'posts');
    expect(posts?.entries).to.deep.equal([]);
    const restored = new MemoryReadStore();
    expect((await restoreReadModels(restored, log, path, fingerprint)).kind).to.equal('restored');
    restored.buildIndexes(collections);
    expect(entries(restored)).to.deep.equal(entries(store as MemoryReadStore));
  });

  it('keeps the _ids of entries when they are not plain (escaped in their keys)', async () => {
    const store = new MemoryReadStore();
    await store.ensureCollection({
      name: 'odd',
      indexes: [
        { name: 'by_tag', keys: { tag: 1 } },
        { name: 'by_code', keys: { code: 1 }, unique: true },
      ],
    });
    const ids = ['plain', 'with\u0016sync', 'émoji 🚀', '\u0000nul', 'ünïcode'];
    for (const [i, _id] of ids.entries()) await store.collection('odd').insertOne({ _id, tag: ['x', `t${i % 2}`], code: i });
    const path = join(dir, 'odd.snapshot');
    writeSnapshot(path, { fingerprint, position: 1, eventId: 'e', createdAt: 'now' }, store.exportCollections());
    const snapshot = readSnapshot(path, fingerprint);
    expect(snapshot?.collections[0].entries.map((e) => e.ids !== null)).to.deep.equal([true, true]);
    const restored = new MemoryReadStore();
    for (const c of snapshot?.collections ?? []) restored.restoreCollection(c);
    restored.buildIndexes(['odd']);
    for (const tag of ['x', 't0', 't1']) {
      expect((await restored.collection('odd').find({ tag }, { sort: { _id: 1 } })).map((d) => d._id)).to.deep.equal(
        (await store.collection('odd').find({ tag }, { sort: { _id: 1 } })).map((d) => d._id),
      );
    }
    expect((await restored.collection('odd').explain({ tag: 't1' })).index).to.equal('by_tag');
    // The unique index is checked again: a duplicate code is refused after the restore too.
    let refused: unknown;
    await restored
      .collection('odd')
      .insertOne({ _id: 'another', tag: 'y', code: 3 })
      .catch((e: unknown) => (refused = e));
    expect(String(refused)).to.match(/duplicate key/);
  });

  describe('a snapshot is not used when it cannot be trusted (the start replays the whole log instead)', () => {
    let path: string;
    let good: Buffer;
    before(async () => {
      const { store, log, runner } = svc.running.services;
      path = join(dir, 'checked.snapshot');
      await saveReadModels(store as MemoryReadStore, log, runner.position, path, '2026-03-10T09:30:00.000Z', fingerprint);
      good = readFileSync(path);
    });
    afterEach(() => writeFileSync(path, good));

    const rejected = async (reason: RegExp) => {
      const store = new MemoryReadStore();
      const outcome = await restoreReadModels(store, svc.running.services.log, path, fingerprint);
      expect(outcome.kind).to.equal('rejected');
      if (outcome.kind === 'rejected') expect(outcome.reason).to.match(reason);
      expect(await store.listCollections(), 'nothing restored').to.deep.equal([]);
    };

    it('no file: nothing to restore', async () => {
      rmSync(path);
      expect((await restoreReadModels(new MemoryReadStore(), svc.running.services.log, path, fingerprint)).kind).to.equal('none');
    });

    it('a damaged byte anywhere', async () => {
      for (const at of [good.length >> 1, good.length - 40, good.length - 1]) {
        const bad = Buffer.from(good);
        bad[at] ^= 0x20;
        writeFileSync(path, bad);
        await rejected(/SHA-256|malformed|deserialize|truncated/);
      }
    });

    it('a truncated file', async () => {
      writeFileSync(path, good.subarray(0, good.length - 100));
      await rejected(/truncated|SHA-256|malformed/);
      writeFileSync(path, good.subarray(0, 10));
      await rejected(/truncated/);
    });

    it('another file altogether', async () => {
      writeFileSync(path, Buffer.alloc(good.length, 7));
      await rejected(/not a read-model snapshot/);
    });

    it('made by other projection code', async () => {
      const store = new MemoryReadStore();
      const outcome = await restoreReadModels(store, svc.running.services.log, path, 'f'.repeat(64));
      expect(outcome).to.deep.include({ kind: 'rejected', reason: 'it was made by other projection code' });
    });

    it('a log that does not hold its last event at its position (another log, or one cut short)', async () => {
      const other = SqliteEventLog.open({ path: join(dir, 'other.sqlite') });
      try {
        const store = new MemoryReadStore();
        const outcome = await restoreReadModels(store, other, path, fingerprint);
        expect(outcome.kind).to.equal('rejected');
        if (outcome.kind === 'rejected') expect(outcome.reason).to.match(/does not hold its last event/);
        await other.append(
          's-1',
          [
            {
              id: '0196b5a4-0000-7000-8000-000000000001',
              type: 'Something',
              data: {},
              metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: '2026-03-10T09:30:00.000Z', schema_version: 1 },
            },
          ],
          'any',
        );
        expect((await restoreReadModels(store, other, path, fingerprint)).kind).to.equal('rejected');
      } finally {
        await other.close();
      }
    });

    it('one that does not install (a unique index refuses its documents) leaves nothing behind', async () => {
      const { log, runner } = svc.running.services;
      const [last] = await log.readAll({ after: runner.position - 1, maxCount: 1 });
      const docs = [
        { _id: 'a', code: 1 },
        { _id: 'b', code: 1 },
      ];
      const collections = [
        { name: 'fine', indexes: [], docs: [{ _id: 'x' }], entries: [] },
        { name: 'clash', indexes: [{ name: 'by_code', keys: { code: 1 as const }, unique: true }], docs, entries: [] },
      ];
      writeSnapshot(path, { fingerprint, position: last.position, eventId: last.id, createdAt: 'now' }, collections);
      await rejected(/duplicate key/);
    });

    it('the fingerprint follows the projection code and the Node.js version', () => {
      expect(projectionCodeFingerprint())
        .to.equal(fingerprint)
        .and.to.match(/^[0-9a-f]{64}$/);
      const header = readSnapshot(path, fingerprint)?.header;
      expect(header).to.include({ format: 1, fingerprint, eventId: header?.eventId });
      expect(() => readSnapshot(path, 'other')).to.throw(SnapshotRejected);
    });
  });

  it('leaves no temporary file behind, and removes those of writes that died', async () => {
    const path = join(dir, 'tmp.snapshot');
    writeSnapshot(path, { fingerprint, position: 1, eventId: 'e', createdAt: 'now' }, []);
    expect(readdirSync(dir).filter((n) => n.startsWith('.tmp.snapshot'))).to.deep.equal([]);
    // pid 2^31-2 is not running, nor is a write of our own under way while we start; our parent
    // runs (a write of another live process is left alone).
    writeFileSync(join(dir, `.tmp.snapshot.${2 ** 31 - 2}.tmp`), 'partial');
    writeFileSync(join(dir, `.tmp.snapshot.${process.pid}.tmp`), 'partial');
    writeFileSync(join(dir, `.tmp.snapshot.${process.ppid}.tmp`), 'partial');
    removeStaleTemporaries(path);
    expect(readdirSync(dir).filter((n) => n.startsWith('.tmp.snapshot'))).to.deep.equal([`.tmp.snapshot.${process.ppid}.tmp`]);
  });
});
