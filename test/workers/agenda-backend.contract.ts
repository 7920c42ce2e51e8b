// The contract every Agenda backend of the service passes (SQLite embedded, MongoDB production):
// repository-level semantics, as Agenda's JobProcessor relies on them, and end-to-end runs with a
// real Agenda 6 polling every 50 ms.

import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { Agenda } from 'agenda';
import type { AgendaBackend, AgendaOptions, Job, JobParameters, JobRepository } from 'agenda';
import { defined } from '../helpers/defined.ts';

export interface AgendaBackendFixture {
  /** A backend on a fresh, empty store. Not connected yet. */
  backend: AgendaBackend;
  /** Disconnects `backend` (it may already be disconnected) and deletes the store. */
  cleanup: () => Promise<void>;
  /**
   * Optional: another, not yet connected backend on the same store (a second connection, as a
   * restarted process or a second worker would open). The durability and multi-instance tests
   * need it and are skipped without it.
   */
  open?: () => AgendaBackend;
}

const PROCESS_EVERY = 50;

function at(offsetMs: number): Date {
  return new Date(Date.now() + offsetMs);
}

function params(overrides: Partial<JobParameters> & { name: string }): JobParameters {
  return { priority: 0, nextRunAt: at(-1000), type: 'normal', data: {}, ...overrides };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Watches the scans Agenda makes of `repository` for due jobs. `scans(name, n)` resolves after `n`
 * more scans for `name` that found nothing to run: once two have, a scan that began after the
 * moment of the call found nothing, so whatever was due by then has been handed out.
 */
function watchScans(repository: JobRepository): { scans(name: string, n: number): Promise<void> } {
  const empty = new EventEmitter();
  const getNextJobToRun = repository.getNextJobToRun.bind(repository);
  repository.getNextJobToRun = async (...args: Parameters<JobRepository['getNextJobToRun']>) => {
    const job = await getNextJobToRun(...args);
    if (job === undefined) empty.emit(args[0]);
    return job;
  };
  return {
    async scans(name, n) {
      for (let i = 0; i < n; i++) await nextEvent(empty, name);
    },
  };
}

/** Resolves with the arguments of the next `event`, rejects after timeoutMs. */
function nextEvent<T extends unknown[] = unknown[]>(emitter: EventEmitter, event: string, timeoutMs = 120_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args as T);
    };
    emitter.once(event, listener);
  });
}

