import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import type { Job, JobParameters } from 'agenda';
import { defined } from '../helpers/defined.ts';
import { SqliteAgendaBackend } from '../../workers/backends/sqlite-backend.ts';
import { createAgenda, stopAgenda } from '../../workers/agenda.ts';
import { agendaBackendContract } from './agenda-backend.contract.ts';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const backendModule = resolve(repoRoot, 'workers/backends/sqlite-backend.ts');

let dir: string;
let counter = 0;

before(function () {
  dir = mkdtempSync(join(tmpdir(), 'agenda-sqlite-'));
});
after(function () {
  rmSync(dir, { recursive: true, force: true });
});

function freshPath(): string {
  return join(dir, `jobs-${process.pid}-${counter++}.sqlite`);
}

function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}

function job(overrides: Partial<JobParameters> & { name: string }): JobParameters {
  return { priority: 0, nextRunAt: new Date(Date.now() - 1000), type: 'normal', data: {}, ...overrides };
}

agendaBackendContract('SQLite', async () => {
  const path = freshPath();
  const backend = new SqliteAgendaBackend({ path });
  return {
    backend,
    open: () => new SqliteAgendaBackend({ path }),
    cleanup: async () => {
      await backend.disconnect();
      removeDb(path);
    },
  };
});

describe('SqliteAgendaBackend specifics', function () {
  this.timeout(300_000);

  let path: string;
  let backend: SqliteAgendaBackend;
  beforeEach(async function () {
    path = freshPath();
    backend = new SqliteAgendaBackend({ path });
  });
  afterEach(async function () {
    await backend.disconnect();
    removeDb(path);
  });

  it('is named SQLite, owns its connection, and connect/disconnect are idempotent', async function () {
    expect(backend.name).to.equal('SQLite');
    expect(backend.ownsConnection).to.equal(true);
    expect(backend.notificationChannel).to.equal(undefined);
    await backend.connect();
    await backend.connect();
    await backend.repository.saveJob(job({ name: 'x' }), undefined);
    await backend.disconnect();
    await backend.disconnect();
    let error: unknown;
    try {
      await backend.repository.getQueueSize();
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/not connected/);
    await backend.connect();
    expect(await backend.repository.getQueueSize()).to.equal(1);
  });

  it('puts the file in WAL mode and shares it with another connection writing its own table', async function () {
    await backend.connect();
    const log = new Database(path);
    log.pragma('busy_timeout = 5000');
    expect(log.pragma('journal_mode', { simple: true })).to.equal('wal');
    log.exec('CREATE TABLE IF NOT EXISTS events (position INTEGER PRIMARY KEY, body TEXT)');
    const append = log.prepare('INSERT INTO events (body) VALUES (?)');
    for (let i = 0; i < 20; i++) {
      append.run(`e${i}`);
      await backend.repository.saveJob(job({ name: 'mixed', data: { i } }), undefined);
    }
    expect(await backend.repository.purgeAllJobs()).to.equal(20);
    expect((log.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n).to.equal(20);
    const tables = (log.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    expect(tables).to.deep.equal(['agenda_jobs', 'events']);
    log.close();
  });

  it("waits for another connection's write lock on a timer, keeping the event loop free, and gives up after busyTimeoutMs", async function () {
    const patient = new SqliteAgendaBackend({ path, busyTimeoutMs: 30_000 });
    const impatient = new SqliteAgendaBackend({ path, busyTimeoutMs: 100 });
    await patient.connect();
    await impatient.connect();
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let saved = false;
    const saving = patient.repository.saveJob(job({ name: 'waits' }), undefined).then(() => (saved = true));
    // Timers keep firing while the save waits: it is not blocked inside SQLite.
    await new Promise<void>((resolve) => {
      let ticks = 0;
      const ticker = setInterval(() => {
        if (++ticks < 10) return;
        clearInterval(ticker);
        resolve();
      }, 5);
    });
    expect(saved).to.equal(false);
    let refused: unknown;
    await impatient.repository.saveJob(job({ name: 'gives-up' }), undefined).catch((e) => (refused = e));
    expect((refused as { code?: string }).code).to.match(/^SQLITE_BUSY/);
    other.exec('COMMIT');
    other.close();
    await saving;
    expect((await patient.repository.queryJobs({ name: 'waits' })).total).to.equal(1);
    expect((await patient.repository.queryJobs({ name: 'gives-up' })).total).to.equal(0);
    await impatient.disconnect();
    await patient.disconnect();
  });

  it('stores dates as integer milliseconds and data as JSON in agenda_jobs', async function () {
    await backend.connect();
    const nextRunAt = new Date('2030-01-02T03:04:05.678Z');
    const saved = await backend.repository.saveJob(job({ name: 'raw', nextRunAt, data: { a: [1, { b: 'c' }] } }), undefined);
    const raw = new Database(path, { readonly: true });
    const row = raw.prepare('SELECT id, nextRunAt, data, typeof(nextRunAt) AS t FROM agenda_jobs').get() as Record<string, unknown>;
    raw.close();
    expect(row).to.deep.equal({ id: saved._id, nextRunAt: nextRunAt.getTime(), data: '{"a":[1,{"b":"c"}]}', t: 'integer' });
    expect(String(saved._id)).to.match(/^[0-9a-f]{24}$/);
  });

  it('uses the (name, lockedAt, nextRunAt, priority) index to find the next job', async function () {
    await backend.connect();
    const raw = new Database(path, { readonly: true });
    const plan = raw
      .prepare(
        `EXPLAIN QUERY PLAN SELECT id FROM agenda_jobs WHERE name = ? AND lockedAt IS NULL AND nextRunAt <= ? AND disabled IS NOT 1
         ORDER BY nextRunAt ASC, priority DESC, rowid ASC LIMIT 1`,
      )
      .all('x', 1) as { detail: string }[];
    raw.close();
    expect(plan.map((p) => p.detail).join(' | ')).to.match(/USING INDEX agenda_jobs_find_next/);
  });

  it('a later save() of a job leaves its lock and run history to the processor', async function () {
    await backend.connect();
    const repo = backend.repository;
    const saved = await repo.saveJob(job({ name: 'keep-lock', type: 'single', repeatInterval: '1 minute' }), undefined);
    const now = new Date();
    const locked = await repo.getNextJobToRun('keep-lock', new Date(now.getTime() + 1000), new Date(now.getTime() - 600_000), now, undefined);
    expect(locked?._id).to.equal(saved._id);
    await repo.saveJobState({ ...defined(locked, 'the locked job'), lastRunAt: now, failCount: 2, failReason: 'x' }, undefined);

    // what Job.save() sends: the processor-managed fields are left out
    const { lockedAt: _l, lastRunAt: _r, failCount: _c, failReason: _f, ...userFields } = defined(locked, 'the locked job');
    await repo.saveJob({ ...userFields, _id: undefined, priority: 7 }, undefined);
    const read = defined(await repo.getJobById(String(saved._id)), 'the job');
    expect(read.priority).to.equal(7);
    expect(read.lockedAt?.getTime()).to.equal(now.getTime());
    expect(read.lastRunAt?.getTime()).to.equal(now.getTime());
    expect(read.failCount).to.equal(2);
    expect(read.failReason).to.equal('x');
  });

  it('accepts simple operators in unique() and rejects unsafe or unknown ones', async function () {
    await backend.connect();
    const repo = backend.repository;
    const a = await repo.saveJob(job({ name: 'op', data: { n: 5, tag: 'x' } }), undefined);
    const viaIn = await repo.saveJob(job({ name: 'op', data: { n: 5, tag: 'y' }, unique: { 'data.tag': { $in: ['x', 'z'] } } }), undefined);
    expect(viaIn._id).to.equal(a._id);
    const viaGte = await repo.saveJob(job({ name: 'op', data: { n: 6 }, unique: { 'data.n': { $gte: 5 }, priority: 0 } }), undefined);
    expect(viaGte._id).to.equal(a._id);
    const fresh = await repo.saveJob(job({ name: 'op', data: { n: 1 }, unique: { 'data.n': { $lt: 0 } } }), undefined);
    expect(fresh._id).to.not.equal(a._id);
    for (const bad of [{ $where: 'true' }, { 'data.n': { $where: 'true' } }, { 'data.n': { $regex: '.' } }, { nosuchfield: 1 }]) {
      let error: unknown;
      try {
        await repo.saveJob(job({ name: 'op', unique: bad as Record<string, unknown> }), undefined);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(bad)).to.be.instanceOf(Error);
    }
    expect((await repo.queryJobs({ name: 'op' })).total).to.equal(2);
  });

  it('two processes pulling from one file never get the same job', async function () {
    await backend.connect();
    const total = 400;
    const repo = backend.repository;
    for (let i = 0; i < total; i++) await repo.saveJob(job({ name: 'x', data: { i } }), undefined);
    await backend.disconnect();

    const script = `
      import { SqliteAgendaBackend } from ${JSON.stringify(backendModule)};
      const backend = new SqliteAgendaBackend({ path: process.env.AGENDA_DB });
      await backend.connect();
      process.stdout.write('ready\\n');
      const lines = [];
      const next = () => new Promise((r) => lines.length ? r(lines.shift()) : process.stdin.once('data', (d) => { lines.push(...String(d).split('\\n').filter(Boolean)); r(lines.shift()); }));
      await next();
      const ids = [];
      for (let first = true; ; first = false) {
        const now = new Date();
        const job = await backend.repository.getNextJobToRun('x', new Date(now.getTime() + 1000), new Date(now.getTime() - 600000), now, undefined);
        if (!job) break;
        ids.push(job._id);
        // Both processes hold a job before either takes a second one.
        if (first) {
          process.stdout.write('first\\n');
          await next();
        }
        // like a poller, leave the write lock free for a moment (SQLite's busy wait is not fair)
        await new Promise((r) => setTimeout(r, 1));
      }
      await backend.disconnect();
      process.stdout.write(JSON.stringify(ids) + '\\n');
    `;
    const scriptPath = join(dir, `pull-${process.pid}-${counter++}.mjs`);
    writeFileSync(scriptPath, script);
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', scriptPath], {
        cwd: repoRoot,
        env: { ...process.env, AGENDA_DB: path },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      const said = (line: string) =>
        new Promise<void>((resolveSaid) => {
          const check = () => {
            if (!out.split('\n').includes(line)) return;
            child.stdout.off('data', check);
            resolveSaid();
          };
          child.stdout.on('data', check);
          check();
        });
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<string[]>((resolveExit, reject) => {
        child.on('close', (code) => {
          if (code !== 0) return reject(new Error(`puller exited with ${code}`));
          resolveExit(JSON.parse(out.split('\n').filter(Boolean).at(-1) ?? '[]') as string[]);
        });
      });
      return { child, said, exited };
    });
    await Promise.all(children.map((c) => c.said('ready')));
    for (const c of children) c.child.stdin.write('go\n');
    await Promise.all(children.map((c) => c.said('first')));
    for (const c of children) c.child.stdin.end('more\n');
    const [first, second] = await Promise.all(children.map((c) => c.exited));

    const all = [...first, ...second];
    expect(all).to.have.length(total);
    expect(new Set(all).size).to.equal(total);
    expect(first.length, 'first process got jobs').to.be.greaterThan(0);
    expect(second.length, 'second process got jobs').to.be.greaterThan(0);
  });
});

