// Replay benchmark: the projection runner catching up from position 0 into an empty in-memory
// read store, end to end (log reads, parsing, every projection), against a raw better-sqlite3
// read + JSON.parse loop over the same file in the same run. Two logs: the everyday mix of
// replay-mix.ts and the posts-only worst case.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { restoreReadModels, saveReadModels } from '../../projections/snapshots.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { Projection, ProjectionContext } from '../../projections/types.ts';
import { checkAgainstSchemas, generateLog, MIX } from './replay-mix.ts';

const REPLAY_N = Number(process.env.BENCH_REPLAY_EVENTS ?? 500_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Writes `count` generated events into a new SQLite log file (raw inserts, one transaction per 50k). */
export async function fill(
  path: string,
  kind: 'mix' | 'posts' | 'scale',
  count: number,
  scaleAgents?: number,
  /** Called after each batch with the events written so far. */
  progress?: (written: number) => void,
): Promise<void> {
  const log = SqliteEventLog.open({ path });
  await log.close(); // creates the schema
  const db = new Database(path);
  const ins = db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  const revisions = new Map<string, number>();
  const it = generateLog(kind, count, scaleAgents);
  checkAgainstSchemas(generateLog(kind, Math.min(count, 20_000), scaleAgents));
  const batch = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      const r = it.next();
      if (r.done) return;
      const e = r.value;
      const revision = (revisions.get(e.stream) ?? -1) + 1;
      revisions.set(e.stream, revision);
      ins.run(e.id, e.stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
    }
  });
  for (let done = 0; done < count; done += 50_000) {
    batch(Math.min(50_000, count - done));
    progress?.(Math.min(count, done + 50_000));
  }
  db.close();
}

/** The ceiling: every row read and both JSON columns parsed, nothing else. */
function rawReadParse(path: string): number {
  const reader = new Database(path, { readonly: true });
  const t = performance.now();
  let count = 0;
  for (const row of reader.prepare('SELECT position, id, stream, revision, type, data, metadata FROM events ORDER BY position').iterate() as Iterable<{
    data: string;
    metadata: string;
  }>) {
    JSON.parse(row.data);
    JSON.parse(row.metadata);
    count++;
  }
  const rate = count / ((performance.now() - t) / 1000);
  reader.close();
  return rate;
}

/** Heap in use after a full collection, bytes (NaN unless node runs with --expose-gc, as npm run bench does). */
function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return Number.NaN;
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Events/s of a catch-up from 0, the share of its time spent building the deferred indexes at the
 * end, and the heap the caught-up read models hold (bytes).
 */
async function runnerCatchUp(
  path: string,
  count: number,
  then?: (store: MemoryReadStore, log: SqliteEventLog, position: number) => Promise<void>,
  projections: Projection[] = allProjections,
): Promise<{ rate: number; indexShare: number; heap: number }> {
  const heapBefore = heapAfterGc();
  const log = SqliteEventLog.open({ path });
  const store = new MemoryReadStore();
  let indexMs = 0;
  const build = store.buildIndexes.bind(store);
  store.buildIndexes = (names) => {
    const t0 = performance.now();
    build(names);
    indexMs += performance.now() - t0;
  };
  const runner = new ProjectionRunner(log, store, projections);
  const t = performance.now();
  await runner.start();
  const elapsed = performance.now() - t;
  await runner.stop();
  const heap = heapAfterGc() - heapBefore;
  await then?.(store, log, runner.position);
  await log.close();
  return { rate: count / (elapsed / 1000), indexShare: indexMs / elapsed, heap };
}

/** Events/s of the runner's own read path alone: paged readAll into RecordedEvents, nothing applied. */
async function readPathOnly(path: string): Promise<number> {
  const log = SqliteEventLog.open({ path });
  const t = performance.now();
  let count = 0;
  let after = 0;
  for (;;) {
    const page = await log.readAll({ after, maxCount: 5000 });
    if (page.length === 0) break;
    count += page.length;
    after = page[page.length - 1].position;
  }
  const rate = count / ((performance.now() - t) / 1000);
  await log.close();
  return rate;
}

/** Events/s of a catch-up from 0 with every secondary index taken out (unique ones kept): the documents alone. */
async function documentsOnlyCatchUp(path: string, count: number): Promise<number> {
  const projections = allProjections.map((p) => ({
    ...p,
    collections: p.collections.map((c) => ({ ...c, indexes: c.indexes.filter((ix) => ix.unique === true) })),
  }));
  return (await runnerCatchUp(path, count, undefined, projections)).rate;
}