/** Polls `predicate` until it holds; the deadline only bounds a failure. */
async function waitUntil(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export function agendaBackendContract(name: string, factory: () => Promise<AgendaBackendFixture>): void {
  describe(`Agenda backend contract: ${name}`, function () {
    this.timeout(300_000);

    let fx: AgendaBackendFixture;
    let repo: JobRepository;
    const others: AgendaBackend[] = [];
    const agendas: Agenda[] = [];

    function openOther(): AgendaBackend | undefined {
      if (!fx.open) return undefined;
      const backend = fx.open();
      others.push(backend);
      return backend;
    }

    async function teardown(): Promise<void> {
      for (const agenda of agendas.splice(0)) await agenda.drain(3000).catch(() => undefined);
      for (const backend of others.splice(0)) await backend.disconnect().catch(() => undefined);
      await fx.cleanup();
    }

    // -------------------------------------------------------------------------------------------
    describe('repository', function () {
      beforeEach(async function () {
        fx = await factory();
        await fx.backend.connect();
        repo = fx.backend.repository;
      });
      afterEach(teardown);

      describe('saveJob / getJobById', function () {
        it('inserts a job with a string id and reads every field back with its type', async function () {
          const nextRunAt = at(60_000);
          const startDate = at(-3_600_000);
          const saved = await repo.saveJob(
            params({
              name: 'types',
              priority: 10,
              nextRunAt,
              data: { user: 'u1', n: 3, nested: { ok: true }, list: [1, 'a'] },
              repeatInterval: 5000,
              repeatTimezone: 'Europe/Paris',
              disabled: true,
              startDate,
              skipDays: [0, 6],
            }),
            { lastModifiedBy: 'tester' },
          );
          expect(saved._id).to.be.a('string').and.not.equal('');
          expect(saved.nextRunAt).to.be.instanceOf(Date);

          const read = defined(await repo.getJobById(String(saved._id)), 'the saved job');
          expect(read._id).to.equal(saved._id);
          expect(read.name).to.equal('types');
          expect(read.priority).to.equal(10);
          expect(read.type).to.equal('normal');
          expect(read.nextRunAt).to.be.instanceOf(Date);
          expect(read.nextRunAt?.getTime()).to.equal(nextRunAt.getTime());
          expect(read.startDate).to.be.instanceOf(Date);
          expect(read.startDate?.getTime()).to.equal(startDate.getTime());
          expect(read.data).to.deep.equal({ user: 'u1', n: 3, nested: { ok: true }, list: [1, 'a'] });
          expect(read.repeatInterval).to.equal(5000);
          expect(read.repeatTimezone).to.equal('Europe/Paris');
          expect(read.disabled).to.equal(true);
          expect(read.skipDays).to.deep.equal([0, 6]);
          expect(read.lastModifiedBy).to.equal('tester');
          expect(read.lockedAt ?? null).to.equal(null);
          expect(read.lastRunAt ?? null).to.equal(null);
        });

        it('keeps a string repeatInterval a string', async function () {
          const saved = await repo.saveJob(params({ name: 'interval', repeatInterval: '10 minutes' }), undefined);
          expect((await repo.getJobById(String(saved._id)))?.repeatInterval).to.equal('10 minutes');
        });

        it('updates the job with the same _id, and returns a removed job unchanged without re-creating it', async function () {
          const saved = await repo.saveJob(params({ name: 'upd', priority: 1, data: { v: 1 } }), undefined);
          const updated = await repo.saveJob({ ...saved, priority: 20, data: { v: 2 } }, undefined);
          expect(updated._id).to.equal(saved._id);
          expect(updated.priority).to.equal(20);
          expect(updated.data).to.deep.equal({ v: 2 });
          expect((await repo.queryJobs({ name: 'upd' })).total).to.equal(1);

          await repo.removeJobs({ id: saved._id });
          const again = await repo.saveJob({ ...saved, priority: 30 }, undefined);
          expect(again.priority).to.equal(30);
          expect(await repo.getJobById(String(saved._id))).to.equal(null);
          expect((await repo.queryJobs({ name: 'upd' })).total).to.equal(0);
        });

        it("upserts type 'single' jobs by name, protecting a due nextRunAt", async function () {
          const first = await repo.saveJob(params({ name: 'single', type: 'single', priority: 1, nextRunAt: at(60_000), data: { run: 1 } }), undefined);
          const second = await repo.saveJob(params({ name: 'single', type: 'single', priority: 5, nextRunAt: at(120_000), data: { run: 2 } }), undefined);
          expect(second._id).to.equal(first._id);
          expect(second.priority).to.equal(5);
          expect(second.data).to.deep.equal({ run: 2 });
          expect(second.nextRunAt?.getTime()).to.be.greaterThan(defined(first.nextRunAt, 'nextRunAt').getTime());

          // a nextRunAt that is already due only applies on insert: the stored schedule stays
          const third = await repo.saveJob(params({ name: 'single', type: 'single', nextRunAt: at(-5000), data: { run: 3 } }), undefined);
          expect(third._id).to.equal(first._id);
          expect(third.nextRunAt?.getTime()).to.equal(second.nextRunAt?.getTime());
          expect(third.data).to.deep.equal({ run: 3 });

          // a 'normal' job of the same name is a different job
          await repo.saveJob(params({ name: 'single' }), undefined);
          const all = await repo.queryJobs({ name: 'single' });
          expect(all.total).to.equal(2);
          expect(all.jobs.filter((j) => j.type === 'single')).to.have.length(1);
        });

        it('upserts on the unique query, and with insertOnly leaves the existing job unchanged', async function () {
          const a = await repo.saveJob(params({ name: 'uniq', data: { k: 1, v: 'a' }, unique: { 'data.k': 1 } }), undefined);
          const b = await repo.saveJob(params({ name: 'uniq', data: { k: 1, v: 'b' }, unique: { 'data.k': 1 } }), undefined);
          expect(b._id).to.equal(a._id);
          expect(b.data).to.deep.equal({ k: 1, v: 'b' });

          const c = await repo.saveJob(
            params({ name: 'uniq', priority: 9, data: { k: 1, v: 'c' }, unique: { 'data.k': 1 }, uniqueOpts: { insertOnly: true } }),
            undefined,
          );
          expect(c._id).to.equal(a._id);
          expect(c.data).to.deep.equal({ k: 1, v: 'b' });
          expect(c.priority).to.equal(0);

          // another key, another job; a string '1' is not the number 1
          const d = await repo.saveJob(params({ name: 'uniq', data: { k: 2 }, unique: { 'data.k': 2 } }), undefined);
          const e = await repo.saveJob(params({ name: 'uniq', data: { k: '1' }, unique: { 'data.k': '1' } }), undefined);
          expect(d._id).to.not.equal(a._id);
          expect(e._id).to.not.equal(a._id);
          // the same unique query under another job name does not match
          const f = await repo.saveJob(params({ name: 'uniq-other', data: { k: 1 }, unique: { 'data.k': 1 } }), undefined);
          expect(f._id).to.not.equal(a._id);
          expect((await repo.queryJobs({ name: 'uniq' })).total).to.equal(3);
        });

        it('debounces a unique job: the trailing save pushes nextRunAt back, maxWait forces it', async function () {
          const debounced = (v: number, maxWait?: number): JobParameters =>
            params({
              name: 'deb',
              nextRunAt: new Date(),
              data: { key: 'x', v },
              unique: { 'data.key': 'x' },
              uniqueOpts: { debounce: { delay: 10_000, strategy: 'trailing', ...(maxWait ? { maxWait } : {}) } },
            });
          const before = Date.now();
          const first = await repo.saveJob(debounced(1), undefined);
          const firstRunAt = defined(first.nextRunAt, 'nextRunAt').getTime();
          expect(firstRunAt).to.be.at.least(before + 10_000);
          const debounceStartedAt = defined(first.debounceStartedAt, 'debounceStartedAt').getTime();
          // The backend debounces on the wall clock: the next saves come after it has moved on past maxWait.
          await waitUntil('the clock to pass the debounce start by 10 ms', () => Date.now() > debounceStartedAt + 10);
          const second = await repo.saveJob(debounced(2), undefined);
          expect(second._id).to.equal(first._id);
          expect(second.data).to.deep.equal({ key: 'x', v: 2 });
          expect(defined(second.nextRunAt, 'nextRunAt').getTime()).to.be.greaterThan(firstRunAt);
          expect(defined(second.debounceStartedAt, 'debounceStartedAt').getTime()).to.equal(debounceStartedAt);

          const forced = await repo.saveJob(debounced(3, 10), undefined);
          expect(forced._id).to.equal(first._id);
          expect(defined(forced.nextRunAt, 'nextRunAt').getTime()).to.be.at.most(Date.now());
          expect((await repo.queryJobs({ name: 'deb' })).total).to.equal(1);
        });
      });

      describe('getNextJobToRun / lockJob / unlock', function () {
        const scan = (job: string, scanAheadMs = 1000, lockLifetimeMs = 600_000, now = new Date()) =>
          repo.getNextJobToRun(job, new Date(now.getTime() + scanAheadMs), new Date(now.getTime() - lockLifetimeMs), now, { lastModifiedBy: 'worker-1' });

        it('returns and locks the due job, stamping lockedAt with `now` and lastModifiedBy', async function () {
          const saved = await repo.saveJob(params({ name: 'next', data: { n: 1 } }), undefined);
          const now = new Date();
          const next = await scan('next', 1000, 600_000, now);
          expect(next).to.not.equal(undefined);
          expect(next?._id).to.equal(saved._id);
          expect(next?.lockedAt).to.be.instanceOf(Date);
          expect(next?.lockedAt?.getTime()).to.equal(now.getTime());
          expect(next?.lastModifiedBy).to.equal('worker-1');
          expect(next?.data).to.deep.equal({ n: 1 });
          const stored = await repo.getJobById(String(saved._id));
          expect(stored?.lockedAt?.getTime()).to.equal(now.getTime());
          // locked: not handed out again while the lock is fresh
          expect(await scan('next')).to.equal(undefined);
        });

        it('respects nextRunAt against nextScanAt, the job name and disabled', async function () {
          await repo.saveJob(params({ name: 'later', nextRunAt: at(10_000) }), undefined);
          await repo.saveJob(params({ name: 'off', disabled: true }), undefined);
          await repo.saveJob(params({ name: 'never', nextRunAt: null }), undefined);
          expect(await scan('later', 1000)).to.equal(undefined);
          expect(await scan('off')).to.equal(undefined);
          expect(await scan('never', 1_000_000)).to.equal(undefined);
          expect(await scan('other-name', 1_000_000)).to.equal(undefined);
          // within the scan window it is handed out early (Agenda then waits for nextRunAt itself)
          const early = await scan('later', 20_000);
          expect(early?.name).to.equal('later');
        });

        it('orders by nextRunAt, then by priority (highest first)', async function () {
          const base = Date.now() - 60_000;
          await repo.saveJob(params({ name: 'ord', nextRunAt: new Date(base + 2), priority: 100, data: { n: 'late' } }), undefined);
          await repo.saveJob(params({ name: 'ord', nextRunAt: new Date(base), priority: 0, data: { n: 'low' } }), undefined);
          await repo.saveJob(params({ name: 'ord', nextRunAt: new Date(base), priority: 10, data: { n: 'high' } }), undefined);
          const order: unknown[] = [];
          for (let i = 0; i < 3; i++) order.push((await scan('ord'))?.data);
          expect(order).to.deep.equal([{ n: 'high' }, { n: 'low' }, { n: 'late' }]);
          expect(await scan('ord')).to.equal(undefined);
        });

        it('hands out a job again once its lock is older than the lock deadline', async function () {
          const saved = await repo.saveJob(params({ name: 'stale', nextRunAt: at(-60_000) }), undefined);
          const t0 = new Date(Date.now() - 10_000);
          expect((await scan('stale', 1000, 600_000, t0))?._id).to.equal(saved._id);
          // lock lifetime 1 s: the lock taken 10 s ago has expired, even for a job whose nextRunAt is null
          await repo.saveJobState({ ...defined(await repo.getJobById(String(saved._id)), 'the job'), nextRunAt: null }, undefined);
          const again = await scan('stale', 0, 1000);
          expect(again?._id).to.equal(saved._id);
          expect(again?.lockedAt?.getTime()).to.be.greaterThan(t0.getTime());
        });

        it('ranks expired-lock jobs together with due ones, and never hands out a disabled one', async function () {
          const due = at(-60_000);
          const t0 = new Date(Date.now() - 10_000);
          const free = await repo.saveJob(params({ name: 'mix', nextRunAt: due, priority: 0, data: { n: 'free' } }), undefined);
          const stuck = await repo.saveJob(params({ name: 'mix', nextRunAt: due, priority: 10, data: { n: 'stuck' } }), undefined);
          const off = await repo.saveJob(params({ name: 'mix', nextRunAt: due, priority: 20, data: { n: 'off' } }), undefined);
          for (const j of [stuck, off]) await repo.saveJobState({ ...j, lockedAt: t0 }, undefined);
          await repo.disableJobs({ id: off._id });
          const first = await scan('mix', 1000, 1000);
          const second = await scan('mix', 1000, 1000);
          expect([first?.data, second?.data]).to.deep.equal([{ n: 'stuck' }, { n: 'free' }]);
          expect(second?._id).to.equal(free._id);
          expect(await scan('mix', 1000, 1000)).to.equal(undefined);
        });

        it('lockJob locks only an unlocked, enabled job whose nextRunAt still matches', async function () {
          const saved = await repo.saveJob(params({ name: 'lock' }), undefined);
          const locked = await repo.lockJob(saved, { lastModifiedBy: 'w' });
          expect(locked?._id).to.equal(saved._id);
          expect(locked?.lockedAt).to.be.instanceOf(Date);
          expect(await repo.lockJob(saved, undefined)).to.equal(undefined);

          const moved = await repo.saveJob(params({ name: 'lock2' }), undefined);
          expect(await repo.lockJob({ ...moved, nextRunAt: at(5000) }, undefined)).to.equal(undefined);
          const off = await repo.saveJob(params({ name: 'lock3', disabled: true }), undefined);
          expect(await repo.lockJob(off, undefined)).to.equal(undefined);
        });

        it('lockJob is exclusive under concurrent callers', async function () {
          const jobs = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.saveJob(params({ name: 'race', data: { i } }), undefined)));
          const other = openOther();
          if (other) await other.connect();
          const repos = other ? [repo, other.repository] : [repo, repo];
          const results = await Promise.all(jobs.flatMap((job) => repos.map((r) => r.lockJob(job, undefined))));
          for (let i = 0; i < jobs.length; i++) {
            const pair = results.slice(i * 2, i * 2 + 2).filter((r) => r !== undefined);
            expect(pair, `job ${i} locked by exactly one caller`).to.have.length(1);
          }
        });

        it('getNextJobToRun never hands one job to two concurrent callers', async function () {
          await Promise.all(Array.from({ length: 20 }, (_, i) => repo.saveJob(params({ name: 'pull', data: { i } }), undefined)));
          const other = openOther();
          if (other) await other.connect();
          const repos = other ? [repo, other.repository] : [repo, repo];
          const got: string[] = [];
          await Promise.all(
            repos.flatMap((r) =>
              [0, 1].map(async () => {
                // bounded: a backend that hands out locked jobs again must fail here, not loop forever
                for (let attempt = 0; attempt < 100; attempt++) {
                  const now = new Date();
                  const job = await r.getNextJobToRun('pull', new Date(now.getTime() + 1000), new Date(now.getTime() - 600_000), now, undefined);
                  if (!job) return;
                  got.push(String(job._id));
                }
              }),
            ),
          );
          expect(got).to.have.length(20);
          expect(new Set(got).size).to.equal(20);
        });

        it('unlockJob spares a job being processed (nextRunAt null); unlockJobs unlocks by id', async function () {
          const a = await repo.saveJob(params({ name: 'ul-a' }), undefined);
          const b = await repo.saveJob(params({ name: 'ul-b' }), undefined);
          const c = await repo.saveJob(params({ name: 'ul-c' }), undefined);
          const la = defined(await repo.lockJob(a, undefined), 'the lock of a');
          const lb = defined(await repo.lockJob(b, undefined), 'the lock of b');
          const lc = defined(await repo.lockJob(c, undefined), 'the lock of c');
          // b is running: its nextRunAt was cleared when it started
          await repo.saveJobState({ ...lb, nextRunAt: null, lastRunAt: new Date() }, undefined);

          await repo.unlockJob(la);
          await repo.unlockJob({ ...lb, nextRunAt: null });
          expect(defined(await repo.getJobById(String(a._id)), 'job a').lockedAt ?? null).to.equal(null);
          expect(defined(await repo.getJobById(String(b._id)), 'job b').lockedAt).to.be.instanceOf(Date);

          await repo.unlockJobs([String(b._id), String(lc._id)]);
          expect(defined(await repo.getJobById(String(b._id)), 'job b').lockedAt ?? null).to.equal(null);
          expect(defined(await repo.getJobById(String(c._id)), 'job c').lockedAt ?? null).to.equal(null);
          await repo.unlockJobs([]);
        });

        it('saveJobState writes the processor fields and fails for a job that no longer exists', async function () {
          const saved = await repo.saveJob(params({ name: 'state', data: { keep: true } }), undefined);
          const finished = new Date(Date.now() - 5);
          await repo.saveJobState(
            {
              ...saved,
              lockedAt: undefined,
              nextRunAt: null,
              lastRunAt: new Date(finished.getTime() - 10),
              lastFinishedAt: finished,
              failedAt: finished,
              failCount: 2,
              failReason: 'boom',
              progress: 50,
            },
            { lastModifiedBy: 'w' },
          );
          const read = defined(await repo.getJobById(String(saved._id)), 'the job');
          expect(read.nextRunAt).to.equal(null);
          expect(read.lastFinishedAt?.getTime()).to.equal(finished.getTime());
          expect(read.failedAt?.getTime()).to.equal(finished.getTime());
          expect(read.failCount).to.equal(2);
          expect(read.failReason).to.equal('boom');
          expect(read.progress).to.equal(50);
          expect(read.data).to.deep.equal({ keep: true });

          await repo.removeJobs({ id: saved._id });
          let error: unknown;
          try {
            await repo.saveJobState(saved, undefined);
          } catch (e) {
            error = e;
          }
          expect(error).to.be.instanceOf(Error);
          expect(await repo.getJobById(String(saved._id))).to.equal(null);
        });
      });

      describe('remove / disable / enable / purge', function () {
        async function seed(): Promise<JobParameters[]> {
          return [
            await repo.saveJob(params({ name: 'a', data: { tenant: 't1', meta: { kind: 'x' } } }), undefined),
            await repo.saveJob(params({ name: 'a', data: { tenant: 't2', meta: { kind: 'y' } } }), undefined),
            await repo.saveJob(params({ name: 'b', data: { tenant: 't1', meta: { kind: 'x' } } }), undefined),
            await repo.saveJob(params({ name: 'c', data: { tenant: 't3' } }), undefined),
          ];
        }
        const names = async () => (await repo.queryJobs()).jobs.map((j) => `${j.name}:${(j.data as { tenant: string }).tenant}`).sort();

        it('removeJobs by id, ids, name, names, notNames and data; an empty filter removes nothing', async function () {
          const [a1, a2, b1, c1] = await seed();
          expect(await repo.removeJobs({})).to.equal(0);
          expect(await repo.removeJobs({ names: [] })).to.equal(0);
          expect(await repo.removeJobs({ id: a1._id })).to.equal(1);
          expect(await names()).to.deep.equal(['a:t2', 'b:t1', 'c:t3']);
          expect(await repo.removeJobs({ ids: [defined(a2._id, 'id'), defined(c1._id, 'id')] })).to.equal(2);
          expect(await names()).to.deep.equal(['b:t1']);
          expect(b1._id).to.be.a('string');

          await repo.purgeAllJobs();
          await seed();
          expect(await repo.removeJobs({ name: 'a' })).to.equal(2);
          expect(await names()).to.deep.equal(['b:t1', 'c:t3']);
          await repo.purgeAllJobs();
          await seed();
          expect(await repo.removeJobs({ names: ['a', 'c'] })).to.equal(3);
          expect(await names()).to.deep.equal(['b:t1']);
          await repo.purgeAllJobs();
          await seed();
          expect(await repo.removeJobs({ notNames: ['a'] })).to.equal(2);
          expect(await names()).to.deep.equal(['a:t1', 'a:t2']);
          await repo.purgeAllJobs();
          await seed();
          expect(await repo.removeJobs({ data: { meta: { kind: 'x' } } })).to.equal(2);
          expect(await names()).to.deep.equal(['a:t2', 'c:t3']);
          expect(await repo.removeJobs({ name: 'a', data: { tenant: 't3' } })).to.equal(0);
          expect(await repo.removeJobs({ name: 'c', data: { tenant: 't3' } })).to.equal(1);
          expect(await names()).to.deep.equal(['a:t2']);
        });

        it('disableJobs / enableJobs change the matching jobs, count only real changes, and gate locking', async function () {
          await seed();
          expect(await repo.disableJobs({})).to.equal(0);
          expect(await repo.disableJobs({ name: 'a' })).to.equal(2);
          expect(await repo.disableJobs({ name: 'a' })).to.equal(0);
          expect(await repo.disableJobs({ data: { tenant: 't1' } })).to.equal(1); // b:t1 (a:t1 already)
          const now = new Date();
          const next = (n: string) => repo.getNextJobToRun(n, at(1000), at(-600_000), now, undefined);
          expect(await next('a')).to.equal(undefined);
          expect(await next('b')).to.equal(undefined);
          expect((await repo.queryJobs({ includeDisabled: false })).total).to.equal(1);

          expect(await repo.enableJobs({ names: ['a', 'b'] })).to.equal(3);
          expect(await repo.enableJobs({ names: ['a', 'b'] })).to.equal(0);
          expect((await next('a'))?.name).to.equal('a');
          const read = await repo.queryJobs({ name: 'b' });
          expect(read.jobs[0].disabled).to.equal(false);
        });

        it('purgeAllJobs removes everything and returns the count', async function () {
          await seed();
          expect(await repo.purgeAllJobs()).to.equal(4);
          expect((await repo.queryJobs()).total).to.equal(0);
          expect(await repo.getDistinctJobNames()).to.deep.equal([]);
        });
      });

      describe('queries', function () {
        /** One job in each state, all named 'st'. */
        async function seedStates(): Promise<Record<string, JobParameters>> {
          const past = new Date(Date.now() - 60_000);
          const s = async (p: JobParameters, state?: Partial<JobParameters>): Promise<JobParameters> => {
            const saved = await repo.saveJob(p, undefined);
            if (!state) return saved;
            const next = { ...saved, ...state };
            await repo.saveJobState(next, undefined);
            return next;
          };
          return {
            running: await s(params({ name: 'st', data: { s: 'running' } }), { lockedAt: new Date(), lastRunAt: new Date(), nextRunAt: null }),
            scheduled: await s(params({ name: 'st', nextRunAt: at(3_600_000), data: { s: 'scheduled' } })),
            queued: await s(params({ name: 'st', nextRunAt: past, data: { s: 'queued' } })),
            completed: await s(params({ name: 'st', data: { s: 'completed' } }), { nextRunAt: null, lastRunAt: past, lastFinishedAt: past }),
            failed: await s(params({ name: 'st', data: { s: 'failed' } }), {
              nextRunAt: null,
              lastRunAt: past,
              lastFinishedAt: past,
              failedAt: past,
              failCount: 1,
              failReason: 'x',
            }),
            repeating: await s(params({ name: 'st', type: 'single', nextRunAt: at(60_000), repeatInterval: '1 minute', data: { s: 'repeating' } })),
            paused: await s(params({ name: 'st', nextRunAt: at(3_600_000), disabled: true, data: { s: 'paused' } })),
          };
        }

        it('computes each job state and filters on it (paused = disabled)', async function () {
          await seedStates();
          const all = await repo.queryJobs({ name: 'st' });
          expect(all.total).to.equal(7);
          const byData = Object.fromEntries(all.jobs.map((j) => [(j.data as { s: string }).s, j.state]));
          expect(byData).to.deep.equal({
            running: 'running',
            scheduled: 'scheduled',
            queued: 'queued',
            completed: 'completed',
            failed: 'failed',
            repeating: 'repeating',
            paused: 'scheduled',
          });
          for (const state of ['running', 'queued', 'completed', 'failed', 'repeating', 'paused'] as const) {
            const result = await repo.queryJobs({ state });
            expect(result.total, state).to.equal(1);
            expect((result.jobs[0].data as { s: string }).s, state).to.equal(state);
          }
          expect((await repo.queryJobs({ state: 'scheduled' })).total).to.equal(2);
        });

        it('counts states per name in getJobsOverview', async function () {
          await seedStates();
          await repo.saveJob(params({ name: 'zz', nextRunAt: at(-5) }), undefined);
          const overview = await repo.getJobsOverview();
          const st = overview.find((o) => o.name === 'st');
          expect(st).to.deep.equal({ name: 'st', total: 7, running: 1, scheduled: 2, queued: 1, completed: 1, failed: 1, repeating: 1, paused: 1 });
          expect(overview.find((o) => o.name === 'zz')).to.deep.include({ total: 1, queued: 1 });
          expect(overview).to.have.length(2);
        });

        it('pages with skip/limit and reports the total before paging', async function () {
          for (let p = 1; p <= 5; p++) await repo.saveJob(params({ name: 'page', priority: p, nextRunAt: at(p * 60_000) }), undefined);
          const page = await repo.queryJobs({ name: 'page', sort: { priority: 'asc' }, skip: 1, limit: 2 });
          expect(page.total).to.equal(5);
          expect(page.jobs.map((j) => j.priority)).to.deep.equal([2, 3]);
          const tail = await repo.queryJobs({ name: 'page', sort: { priority: 'desc' }, skip: 3 });
          expect(tail.jobs.map((j) => j.priority)).to.deep.equal([2, 1]);
          // default order: nextRunAt descending
          expect((await repo.queryJobs({ name: 'page' })).jobs.map((j) => j.priority)).to.deep.equal([5, 4, 3, 2, 1]);
          // with a state filter, paging applies after filtering
          const scheduled = await repo.queryJobs({ state: 'scheduled', sort: { priority: 'asc' }, skip: 2, limit: 2 });
          expect(scheduled.total).to.equal(5);
          expect(scheduled.jobs.map((j) => j.priority)).to.deep.equal([3, 4]);
        });

        it('filters by names, ids, search (case-insensitive, literal) and data', async function () {
          const x = await repo.saveJob(params({ name: 'send-mail', data: { to: 'a@x', opts: { html: true } } }), undefined);
          const y = await repo.saveJob(params({ name: 'send_sms', data: { to: 'b@x' } }), undefined);
          await repo.saveJob(params({ name: 'grant', data: { to: 'a@x' } }), undefined);
          expect((await repo.queryJobs({ names: ['send-mail', 'grant'] })).total).to.equal(2);
          expect((await repo.queryJobs({ ids: [String(x._id), String(y._id)] })).total).to.equal(2);
          expect((await repo.queryJobs({ id: String(y._id) })).jobs[0].name).to.equal('send_sms');
          expect((await repo.queryJobs({ search: 'SEND' })).total).to.equal(2);
          expect((await repo.queryJobs({ search: 'd_s' })).jobs.map((j) => j.name)).to.deep.equal(['send_sms']);
          expect((await repo.queryJobs({ search: '.*' })).total).to.equal(0);
          expect((await repo.queryJobs({ data: { to: 'a@x' } })).total).to.equal(2);
          expect((await repo.queryJobs({ data: { opts: { html: true } } })).jobs.map((j) => j.name)).to.deep.equal(['send-mail']);
          expect((await repo.queryJobs({ name: 'grant', data: { to: 'b@x' } })).total).to.equal(0);
        });

        it('getQueueSize counts the jobs whose nextRunAt has passed', async function () {
          await repo.saveJob(params({ name: 'q1', nextRunAt: at(-60_000) }), undefined);
          await repo.saveJob(params({ name: 'q2', nextRunAt: at(-1000) }), undefined);
          await repo.saveJob(params({ name: 'q3', nextRunAt: at(60_000) }), undefined);
          await repo.saveJob(params({ name: 'q4', nextRunAt: null }), undefined);
          expect(await repo.getQueueSize()).to.equal(2);
        });

        it('getDistinctJobNames lists each name once', async function () {
          for (const n of ['b', 'a', 'b', 'c']) await repo.saveJob(params({ name: n }), undefined);
          expect((await repo.getDistinctJobNames()).sort()).to.deep.equal(['a', 'b', 'c']);
        });
      });
    });

    // -------------------------------------------------------------------------------------------
    describe('with Agenda', function () {
      beforeEach(async function () {
        fx = await factory();
      });
      afterEach(teardown);

      function agendaOn(backend: AgendaBackend, options: Partial<Omit<AgendaOptions, 'backend'>> = {}): Agenda {
        const agenda = new Agenda({ backend, processEvery: PROCESS_EVERY, ...options });
        agendas.push(agenda);
        return agenda;
      }

      it('runs a job scheduled now exactly once and records its completion', async function () {
        const agenda = agendaOn(fx.backend);
        const runs: unknown[] = [];
        agenda.define('once', async (job: Job) => {
          runs.push(job.attrs.data);
        });
        const watched = watchScans(fx.backend.repository);
        await agenda.start();
        const done = nextEvent<[Job]>(agenda, 'complete:once');
        const job = await agenda.now('once', { n: 1 });
        await done;
        await watched.scans('once', 2);
        expect(runs).to.deep.equal([{ n: 1 }]);
        const stored = defined(await fx.backend.repository.getJobById(String(job.attrs._id)), 'the stored job');
        expect(stored.lastFinishedAt).to.be.instanceOf(Date);
        expect(stored.lastRunAt).to.be.instanceOf(Date);
        expect(stored.lockedAt ?? null).to.equal(null);
        expect(stored.nextRunAt).to.equal(null);
        expect(stored.failCount ?? 0).to.equal(0);
      });

      it('runs a job scheduled 300 ms ahead once that time has come, not before', async function () {
        const agenda = agendaOn(fx.backend);
        let ranAt = 0;
        agenda.define('later', async () => {
          ranAt = Date.now();
        });
        await agenda.start();
        const due = Date.now() + 300;
        const done = nextEvent(agenda, 'complete:later');
        await agenda.schedule(new Date(due), 'later', {});
        await done;
        expect(ranAt, 'ran before its time').to.be.at.least(due);
      });

      it('repeats an every() job, keeping a single stored job', async function () {
        const agenda = agendaOn(fx.backend);
        const runAt: number[] = [];
        agenda.define('tick', async (job: Job) => {
          runAt.push(defined(job.attrs.lastRunAt, 'lastRunAt').getTime());
        });
        await agenda.start();
        await agenda.every(150, 'tick');
        await waitUntil('3 runs of tick', () => runAt.length >= 3);
        // Each run is due one interval after the start of the one before, and none starts early.
        for (let i = 1; i < runAt.length; i++) expect(runAt[i] - runAt[i - 1]).to.be.at.least(150);
        // re-declaring the schedule (as every start does) must not add a second job
        await agenda.every(150, 'tick');
        const stored = await fx.backend.repository.queryJobs({ name: 'tick' });
        expect(stored.total).to.equal(1);
        expect(stored.jobs[0].type).to.equal('single');
        expect(stored.jobs[0].repeatInterval).to.equal(150);
        expect(stored.jobs[0].state).to.be.oneOf(['repeating', 'running']);
      });

      it('records failCount, failReason and failedAt of a failing job and emits fail', async function () {
        const agenda = agendaOn(fx.backend);
        agenda.define('boom', async () => {
          throw new Error('kaput');
        });
        await agenda.start();
        const failed = nextEvent<[Error, Job]>(agenda, 'fail');
        const completed = nextEvent(agenda, 'complete:boom');
        const job = await agenda.now('boom', {});
        const [error, failedJob] = await failed;
        await completed;
        expect(error.message).to.equal('kaput');
        expect(String(failedJob.attrs._id)).to.equal(String(job.attrs._id));
        const stored = defined(await fx.backend.repository.getJobById(String(job.attrs._id)), 'the stored job');
        expect(stored.failCount).to.equal(1);
        expect(stored.failReason).to.equal('kaput');
        expect(stored.failedAt).to.be.instanceOf(Date);
        expect(stored.lockedAt ?? null).to.equal(null);
        const [withState] = (await fx.backend.repository.queryJobs({ id: String(job.attrs._id) })).jobs;
        expect(withState.state).to.equal('failed');
      });

      it('upserts a unique job instead of duplicating it, and runs it once', async function () {
        const agenda = agendaOn(fx.backend);
        const runs: unknown[] = [];
        agenda.define('deliver', async (job: Job) => {
          runs.push(job.attrs.data);
        });
        await agenda.ready;
        const due = new Date(Date.now() + 200);
        for (const attempt of [1, 2, 3]) {
          await agenda.create('deliver', { delivery: 'd1', attempt }).unique({ 'data.delivery': 'd1' }).schedule(due).save();
        }
        await agenda.create('deliver', { delivery: 'd2', attempt: 1 }).unique({ 'data.delivery': 'd2' }).schedule(due).save();
        const stored = await fx.backend.repository.queryJobs({ name: 'deliver', sort: { name: 'asc' } });
        expect(stored.total).to.equal(2);
        expect(stored.jobs.map((j) => j.data).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).to.deep.equal([
          { delivery: 'd1', attempt: 3 },
          { delivery: 'd2', attempt: 1 },
        ]);

        const watched = watchScans(fx.backend.repository);
        await agenda.start();
        await waitUntil('both deliveries', () => runs.length >= 2);
        await watched.scans('deliver', 2);
        expect(runs).to.have.length(2);
      });

      it('keeps a saved job across a reopen of the store and runs it there', async function () {
        if (!fx.open) this.skip();
        const first = agendaOn(fx.backend);
        await first.ready;
        const saved = await first.schedule(new Date(Date.now() + 100), 'durable', { order: 42 });
        await fx.backend.disconnect();

        const reopened = defined(fx.open, 'fx.open')();
        others.push(reopened);
        const second = agendaOn(reopened);
        let seen: unknown;
        second.define('durable', async (job: Job) => {
          seen = job.attrs.data;
        });
        const done = nextEvent<[Job]>(second, 'complete:durable');
        await second.start();
        const [job] = await done;
        expect(String(job.attrs._id)).to.equal(String(saved.attrs._id));
        expect(seen).to.deep.equal({ order: 42 });
      });

      it('two Agenda instances on one store run each of 50 jobs exactly once', async function () {
        const otherBackend = openOther();
        if (!otherBackend) this.skip();
        const backends = [fx.backend, otherBackend];
        const watched = backends.map((backend) => watchScans(backend.repository));
        const runs = new Map<number, number>();
        const byInstance = [0, 0];
        const instances = backends.map((backend, k) => {
          const agenda = agendaOn(backend, { name: `worker-${k}`, lockLimit: 5 });
          agenda.define('batch', async (job: Job) => {
            const i = (job.attrs.data as { i: number }).i;
            runs.set(i, (runs.get(i) ?? 0) + 1);
            byInstance[k]++;
            await sleep(5);
          });
          return agenda;
        });
        await Promise.all(instances.map((a) => a.start()));
        await Promise.all(Array.from({ length: 50 }, (_, i) => instances[i % 2].now('batch', { i })));

        await waitUntil('50 jobs run', () => runs.size === 50, 120_000);
        await waitUntil('all jobs finished and unlocked', async () => {
          const { jobs } = await fx.backend.repository.queryJobs({ name: 'batch' });
          return jobs.length === 50 && jobs.every((j) => j.state === 'completed');
        });
        await Promise.all(watched.map((w) => w.scans('batch', 2)));
        const total = [...runs.values()].reduce((a, b) => a + b, 0);
        expect(total, 'runs in all').to.equal(50);
        expect(
          [...runs.values()].every((n) => n === 1),
          'each job once',
        ).to.equal(true);
        expect(byInstance[0], 'worker-0 took part').to.be.greaterThan(0);
        expect(byInstance[1], 'worker-1 took part').to.be.greaterThan(0);
      });
    });
  });
}
