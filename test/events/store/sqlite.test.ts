import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { StoreUnavailableError, WrongExpectedRevisionError, type NewEvent, type RecordedEvent } from '../../../events/store/port.ts';
import { SqliteEventLog } from '../../../events/store/sqlite.ts';
import { openEventLog } from '../../../events/store/index.ts';
import { eventLogContract } from './contract.ts';

function event(n = 0): NewEvent {
  return {
    id: randomUUID(),
    type: 'TestHappened',
    data: { n },
    metadata: {
      actor: null,
      request_id: null,
      correlation_id: null,
      causation_id: null,
      occurred_at: '2025-01-01T00:00:00.000Z',
      schema_version: 1,
    },
  };
}

function events(count: number): NewEvent[] {
  return Array.from({ length: count }, (_, i) => event(i));
}

let dir: string;
let files = 0;
const nextPath = (): string => join(dir, `events-${++files}.sqlite`);

describe('events/store/sqlite', function () {
  before(function () {
    dir = mkdtempSync(join(tmpdir(), 'event-log-test-'));
  });

  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  eventLogContract('SqliteEventLog', async () => {
    const log = SqliteEventLog.open({ path: nextPath() });
    return { log, cleanup: () => log.close() };
  });

  describe('SqliteEventLog', function () {
    let log: SqliteEventLog;
    let path: string;

    beforeEach(function () {
      path = nextPath();
      log = SqliteEventLog.open({ path });
    });

    afterEach(async function () {
      await log.close();
    });

    describe('event-type index', function () {
      it('adds events_by_type to a file written before it existed, and type reads use it', async function () {
        const old = nextPath();
        const raw = new Database(old);
        raw.pragma('journal_mode = WAL');
        raw.exec(
          'CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (stream, revision))',
        );
        const ins = raw.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
        for (let i = 0; i < 30; i++)
          ins.run(randomUUID(), `s-${i}`, 0, i % 3 === 0 ? 'Rare' : 'Common', JSON.stringify({ i }), JSON.stringify(event().metadata));
        const indexes = () => (raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").pluck().all() as string[]).sort();
        expect(indexes()).to.not.include('events_by_type');
        raw.close();
        const migrated = SqliteEventLog.open({ path: old });
        try {
          const rare = await migrated.readAll({ types: ['Rare'] });
          expect(rare.map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
          const check = new Database(old, { readonly: true });
          const names = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").pluck().all() as string[]).sort();
          const plan = check
            .prepare('EXPLAIN QUERY PLAN SELECT position FROM events WHERE type IN (?) AND position > ? ORDER BY position LIMIT ?')
            .all('Rare', 0, 10) as Array<{ detail: string }>;
          check.close();
          expect(names).to.include('events_by_type');
          expect(plan.map((p) => p.detail).join(' ')).to.contain('COVERING INDEX events_by_type');
        } finally {
          await migrated.close();
        }
      });
    });

    describe('group commit', function () {
      it('writes concurrent appends to different streams in one transaction', async function () {
        const before = log.stats.transactions;
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(`agent-${i}`, events(2), 'no_stream')));
        expect(log.stats.transactions - before).to.equal(1);
        expect(results.every((r) => r.revision === 1 && !r.duplicate)).to.equal(true);
        const positions = results.map((r) => r.position);
        expect(new Set(positions).size).to.equal(50);
        expect((await log.readAll()).length).to.equal(100);
      });

      it('pipelines appends to one stream in one batch, each checked against the ones before it', async function () {
        const before = log.stats.transactions;
        const results = await Promise.all([
          log.append('agent-1', events(1), 'no_stream'),
          log.append('agent-1', events(2), 0),
          log.append('agent-1', events(1), 2),
          log.append('agent-1', events(1), 'stream_exists'),
        ]);
        expect(log.stats.transactions - before).to.equal(1);
        expect(results.map((r) => r.revision)).to.deep.equal([0, 2, 3, 4]);
        expect((await log.readStream('agent-1')).map((e) => e.revision)).to.deep.equal([0, 1, 2, 3, 4]);
      });

      it('rejects only the failing append of a batch and commits the others', async function () {
        const duplicateId = events(1);
        await log.append('agent-0', duplicateId, 'no_stream');
        const before = log.stats.transactions;
        const settled = await Promise.allSettled([
          log.append('agent-1', events(1), 'no_stream'),
          log.append('agent-2', events(1), 3),
          log.append('agent-3', events(3), 'no_stream'),
          log.append('agent-4', [event(), duplicateId[0]], 'no_stream'),
          log.append('agent-5', events(1), 'no_stream'),
        ]);
        expect(log.stats.transactions - before).to.equal(1);
        expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
        const second = settled[1] as PromiseRejectedResult;
        const fourth = settled[3] as PromiseRejectedResult;
        expect(second.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(fourth.reason).to.have.property('code', 'duplicate_event_id');
        // The multi-event append that failed half-way left nothing behind.
        expect(await log.readStream('agent-4')).to.deep.equal([]);
        expect((await log.readStream('agent-3')).length).to.equal(3);
        const all = await log.readAll();
        expect(all.map((e) => e.stream)).to.deep.equal(['agent-0', 'agent-1', 'agent-3', 'agent-3', 'agent-3', 'agent-5']);
      });

      it('treats a retry queued in the same batch as its original as a duplicate', async function () {
        const batch = events(2);
        const [first, retry] = await Promise.all([log.append('agent-1', batch, 'no_stream'), log.append('agent-1', batch, 'no_stream')]);
        expect(first.duplicate).to.equal(false);
        expect(retry).to.deep.equal({ revision: first.revision, position: first.position, duplicate: true });
        expect(await log.readStream('agent-1')).to.have.length(2);
      });

      it('resolves an append only once it is committed', async function () {
        let resolved = false;
        const pending = log.append('agent-1', events(1), 'no_stream').then(() => (resolved = true));
        expect(resolved).to.equal(false);
        // Before the flush runs, another connection sees nothing.
        const other = new Database(path, { readonly: true });
        try {
          expect(other.prepare('SELECT count(*) FROM events').pluck().get()).to.equal(0);
          await pending;
          expect(other.prepare('SELECT count(*) FROM events').pluck().get()).to.equal(1);
        } finally {
          other.close();
        }
      });
    });

    describe('durability', function () {
      it('uses WAL with synchronous=FULL and a busy timeout by default', function () {
        expect(log.diagnostics()).to.deep.include({ synchronous: 2, journalMode: 'wal' });
        expect(log.diagnostics().busyTimeoutMs).to.be.greaterThan(0);
      });

      it('uses synchronous=NORMAL only when asked', async function () {
        const normal = SqliteEventLog.open({ path: nextPath(), synchronous: 'NORMAL' });
        try {
          expect(normal.diagnostics().synchronous).to.equal(1);
        } finally {
          await normal.close();
        }
      });

      it('keeps events, revisions and positions across close and reopen', async function () {
        const a = await log.append('agent-1', events(2), 'no_stream');
        await log.append('agent-2', events(1), 'no_stream');
        const before = await log.readAll();
        await log.close();

        log = SqliteEventLog.open({ path });
        expect(await log.readAll()).to.deep.equal(before);
        expect(await log.headPosition()).to.equal(before[2].position);
        const next = await log.append('agent-1', events(1), a.revision);
        expect(next.revision).to.equal(2);
        expect(next.position).to.be.greaterThan(before[2].position);
        expect((await log.append('agent-1', before.slice(0, 2).map(strip), 'any')).duplicate).to.equal(true);
      });

      it('commits appends still queued when closed', async function () {
        const pending = [log.append('agent-1', events(2), 'no_stream'), log.append('agent-2', events(1), 'no_stream')];
        await log.close();
        const results = await Promise.all(pending);
        expect(results.map((r) => r.revision)).to.deep.equal([1, 0]);
        log = SqliteEventLog.open({ path });
        expect((await log.readAll()).map((e) => e.stream)).to.deep.equal(['agent-1', 'agent-1', 'agent-2']);
      });

      it('refuses work once closed with StoreUnavailableError', async function () {
        await log.ping();
        await log.close();
        for (const attempt of [log.ping(), log.append('agent-1', events(1), 'any'), log.readAll(), log.headPosition()]) {
          const error = await attempt.then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).to.be.instanceOf(StoreUnavailableError);
          expect(error).to.have.property('code', 'store_unavailable');
        }
        log = SqliteEventLog.open({ path });
      });

      it('shares its file with other connections writing their own tables', async function () {
        const jobs = new Database(log.sqlitePath);
        try {
          jobs.pragma('busy_timeout = 5000');
          jobs.exec('CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, name TEXT)');
          const insertJob = jobs.prepare('INSERT INTO jobs (name) VALUES (?)');
          const appends = Array.from({ length: 10 }, (_, i) => log.append(`agent-${i}`, events(1), 'no_stream'));
          insertJob.run('deliver-webhook');
          await Promise.all(appends);
          insertJob.run('send-mail');
          expect(jobs.prepare('SELECT count(*) FROM jobs').pluck().get()).to.equal(2);
          expect(jobs.prepare('SELECT count(*) FROM events').pluck().get()).to.equal(10);
        } finally {
          jobs.close();
        }
      });
    });

    describe('validation', function () {
      it('refuses event ids that are stored in another stream', async function () {
        const batch = events(1);
        await log.append('agent-1', batch, 'no_stream');
        const error = await log.append('agent-2', batch, 'no_stream').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).to.have.property('code', 'duplicate_event_id');
        expect(await log.readStream('agent-2')).to.deep.equal([]);
      });

      it('refuses a negative or fractional expected revision', async function () {
        for (const expected of [-1, 1.5]) {
          const error = await log.append('agent-1', events(1), expected).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).to.have.property('code', 'invalid_append');
        }
      });

      it('refuses an append repeating one id, writing nothing', async function () {
        const e = event();
        const error = await log.append('agent-1', [e, e], 'no_stream').then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(error).to.have.property('code', 'duplicate_event_id');
        expect(await log.readStream('agent-1')).to.deep.equal([]);
      });
    });

    describe('subscriptions', function () {
      it('stops a subscription whose handler throws and reports the error to onError', async function () {
        const failure = new Error('projection failed');
        const calls: RecordedEvent[][] = [];
        const reported = new Promise<unknown>((resolve) => {
          log.subscribeAll(
            0,
            (batch) => {
              calls.push(batch);
              throw failure;
            },
            { onError: resolve },
          );
        });
        await log.append('agent-1', events(1), 'no_stream');
        expect(await reported).to.equal(failure);
        await log.append('agent-1', events(1), 0);
        // A witness subscription receiving the second event proves it was published.
        const seen = await new Promise<number>((resolve) => {
          const witness = log.subscribeAll(0, (batch) => {
            if (batch.some((e) => e.revision === 1)) {
              void witness.close();
              resolve(batch.length);
            }
          });
        });
        expect(seen).to.be.greaterThan(0);
        expect(calls).to.have.length(1);
      });

      it('uses the log-level onError when the subscription has none', async function () {
        const reported = new Promise<unknown>((resolve) => (log.onError = resolve));
        log.subscribeAll(0, () => {
          throw new Error('boom');
        });
        await log.append('agent-1', events(1), 'no_stream');
        expect(await reported).to.have.property('message', 'boom');
      });

      it('never calls the handler inside subscribeAll itself', async function () {
        await log.append('agent-1', events(1), 'no_stream');
        let called = false;
        const subscription = log.subscribeAll(0, () => {
          called = true;
        });
        expect(called).to.equal(false);
        await subscription.close();
      });

      it('catches up from the file again when a slow handler overflows its live buffer', async function () {
        const small = SqliteEventLog.open({ path: nextPath(), catchUpPageSize: 10, liveBufferLimit: 5 });
        try {
          let release!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          const received: RecordedEvent[] = [];
          let done!: () => void;
          const finished = new Promise<void>((resolve) => (done = resolve));
          const subscription = small.subscribeAll(0, async (batch) => {
            received.push(...batch);
            await gate;
            if (received.length === 41) done();
          });
          await small.append('agent-1', events(1), 'no_stream');
          // While the handler is blocked, far more than the buffer limit is committed.
          for (let i = 0; i < 4; i++) await small.append('agent-1', events(10), i * 10);
          release();
          await finished;
          expect(received.map((e) => e.revision)).to.deep.equal(Array.from({ length: 41 }, (_, i) => i));
          await subscription.close();
        } finally {
          await small.close();
        }
      });

      it('gives the event loop a turn between catch-up pages, even to a handler that never awaits anything', async function () {
        const paged = SqliteEventLog.open({ path: nextPath(), catchUpPageSize: 10 });
        try {
          await paged.append('agent-1', events(100), 'no_stream');
          const seen: string[] = [];
          let caughtUp: () => void = () => undefined;
          const done = new Promise<void>((resolve) => (caughtUp = resolve));
          let delivered = 0;
          const subscription = paged.subscribeAll(0, (batch) => {
            delivered += batch.length;
            seen.push(`page to ${delivered}`);
            // A callback queued for the event loop's next turn: without a turn between pages it
            // would run only after the last one.
            if (delivered === 10) setImmediate(() => seen.push('turn'));
            if (delivered === 100) caughtUp();
          });
          await done;
          await subscription.close();
          expect(seen.slice(0, 3)).to.deep.equal(['page to 10', 'turn', 'page to 20']);
          expect(seen.filter((s) => s !== 'turn')).to.deep.equal(Array.from({ length: 10 }, (_, i) => `page to ${(i + 1) * 10}`));
        } finally {
          await paged.close();
        }
      });

      it('delivers live events equal to what is read back from the file', async function () {
        const live: RecordedEvent[] = [];
        let got!: () => void;
        const arrived = new Promise<void>((resolve) => (got = resolve));
        const subscription = log.subscribeAll(0, (batch) => {
          live.push(...batch);
          if (live.length >= 2) got();
        });
        await log.append('agent-1', [{ ...event(), data: { when: new Date(0), skip: undefined } }, event()], 'no_stream');
        await arrived;
        await subscription.close();
        expect(live).to.deep.equal(await log.readAll());
        expect(live[0].data).to.deep.equal({ when: '1970-01-01T00:00:00.000Z' });
      });
    });

    describe('openEventLog', function () {
      it('opens the SQLite log when no EventStoreDB URL is configured', async function () {
        const opened = await openEventLog({ sqlitePath: nextPath(), eventstoreUrl: '' });
        try {
          expect(opened).to.be.instanceOf(SqliteEventLog);
          expect(opened.name).to.equal('sqlite');
        } finally {
          await opened.close();
        }
      });

      it('passes the synchronous setting through', async function () {
        const opened = await openEventLog({ sqlitePath: nextPath(), synchronous: 'NORMAL' });
        try {
          expect((opened as SqliteEventLog).diagnostics().synchronous).to.equal(1);
        } finally {
          await opened.close();
        }
      });
    });
  });
});

function strip(recorded: RecordedEvent): NewEvent {
  return { id: recorded.id, type: recorded.type, data: recorded.data, metadata: recorded.metadata };
}