/** Where a catch-up's time goes, each step against a ceiling measured just before it. */
export interface ReplayFloors {
  /** The runner's read path alone (no projection), as a ratio to the ceiling. */
  readPath: number;
  /** Every projection, no secondary index, as a ratio to the ceiling. */
  documentsOnly: number;
}

export interface SnapshotFigures {
  /** A start from 0: the catch-up, ms. */
  replayMs: number;
  /** A start from the snapshot of that state: load, catch-up of nothing, index builds left, ms. */
  startMs: number;
  /** Writing the snapshot (a clean stop), ms, and its size. */
  saveMs: number;
  bytes: number;
}

/** Writes the replayed state as a snapshot, as a clean stop does. */
async function saveSnapshot(store: MemoryReadStore, log: SqliteEventLog, position: number, path: string): Promise<{ saveMs: number; bytes: number }> {
  const t = performance.now();
  const bytes = (await saveReadModels(store, log, position, path, new Date().toISOString())) ?? 0;
  return { saveMs: performance.now() - t, bytes };
}

/** A start of a fresh store from the snapshot, as the service makes it (nothing left to replay), ms. */
async function startFromSnapshot(logPath: string, path: string): Promise<number> {
  const log = SqliteEventLog.open({ path: logPath });
  const t = performance.now();
  const store = new MemoryReadStore();
  const outcome = await restoreReadModels(store, log, path);
  if (outcome.kind !== 'restored') throw new Error(`snapshot not restored: ${JSON.stringify(outcome)}`);
  const runner = new ProjectionRunner(log, store, allProjections);
  await runner.start();
  const startMs = performance.now() - t;
  await runner.stop();
  await log.close();
  rmSync(path, { force: true });
  return startMs;
}

export interface ReplayFigures {
  log: 'mixed' | 'posts only';
  /** Ceiling: raw read + JSON.parse, events/s. */
  raw: number;
  /** ProjectionRunner catch-up from 0, events/s. */
  replay: number;
  ratio: number;
  ratios: number[];
  /** Share of the catch-up spent building the deferred indexes at its end. */
  indexShare: number;
  /** Heap held by the caught-up read models, bytes. */
  heap: number;
  /** A start from a read-model snapshot of the same state (median round). */
  snapshot: SnapshotFigures;
  floors: ReplayFloors;
}

/** CPU microseconds per event of each projection applied alone to the first `n` events (median of 3). */
async function perProjection(path: string, n: number): Promise<Array<[string, number, number]>> {
  const log = SqliteEventLog.open({ path });
  const events: RecordedEvent[] = [];
  while (events.length < n) {
    const page = await log.readAll({ after: events.length ? events[events.length - 1].position : 0, maxCount: 5000 });
    if (page.length === 0) break;
    events.push(...page.slice(0, n - events.length));
  }
  await log.close();
  const out: Array<[string, number, number]> = [];
  for (const p of allProjections) {
    const handled = events.filter((e) => p.handles.has(e.type));
    if (handled.length === 0) continue;
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const store = new MemoryReadStore();
      for (const spec of p.collections) await store.ensureCollection(spec);
      const ctx: ProjectionContext = { collection: (name) => store.collection(name) };
      await p.init?.(ctx);
      const t = process.cpuUsage();
      for (const e of handled) await p.apply(e, ctx);
      const used = process.cpuUsage(t);
      runs.push((used.user + used.system) / events.length);
    }
    runs.sort((a, b) => a - b);
    out.push([p.name, handled.length / events.length, runs[1]]);
  }
  return out.sort((a, b) => b[2] - a[2]);
}

