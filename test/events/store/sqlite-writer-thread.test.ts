import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreUnavailableError, type NewEvent, type RecordedEvent } from '../../../events/store/port.ts';
import { SqliteEventLog } from '../../../events/store/sqlite.ts';

const ev = (n: number): NewEvent => ({
  id: randomUUID(),
  type: 'Tick',
  data: { n },
  metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date(0).toISOString(), schema_version: 1 },
});

// Appends are committed by a writer thread: its failures, batching and ordering as seen from here.
describe('SqliteEventLog: the writer thread', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'evlog-writer-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fails a whole batch with StoreUnavailableError while another connection holds the write lock, then recovers', async () => {
    const path = join(dir, 'log.sqlite');
    const log = SqliteEventLog.open({ path, busyTimeoutMs: 50 });
    const other = new Database(path);
    try {
      await log.append('s-0', [ev(0)], 'no_stream');
      other.exec('BEGIN IMMEDIATE');
      const settled = await Promise.allSettled([log.append('s-1', [ev(1)], 'no_stream'), log.append('s-2', [ev(2)], 'no_stream')]);
      expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected']);
      for (const s of settled) expect((s as PromiseRejectedResult).reason).to.be.instanceOf(StoreUnavailableError);
      other.exec('ROLLBACK');
      const again = await log.append('s-1', [ev(1)], 'no_stream');
      expect(again.revision).to.equal(0);
      expect((await log.readAll()).map((e) => e.stream)).to.deep.equal(['s-0', 's-1']);
    } finally {
      other.close();
      await log.close();
    }
  });

  it('keeps this thread free while a batch waits, groups what arrives meanwhile into the next batch, and delivers each event once, in order', async () => {
    const path = join(dir, 'log.sqlite');
    const log = SqliteEventLog.open({ path });
    const seen: RecordedEvent[] = [];
    let allSeen: () => void = () => undefined;
    const delivered = new Promise<void>((resolve) => (allSeen = resolve));
    const sub = log.subscribeAll(0, (events) => {
      seen.push(...events);
      if (seen.length >= 201) allSeen();
    });
    const other = new Database(path);
    try {
      await log.append('warm-up', [ev(-1)], 'no_stream');
      const before = log.stats.transactions;
      // The batches wait for the write lock in the writer thread; this thread goes on.
      other.exec('BEGIN IMMEDIATE');
      const appends: Array<Promise<unknown>> = [];
      let settled = 0;
      for (let round = 0; round < 20; round++) {
        for (let s = 0; s < 10; s++) appends.push(log.append(`s-${s}`, [ev(round * 10 + s)], round === 0 ? 'no_stream' : round - 1).finally(() => settled++));
        await new Promise((r) => setImmediate(r));
      }
      // Twenty turns of this thread went by while the writer waited for the lock: none committed.
      expect(settled).to.equal(0);
      other.exec('ROLLBACK');
      await Promise.all(appends);
      // What the writer took before the lock was released, then everything that arrived meanwhile.
      expect(log.stats.transactions - before).to.be.within(1, 2);
      await delivered;
      expect(seen.map((e) => e.position)).to.deep.equal(Array.from({ length: 201 }, (_, i) => i + 1));
      expect(seen).to.deep.equal(await log.readAll());
    } finally {
      other.close();
      await sub.close();
      await log.close();
    }
  });

  // The WAL index (the -shm file) holds the WAL's last committed frame (mxFrame, offset 16 of its
  // header) and how many frames have been copied into the database file (nBackfill, offset 96).
  const walProgress = (path: string) => {
    const shm = readFileSync(`${path}-shm`);
    return { frames: shm.readUInt32LE(16), copied: shm.readUInt32LE(96) };
  };

  it('copies committed WAL frames into the database file from a background thread, between commits', async () => {
    const path = join(dir, 'log.sqlite');
    const log = SqliteEventLog.open({ path, checkpointIntervalMs: 5 });
    try {
      for (let i = 0; i < 50; i++) await log.append('s', [ev(i)], i === 0 ? 'no_stream' : i - 1);
      // Waits for the checkpointer (every 5 ms) to catch up; the deadline only bounds a failure.
      const deadline = Date.now() + 120_000;
      let progress = walProgress(path);
      while ((progress.frames === 0 || progress.copied < progress.frames) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        progress = walProgress(path);
      }
      expect(progress.frames).to.be.greaterThan(0);
      expect(progress.copied).to.equal(progress.frames);
      expect((await log.readAll()).length).to.equal(50);
    } finally {
      await log.close();
    }
  });

  it('without the checkpointer (interval 0) leaves a small WAL to the writer, which copies it only past 1000 pages', async () => {
    const path = join(dir, 'log.sqlite');
    const log = SqliteEventLog.open({ path, checkpointIntervalMs: 0 });
    try {
      // No thread copies frames but the writer, inside its commits: what they leave is what stays.
      for (let i = 0; i < 50; i++) await log.append('s', [ev(i)], i === 0 ? 'no_stream' : i - 1);
      const small = walProgress(path);
      expect(small.frames).to.be.greaterThan(0);
      expect(small.frames).to.be.lessThan(1000);
      expect(small.copied).to.equal(0);
      // A commit that takes the WAL past 1000 pages (4 KiB each) copies it, before the append resolves.
      const big = { ...ev(50), data: { n: 50, blob: 'x'.repeat(5 * 1024 * 1024) } };
      await log.append('s', [big], 49);
      const copied = walProgress(path);
      expect(copied.frames).to.be.at.least(1000);
      expect(copied.copied).to.be.greaterThan(0);
    } finally {
      await log.close();
    }
  });
});