describe('createAgenda / stopAgenda (SQLite)', function () {
  this.timeout(300_000);
  let path: string;
  beforeEach(function () {
    path = freshPath();
  });
  afterEach(function () {
    removeDb(path);
  });

  it('creates a connected, not yet started Agenda on the SQLite backend', async function () {
    const agenda = await createAgenda({ sqlitePath: path, processEvery: 50, name: 'w1' });
    expect(agenda.isActiveJobProcessor()).to.equal(false);
    expect(agenda.attrs.processEvery).to.equal(50);
    expect(agenda.attrs.name).to.equal('w1');
    await agenda.now('queued-only', { a: 1 });
    expect(await agenda.db.getQueueSize()).to.be.at.least(0);
    const { jobs } = await agenda.queryJobs({ name: 'queued-only' });
    expect(jobs).to.have.length(1);
    expect(jobs[0].lastModifiedBy).to.equal('w1');
    const result = await stopAgenda(agenda);
    expect(result).to.deep.equal({ running: 0, timedOut: false });
    // stopAgenda closed the backend even though the Agenda never started
    let error: unknown;
    try {
      await agenda.db.getQueueSize();
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/not connected/);
  });

  it('rejects when the store cannot be opened, and when no store is given', async function () {
    const file = join(dir, `plain-file-${counter++}`);
    writeFileSync(file, 'not a directory');
    let error: unknown;
    try {
      await createAgenda({ sqlitePath: join(file, 'jobs.sqlite') });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(Error);
    error = undefined;
    try {
      await createAgenda({});
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/sqlitePath .*or mongodbUrl/);
  });

  it('stopAgenda lets a running job finish and record its end before closing the store', async function () {
    const agenda = await createAgenda({ sqlitePath: path, processEvery: 50 });
    let finish: () => void = () => undefined;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    let finished = false;
    agenda.define('slow', async () => {
      await finishing;
      finished = true;
    });
    // The job goes on only once the stop is under way (Agenda told to stop, the store still open).
    const stop = agenda.stop.bind(agenda);
    agenda.stop = async (...args: Parameters<typeof agenda.stop>) => {
      const stopped = await stop(...args);
      finish();
      return stopped;
    };
    await agenda.start();
    const started = new Promise<[Job]>((r) => agenda.once('start:slow', (j: Job) => r([j])));
    const created = await agenda.now('slow', {});
    await started;
    const result = await stopAgenda(agenda, { timeoutMs: 30_000 });
    expect(finished).to.equal(true);
    expect(result).to.deep.equal({ running: 0, timedOut: false });

    const reopened = new SqliteAgendaBackend({ path });
    await reopened.connect();
    const stored = await reopened.repository.getJobById(String(created.attrs._id));
    await reopened.disconnect();
    expect(stored?.lastFinishedAt).to.be.instanceOf(Date);
    expect(defined(stored, 'the job').lockedAt ?? null).to.equal(null);
  });

  it('stopAgenda unlocks the jobs it had locked but not started, without running them', async function () {
    const agenda = await createAgenda({ sqlitePath: path, processEvery: 5000 });
    let ran = false;
    agenda.define('soon', async () => {
      ran = true;
    });
    // Due within the scan window: Agenda locks it at once and waits for its time with a timer
    // (3 s: the stop comes well before). The timer calls the job processor's jobProcessing()
    // without arguments: watched here, to see it fire after the stop.
    const created = await agenda.schedule(new Date(Date.now() + 3000), 'soon', {});
    await agenda.start();
    type Processor = { jobProcessing: (...args: unknown[]) => Promise<void> };
    const processor = defined((agenda as unknown as { jobProcessor?: Processor }).jobProcessor, 'the job processor');
    const jobProcessing = processor.jobProcessing.bind(processor);
    let timerFired: () => void = () => undefined;
    const fired = new Promise<void>((resolve) => (timerFired = resolve));
    let stopped = false;
    processor.jobProcessing = async (...args: unknown[]) => {
      await jobProcessing(...args);
      if (stopped && args.length === 0) timerFired();
    };
    const repo = agenda.db;
    const deadline = Date.now() + 120_000;
    while (!(await repo.getJobById(String(created.attrs._id)))?.lockedAt) {
      if (Date.now() > deadline) throw new Error('job was never locked');
      await new Promise((r) => setTimeout(r, 10));
    }
    await stopAgenda(agenda);
    stopped = true;
    expect(ran).to.equal(false);

    const reopened = new SqliteAgendaBackend({ path });
    await reopened.connect();
    const stored = defined(await reopened.repository.getJobById(String(created.attrs._id)), 'the job');
    await reopened.disconnect();
    expect(stored.lockedAt ?? null).to.equal(null);
    expect(stored.nextRunAt?.getTime()).to.equal(created.attrs.nextRunAt?.getTime());
    await fired;
    expect(ran, 'the pending timer must not run it after stop').to.equal(false);
  });
});