export async function replayBenchmarks(say: (line: string) => void): Promise<ReplayFigures[]> {
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-replay-'));
  try {
    const results: ReplayFigures[] = [];
    for (const kind of ['mix', 'posts'] as const) {
      const path = join(dir, `${kind}.sqlite`);
      await fill(path, kind, REPLAY_N);
      // Ceiling and runner in alternation, ROUNDS times: the median of the per-round ratios.
      // Each round also starts a fresh store from a snapshot of the replayed state.
      const rounds: Array<{ raw: number; rate: number; ratio: number; indexShare: number; heap: number; snapshot: SnapshotFigures }> = [];
      for (let r = 0; r < ROUNDS; r++) {
        const raw = rawReadParse(path);
        const snapshotPath = join(dir, 'read-models.snapshot');
        let saved = { saveMs: 0, bytes: 0 };
        const { rate, indexShare, heap } = await runnerCatchUp(path, REPLAY_N, async (store, log, position) => {
          saved = await saveSnapshot(store, log, position, snapshotPath);
        });
        // The replayed store is garbage by now: the start from the snapshot has the heap to itself.
        const snapshot = { replayMs: (REPLAY_N / rate) * 1000, startMs: await startFromSnapshot(path, snapshotPath), ...saved };
        rounds.push({ raw, rate, ratio: rate / raw, indexShare, heap, snapshot });
      }
      const ratios = rounds.map((x) => x.ratio);
      const mid = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
      const snapshot = [...rounds].sort((a, b) => a.snapshot.startMs / a.snapshot.replayMs - b.snapshot.startMs / b.snapshot.replayMs)[
        Math.floor(rounds.length / 2)
      ].snapshot;
      const floors = { readPath: (await readPathOnly(path)) / rawReadParse(path), documentsOnly: 0 };
      floors.documentsOnly = (await documentsOnlyCatchUp(path, REPLAY_N)) / rawReadParse(path);
      results.push({
        log: kind === 'mix' ? 'mixed' : 'posts only',
        raw: mid.raw,
        replay: mid.rate,
        ratio: mid.ratio,
        ratios,
        indexShare: mid.indexShare,
        heap: mid.heap,
        snapshot,
        floors,
      });
      if (kind === 'mix') {
        const costs = await perProjection(path, 100_000);
        say(`## Replay (${REPLAY_N.toLocaleString('en')} events per log, every projection, into the in-memory read store)`);
        say('');
        say(`Mixed log, per 100 events: ${MIX.map(([t, k]) => `${k} ${t}`).join(', ')} (an estimate of a busy day, after 2,000 registrations).`);
        say('The posts-only log is the worst case: every event is a post, which six read models follow.');
        say('');
        say('Projection cost on the mixed log (each applied alone, CPU time, first 100,000 events):');
        say('');
        say('| projection | share of events it handles | µs per event of the log |');
        say('|---|---|---|');
        for (const [name, share, us] of costs) say(`| ${name} | ${(share * 100).toFixed(0)}% | ${us.toFixed(2)} |`);
        say('');
      }
    }
    say(`Ceiling and runner measured in alternation, ${ROUNDS} rounds per log: the round with the median ratio, and every round's ratio.`);
    say('');
    say(
      '| log | raw SQLite read + JSON.parse (ceiling), events/s | ProjectionRunner catch-up from 0, end to end, events/s | ratio | per round | share of the catch-up spent building indexes | heap held by the read models, MB (KB per event) |',
    );
    say('|---|---|---|---|---|---|---|');
    for (const r of results)
      say(
        `| ${r.log} | ${r.raw.toFixed(0)} | ${r.replay.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.ratios.map((x) => x.toFixed(2)).join(', ')} | ${(r.indexShare * 100).toFixed(0)}% | ${(r.heap / 1e6).toFixed(0)} (${(r.heap / REPLAY_N / 1e3).toFixed(2)}) |`,
      );
    say('');
    say(
      "Where the catch-up goes, each step as a ratio to a ceiling measured right after it (one round per log): the runner's own read path with no projection applied, then every projection with its documents but no secondary index (unique indexes kept), then the whole catch-up (the median round above). The target is 0.6.",
    );
    say('');
    say('| log | read path alone | documents, no secondary index | whole catch-up |');
    say('|---|---|---|---|');
    for (const r of results) say(`| ${r.log} | ${r.floors.readPath.toFixed(2)} | ${r.floors.documentsOnly.toFixed(2)} | ${r.ratio.toFixed(2)} |`);
    say('');
    say('### Start-up from a read-model snapshot');
    say('');
    say(
      `The same state as each catch-up above, written as a snapshot (what a clean stop does), then loaded into a fresh store by a start (${ROUNDS} rounds; the round with the median ratio).`,
    );
    say('');
    say('| log | start from 0 (the catch-up above), ms | start from the snapshot, ms | ratio | snapshot written at the stop, ms | snapshot size, MB |');
    say('|---|---|---|---|---|---|');
    for (const r of results) {
      const s = r.snapshot;
      say(
        `| ${r.log} | ${s.replayMs.toFixed(0)} | ${s.startMs.toFixed(0)} | ${(s.startMs / s.replayMs).toFixed(2)} | ${s.saveMs.toFixed(0)} | ${(s.bytes / 1e6).toFixed(0)} |`,
      );
    }
    say('');
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
