// `npm run bench -- scale [--sizes=1,3,10]`: the service on a generated network of 100,000 agents
// and N million events in the scale mix (replay-mix.ts SCALE_MIX), written straight into the event
// log's table (bulk inserts, as the replay bench fills its logs); then, per size: the first start
// (a replay of the whole log), the heap and resident memory held, the write path and the feed read
// against bare Koa on that data, as-of reads, ordinary reads beside a flood of anonymous as-of
// requests, a clean stop and the start after it, and the start after a kill -9. The figures
// replace the generated "Scale" part of docs/PERFORMANCE.md after each size (BENCH_WRITE=0: not
// at all), so a size that fails, or a run stopped half-way, keeps the sizes measured before it.
import type autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { rawRequest as request } from '../helpers/service.ts';
import { checkAgainstSchemas, generateLog, id } from './replay-mix.ts';
import { fill } from './replay.ts';

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Requests answered. */
  total?: number;
}

export interface ScaleHelpers {
  spawnServer(args: string[], env: Record<string, string>, startTimeoutMs?: number): Promise<{ child: ChildProcess; url: string }>;
  stopServer(child: ChildProcess): Promise<void>;
  load(url: string, path: string, bodies: () => { body: string; headers?: Record<string, string> }): Promise<Load>;
  loadGet(url: string, path: string, headers?: Record<string, string>): Promise<Load>;
  rounds: number;
  duration: number;
}

export interface ScaleFigures {
  millions: number;
  events: number;
  agents: number;
  fillSeconds: number;
  firstStartSeconds: number;
  heapMb: number;
  rssMb: number;
  peakRssMb: number;
  writeRatio: number;
  writeP99: number;
  /** The service's CPU per write (user + system, its /metrics), ms: the median over the rounds. */
  writeCpuMs: number;
  feedRatio: number;
  feedP99: number;
  asOfIndexSeconds: number;
  /** Uncached as-of reads of a generated agent's profile (a few of its events per version), ms. */
  asOfMedianMs: number;
  asOfMaxMs: number;
  /** The same of an agent updated AS_OF_BUSY times, at positions spread over its updates (up to AS_OF_EVERY - 1 events folded), ms. */
  asOfBusyMedianMs: number;
  asOfBusyMaxMs: number;
  /** The service's CPU per as-of read of each kind, ms (steadier than the times on a busy machine). */
  asOfCpuMs: number;
  asOfBusyCpuMs: number;
  /** Ordinary reads alone and beside a flood of anonymous as-of requests, one entry per round. */
  contention: Contention[];
  stopSeconds: number;
  cleanStartSeconds: number;
  cleanHeapMb: number;
  cleanRssMb: number;
  crashStartSeconds: number;
}

/** One window of load, as the load generator and the service itself saw it. */
export interface Window {
  /** The profile read's p99 and max, ms, and its req/s (the load generator's view). */
  p99: number;
  max: number;
  rps: number;
  /** The service's own: event-loop delay p99 and max over the window, ms (its /metrics). */
  loopP99: number;
  loopMax: number;
  /** The service's GC pauses over the window, ms: young generation (scavenges), and major (mark-compact, incremental steps included). */
  gcMinorMs: number;
  gcMajorMs: number;
  /** GC pauses of 100 ms or more in the window. */
  gcLong: number;
  /** The service's CPU over the window, seconds (user + system). */
  cpuSeconds: number;
  /** The machine's 1-minute load average at the end of the window. */
  load: number;
}

/** One round: ordinary profile reads alone, then the same beside anonymous as-of requests. */
export interface Contention {
  alone: Window;
  beside: Window;
  /** The anonymous as-of requests answered during `beside` (req/s), and how many were not a 401. */
  floodRps: number;
  floodNot401: number;
}

/** A size that could not be measured, and why. */
export interface ScaleFailure {
  millions: number;
  failed: string;
}

const START_TIMEOUT_MS = 60 * 60_000;
/** Profile updates of one agent before the as-of reads: twice the as-of index's default AS_OF_EVERY. */
const AS_OF_BUSY = 1_000;
/** The ordinary reads' and the anonymous as-of flood's connections. */
const READERS = 10;
const FLOODERS = 20;
/**
 * Agents writing the bench's posts: enough that no balance runs out over the warm-up and the
 * rounds (50 credits = 500 posts each), since a refused post would count as a fast one.
 */
const WRITERS = 1_000;
/** Rounds of the write path and the feed read, each against bare Koa, after one warm-up load of each. */
const LOAD_ROUNDS = 5;
/**
 * Resident memory per event assumed for a size until one of at least a million events is measured
 * (then that size's figure: a small size's fixed part would overstate it), and the room left beside it.
 */
const DEFAULT_RSS_PER_EVENT = 2_100;
const SPARE_MEMORY = 2 * 2 ** 30;
/** Disk per event: the log (0.77 GB per million), the read-model file (1.36 GB per million) or the snapshot, and the as-of index, with room. */
const DISK_PER_EVENT = 3_000;
const METRICS_TOKEN = 'scale-bench-metrics-token-0123456789';
const SECRET_KEY = 'scale-bench-secret-key-0123456789-abcdefghijkl';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (t: number) => (performance.now() - t) / 1000;
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The sizes asked for: `--sizes=0.1,0.3` (or `--sizes 0.1,0.3`), else BENCH_SCALE_SIZES, else 1,3,10 million. */
export function scaleSizes(argv: string[]): number[] {
  const i = argv.findIndex((a) => a.startsWith('--sizes'));
  const raw = i < 0 ? (process.env.BENCH_SCALE_SIZES ?? '1,3,10') : argv[i].includes('=') ? argv[i].split('=')[1] : (argv[i + 1] ?? '');
  const sizes = raw.split(',').map((x) => Number(x.trim()));
  if (sizes.length === 0 || sizes.some((x) => !(x > 0 && x <= 100))) throw new Error(`--sizes takes millions of events, e.g. 0.1,1,3 (got "${raw}")`);
  return sizes;
}

/** Heap used and resident memory of the service (its /metrics), and its peak resident memory (VmHWM). */
async function memoryOf(url: string, pid: number | undefined) {
  const r = await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(r.text)?.[1] ?? Number.NaN);
  let peak = Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    peak = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
  } catch {
    // not Linux
  }
  return { heap: metric('nodejs_heap_size_used_bytes'), rss: metric('process_resident_memory_bytes'), peak };
}

/** The service's counters a window is measured with: reading them also starts its event-loop delay histogram again (prom-client). */
async function gauges(url: string) {
  const r = await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const value = (name: string, labels = '') => {
    const line = r.text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return Number(line?.split(' ').at(-1) ?? Number.NaN);
  };
  const gcSum = (kind: string) => value('nodejs_gc_duration_seconds_sum', `{kind="${kind}"}`) || 0;
  const gcUnder = (kind: string) => value('nodejs_gc_duration_seconds_bucket', `{le="0.1",kind="${kind}"}`) || 0;
  const gcCount = (kind: string) => value('nodejs_gc_duration_seconds_count', `{kind="${kind}"}`) || 0;
  const kinds = ['minor', 'major', 'incremental'];
  return {
    minor: gcSum('minor'),
    major: gcSum('major') + gcSum('incremental'),
    long: kinds.reduce((n, k) => n + gcCount(k) - gcUnder(k), 0),
    cpu: value('process_cpu_seconds_total'),
    loopP99: value('nodejs_eventloop_lag_p99_seconds'),
    loopMax: value('nodejs_eventloop_lag_max_seconds'),
  };
}

const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/**
 * autocannon in a process of its own, its JSON result: the bench process (its heap, its GC, the
 * other load generator) stays out of the latencies measured.
 */
function cannon(url: string, connections: number, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [autocannonCli, '-c', String(connections), '-d', String(seconds), '-j', url], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(out) as autocannon.Result);
      } catch {
        reject(new Error(`autocannon exited ${code} without a result`));
      }
    });
  });
}

/** Ordinary profile reads for `seconds`, with the service's own view of the same window. */
async function window(url: string, readUrl: string, seconds: number, during?: Promise<unknown>): Promise<Window> {
  const g0 = await gauges(url);
  const r = await cannon(readUrl, READERS, seconds);
  const g1 = await gauges(url);
  await during;
  return {
    p99: r.latency.p99,
    max: r.latency.max,
    rps: r.requests.average,
    loopP99: g1.loopP99 * 1000,
    loopMax: g1.loopMax * 1000,
    gcMinorMs: (g1.minor - g0.minor) * 1000,
    gcMajorMs: (g1.major - g0.major) * 1000,
    gcLong: g1.long - g0.long,
    cpuSeconds: g1.cpu - g0.cpu,
    load: os.loadavg()[0],
  };
}

/** Waits until the service's read models have applied every event its log holds (its /api/health). */
async function caughtUp(url: string): Promise<void> {
  for (let polls = 0; ; polls++) {
    const r = await request(url, 'GET', '/api/health');
    if (r.body.lag_events === 0) return;
    if (polls > 6_000) throw new Error(`the read models did not catch up: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Bytes of memory the machine has available now (MemAvailable), or its free memory where /proc is not. */
function availableMemory(): number {
  try {
    return Number(/MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024 || os.freemem();
  } catch {
    return os.freemem();
  }
}

/**
 * Refuses a size the machine cannot hold now (memory for the service at the resident memory per
 * event measured so far, disk for its data), before anything is written for it.
 */
function checkRoom(events: number, rssPerEvent: number, dir: string): void {
  const gb = (b: number) => (b / 2 ** 30).toFixed(1);
  const memory = events * rssPerEvent * 1.15 + SPARE_MEMORY;
  const available = availableMemory();
  if (memory > available)
    throw new Error(
      `skipped: the service would need about ${gb(events * rssPerEvent)} GB resident (${rssPerEvent} bytes per event) and ${gb(SPARE_MEMORY)} GB spare, the machine has ${gb(available)} GB available`,
    );
  const disk = statfsSync(dir);
  const free = disk.bavail * disk.bsize;
  if (events * DISK_PER_EVENT > free)
    throw new Error(`skipped: the data would need about ${gb(events * DISK_PER_EVENT)} GB of disk, ${dir} has ${gb(free)} GB free`);
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Prints `what` and the seconds since `t` every 30 s until the promise settles. */
async function ticking<T>(what: string, say: (line: string) => void, run: Promise<T>): Promise<T> {
  const t = performance.now();
  const timer = setInterval(() => say(`  ... ${what}: ${seconds(t).toFixed(0)} s (load ${os.loadavg()[0].toFixed(1)})`), 30_000);
  try {
    return await run;
  } finally {
    clearInterval(timer);
  }
}

async function oneSize(millions: number, h: ScaleHelpers, say: (line: string) => void, rssPerEvent: number): Promise<ScaleFigures> {
  const events = Math.round(millions * 1_000_000);
  const agents = Math.min(100_000, Math.round(events / 10));
  checkRoom(events, rssPerEvent, os.tmpdir());
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-scale-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0', METRICS_TOKEN, SECRET_KEY };
  // Every process started for this size, stopped whatever happens to it.
  const children = new Set<ChildProcess>();
  const spawnServer = async (args: string[], e: Record<string, string>, timeout?: number) => {
    const started = await h.spawnServer(args, e, timeout);
    children.add(started.child);
    started.child.once('exit', () => children.delete(started.child));
    return started;
  };
  const start = (what: string) => ticking(what, say, spawnServer(['api/server.ts'], env, START_TIMEOUT_MS));
  try {
    say(`- ${millions}M: filling ${events.toLocaleString('en')} events, ${agents.toLocaleString('en')} agents ...`);
    let t = performance.now();
    let shown = 0;
    await fill(join(dataDir, 'events.sqlite'), 'scale', events, agents, (written) => {
      if (written < shown + 1_000_000 && written < events) return;
      shown = written;
      const s = seconds(t);
      const bench = process.memoryUsage();
      say(
        `  ... filled ${written.toLocaleString('en')} in ${s.toFixed(0)} s (${((s / written) * 1e6).toFixed(0)} s per million, done in ~${(((events - written) / written) * s).toFixed(0)} s; bench heap ${mb(bench.heapUsed)} MB, RSS ${mb(bench.rss)} MB; load ${os.loadavg()[0].toFixed(1)})`,
      );
    });
    const fillSeconds = seconds(t);

    // The first start: no snapshot, the whole log replayed.
    say(`  filled in ${fillSeconds.toFixed(0)} s; first start (the whole log replayed) ...`);
    t = performance.now();
    let svc = await start('first start');
    const firstStartSeconds = seconds(t);
    const held = await memoryOf(svc.url, svc.child.pid);
    say(`  started in ${firstStartSeconds.toFixed(0)} s (heap ${mb(held.heap)} MB, RSS ${mb(held.rss)} MB); write path and feed read ...`);

    // Writers with keys (the generated agents' keys are not known), each with credits for the rounds.
    const keys: string[] = [];
    const writers: string[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const r = await request(svc.url, 'POST', '/api/protocol/register', {
        body: { name: `Scale writer ${i}`, capabilities: ['lead-gen'], owner_name: 'W', owner_email: `scale-${i}-${randomUUID()}@example.com` },
      });
      if (r.status !== 201 && r.status !== 200) throw new Error(`registration: ${r.status} ${r.text}`);
      keys.push(r.body.api_key as string);
      writers.push(r.body.agent_id as string);
    }
    const path = '/api/feed/posts?limit=20';
    const page = await request(svc.url, 'GET', path);
    const pageFile = join(dataDir, 'feed-page.json');
    writeFileSync(pageFile, page.text);
    const bare = await spawnServer(['test/bench/bare-koa.ts'], { BARE_BODY_FILE: pageFile });
    let k = 0;
    const post = () => ({
      body: JSON.stringify({
        title: `Scale post ${k} ${randomUUID()}`,
        body: 'A signal with #bench and #scale',
        post_type: 'signal_found',
        room_slug: 'lead-gen',
      }),
      headers: { 'x-api-key': keys[k++ % keys.length] },
    });
    const bareBody = () => ({ body: JSON.stringify({ title: 'Bench', body: 'Bench body #tag', post_type: 'signal_found' }) });
    // Warm-ups: the first load on a started service runs on empty caches and an empty WAL, faster
    // than every load after it; the rounds measure the path as it runs for good.
    await h.load(bare.url, '/', bareBody);
    await h.load(svc.url, '/api/feed/posts', post);
    await h.loadGet(svc.url, path);
    const writes: Array<{ ceiling: Load; load: Load; cpuMs: number }> = [];
    const reads: Array<{ ceiling: Load; load: Load }> = [];
    for (let r = 0; r < LOAD_ROUNDS; r++) {
      const ceiling = await h.load(bare.url, '/', bareBody);
      const cpu0 = (await gauges(svc.url)).cpu;
      const load = await h.load(svc.url, '/api/feed/posts', post);
      await caughtUp(svc.url); // the read models' share of the writes counted too
      const cpu = (await gauges(svc.url)).cpu - cpu0;
      if (load.non2xx > 0) throw new Error(`write path: ${load.non2xx} of the posts were refused (a refusal would count as a fast write)`);
      writes.push({ ceiling, load, cpuMs: (cpu * 1000) / (load.total ?? load.rps * h.duration) });
      reads.push({ ceiling: await h.loadGet(bare.url, path), load: await h.loadGet(svc.url, path) });
    }
    await h.stopServer(bare.child);

    // As-of reads: of a generated agent, and of a writer first updated AS_OF_BUSY times (so its
    // reads fold up to AS_OF_EVERY - 1 events, the bound). The first read builds the index (503
    // until it has read the log).
    say(`  ${AS_OF_BUSY} profile updates, the as-of index and as-of reads ...`);
    const positionNow = async () => (await request(svc.url, 'GET', '/api/health')).body.projection_position as number;
    const busyFrom = await positionNow();
    for (let i = 0; i < AS_OF_BUSY; i++) {
      const r = await request(svc.url, 'PATCH', '/api/protocol/me', { apiKey: keys[0], body: { description: `Update ${i}` } });
      if (r.status !== 200) throw new Error(`profile update: ${r.status} ${r.text}`);
    }
    const subject = id('agt', 0);
    const asOfPath = (p: number, agent = subject) => `/api/protocol/agents/${agent}?as_of=${p}`;
    const head = await positionNow();
    t = performance.now();
    await ticking(
      'as-of index',
      say,
      (async () => {
        for (;;) {
          const r = await request(svc.url, 'GET', asOfPath(head), { apiKey: keys[0] });
          if (r.status === 200) break;
          if (r.status !== 503) throw new Error(`as-of read: ${r.status} ${r.text}`);
        }
      })(),
    );
    const asOfIndexSeconds = seconds(t);
    /** 50 uncached reads of `agent` at positions spread over (from, to], one at a time, ms each. */
    const asOfReads = async (agent: string, from: number, to: number) => {
      const times: number[] = [];
      const cpu0 = (await gauges(svc.url)).cpu;
      for (let i = 1; i <= 50; i++) {
        const p = Math.max(1, from + Math.floor(((to - from) * i) / 50));
        const t1 = performance.now();
        const r = await request(svc.url, 'GET', asOfPath(p, agent), { apiKey: keys[1] });
        times.push(performance.now() - t1);
        if (r.status !== 200 && r.status !== 404) throw new Error(`as-of read at ${p}: ${r.status} ${r.text}`);
      }
      return { times, cpuMs: (((await gauges(svc.url)).cpu - cpu0) * 1000) / times.length };
    };
    // The generated agent over the whole log (head itself was read above), the busy one over its updates.
    const { times: asOfTimes, cpuMs: asOfCpuMs } = await asOfReads(subject, 0, head - 1);
    const { times: busyTimes, cpuMs: asOfBusyCpuMs } = await asOfReads(writers[0], busyFrom, head);

    // Ordinary reads of the same profile by READERS connections, alone, then beside FLOODERS
    // connections asking for it anonymously with as_of (each refused 401), round after round; the
    // load generators run in processes of their own, and the service's event-loop delay and GC
    // pauses over each window are read from its /metrics.
    say('  ordinary reads alone and beside anonymous as-of requests ...');
    const readUrl = `${svc.url}/api/protocol/agents/${subject}`;
    const contention: Contention[] = [];
    for (let r = 0; r < h.rounds; r++) {
      const alone = await window(svc.url, readUrl, h.duration);
      // The flood starts first and ends last, so it covers the whole window of the ordinary reads.
      const flood = cannon(svc.url + asOfPath(head), FLOODERS, h.duration + 2);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const beside = await window(svc.url, readUrl, h.duration);
      const f = await flood;
      const codes = f.statusCodeStats as unknown as Record<string, { count: number } | undefined>;
      contention.push({ alone, beside, floodRps: f.requests.average, floodNot401: f.requests.total - (codes['401']?.count ?? 0) });
    }

    // A clean stop (the snapshot written), the start after it, then a kill -9 and the start after that.
    say('  clean stop, start after it, kill -9, start after that ...');
    t = performance.now();
    await h.stopServer(svc.child);
    const stopSeconds = seconds(t);
    t = performance.now();
    svc = await start('start after a clean stop');
    const cleanStartSeconds = seconds(t);
    const clean = await memoryOf(svc.url, svc.child.pid);
    // Writes after the snapshot, so the crash start has a tail to replay beyond it.
    for (let i = 0; i < 200; i++) {
      const p = post();
      await request(svc.url, 'POST', '/api/feed/posts', { rawBody: p.body, headers: { 'content-type': 'application/json', ...p.headers } });
    }
    await killHard(svc.child);
    t = performance.now();
    svc = await start('start after kill -9');
    const crashStartSeconds = seconds(t);
    await h.stopServer(svc.child);

    const ratio = (rs: Array<{ ceiling: Load; load: Load }>) => median(rs.map((r) => r.load.rps / r.ceiling.rps));
    const figures: ScaleFigures = {
      millions,
      events,
      agents,
      fillSeconds,
      firstStartSeconds,
      heapMb: mb(held.heap),
      rssMb: mb(held.rss),
      peakRssMb: mb(held.peak),
      writeRatio: ratio(writes),
      writeP99: median(writes.map((r) => r.load.p99)),
      writeCpuMs: median(writes.map((r) => r.cpuMs)),
      feedRatio: ratio(reads),
      feedP99: median(reads.map((r) => r.load.p99)),
      asOfIndexSeconds,
      asOfMedianMs: median(asOfTimes),
      asOfMaxMs: Math.max(...asOfTimes),
      asOfBusyMedianMs: median(busyTimes),
      asOfBusyMaxMs: Math.max(...busyTimes),
      asOfCpuMs,
      asOfBusyCpuMs,
      contention,
      stopSeconds,
      cleanStartSeconds,
      cleanHeapMb: mb(clean.heap),
      cleanRssMb: mb(clean.rss),
      crashStartSeconds,
    };
    say(`  ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await Promise.all([...children].map((c) => killHard(c)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const BEGIN = '<!-- scale:begin (generated by `npm run bench -- scale`) -->';
const END = '<!-- scale:end -->';

/** Replaces the generated Scale part of docs/PERFORMANCE.md (appended when it has none). */
export function writeScaleSection(file: string, lines: string[]): void {
  const text = readFileSync(file, 'utf8');
  const block = [BEGIN, ...lines, END].join('\n');
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  writeFileSync(file, a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + END.length) : `${text.trimEnd()}\n\n${block}\n`);
}

/** The generated Scale part as it stands in `file` (kept by a full `npm run bench`, which does not run it). */
export function scaleSectionOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  return a >= 0 && b > a ? ['', text.slice(a, b + END.length), ''] : [];
}

/** The generated Scale part: one row per size asked for (measured, or why not), then the rounds of ordinary reads beside anonymous as-of requests. */
export function scaleLines(
  sizes: number[],
  results: Array<ScaleFigures | ScaleFailure>,
  loads: Array<[before: number, after: number]>,
  h: { duration: number; rounds: number },
): string[] {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const f1 = (x: number) => x.toFixed(1);
  const f0 = (x: number) => x.toFixed(0);
  const perM = (x: number, f: ScaleFigures) => f0(x / (f.events / 1e6));
  const measured = results.filter((r): r is ScaleFigures => 'events' in r);
  const lines = [
    '## Scale: a generated network of millions of events',
    '',
    `Measured ${when} UTC by \`npm run bench -- scale --sizes=${sizes.join(',')}\` on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}, ${mb(os.totalmem())} MB.`,
    '',
    `A generated network: min(100,000, events / 10) agents registered first, then the scale mix per 100 events (14 posts, 12 comments, 17 reactions, 5 comment upvotes, 2 boosts, 10 DMs, 17 heartbeats, 14 webhook deliveries, 5 follows, 1 contract opened and 2 of its transitions, 1 top-up), written into the event log's table in bulk; then the service (embedded, \`READ_STORE=${process.env.READ_STORE || 'sqlite'}\`) started on it. Write path and feed read: ${WRITERS.toLocaleString('en')} of the bench's own agents post (none runs out of credits); autocannon, 50 connections, ${h.duration} s, one warm-up load of each on the service, then ${LOAD_ROUNDS} rounds alternating with bare Koa (the median per-round ratio, the service's median p99, and the median of its CPU per write from its \`/metrics\`). As-of: one of the bench's writers updates its profile ${AS_OF_BUSY} times, the index is built by the first read, then 50 reads of the first generated agent's profile at positions spread over the log, and 50 of the writer's at positions spread over its updates (each folds up to AS_OF_EVERY - 1 = 499 of its events), one at a time, each its own position (no cache). Starts: from spawning the process to \`/health\` 200. A size the machine has no memory or disk for at the time is skipped with the figures, before anything is written for it.`,
    '',
    `| events | agents | fill s (per million) | first start s (per million) | heap MB | RSS MB (peak) | write ratio (p99 ms) [service CPU ms per write] | feed ratio (p99 ms) | as-of index s | as-of ms median (max) [service CPU ms per read]: a generated agent / an agent with ${AS_OF_BUSY} updates | profile read p99 ms alone / beside anonymous as-of (median of rounds) | clean stop s | start after clean stop s (heap, RSS MB) | start after kill -9 s | load before, after |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map((f, i) => {
      const load = loads[i] ? `${f1(loads[i][0])}, ${f1(loads[i][1])}` : '';
      if (!('events' in f))
        return `| ${Math.round(f.millions * 1e6).toLocaleString('en')} | failed: ${f.failed.replace(/\|/g, '/').replace(/\s+/g, ' ')} | | | | | | | | | | | | | ${load} |`;
      const alone = median(f.contention.map((c) => c.alone.p99));
      const beside = median(f.contention.map((c) => c.beside.p99));
      return `| ${f.events.toLocaleString('en')} | ${f.agents.toLocaleString('en')} | ${f0(f.fillSeconds)} (${perM(f.fillSeconds, f)}) | ${f0(f.firstStartSeconds)} (${perM(f.firstStartSeconds, f)}) | ${f.heapMb} | ${f.rssMb} (${f.peakRssMb}) | ${f.writeRatio.toFixed(2)} (${f.writeP99}) [${f.writeCpuMs.toFixed(2)}] | ${f.feedRatio.toFixed(2)} (${f.feedP99}) | ${f1(f.asOfIndexSeconds)} | ${f.asOfMedianMs.toFixed(1)} (${f.asOfMaxMs.toFixed(1)}) [${f.asOfCpuMs.toFixed(1)}] / ${f.asOfBusyMedianMs.toFixed(1)} (${f.asOfBusyMaxMs.toFixed(1)}) [${f.asOfBusyCpuMs.toFixed(1)}] | ${alone} / ${beside} | ${f1(f.stopSeconds)} | ${f1(f.cleanStartSeconds)} (${f.cleanHeapMb}, ${f.cleanRssMb}) | ${f1(f.crashStartSeconds)} | ${load} |`;
    }),
    '',
    `Ordinary reads beside anonymous as-of requests: the first agent's profile read live by ${READERS} connections for ${h.duration} s, alone, then beside ${FLOODERS} connections asking for it anonymously with \`as_of\` (each refused 401), ${h.rounds} rounds. The load generators (autocannon) run in processes of their own; the service's own event-loop delay, GC pauses and CPU over each window come from its \`/metrics\`. On 2 shared cores the service, the two load generators and the machine's other work take turns, so the latencies move with the load average beside them.`,
    '',
    '| events | round | profile read p99 (max) ms, alone | beside | service event-loop delay p99 (max) ms, alone | beside | service GC pauses ms young + major (pauses >= 100 ms), alone | beside | service CPU s, alone / beside | anonymous as-of req/s (not 401) | load, alone / beside |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...measured.flatMap((f) =>
      f.contention.map(
        (c, i) =>
          `| ${f.events.toLocaleString('en')} | ${i + 1} | ${c.alone.p99} (${c.alone.max}) | ${c.beside.p99} (${c.beside.max}) | ${f1(c.alone.loopP99)} (${f0(c.alone.loopMax)}) | ${f1(c.beside.loopP99)} (${f0(c.beside.loopMax)}) | ${f0(c.alone.gcMinorMs)} + ${f0(c.alone.gcMajorMs)} (${c.alone.gcLong}) | ${f0(c.beside.gcMinorMs)} + ${f0(c.beside.gcMajorMs)} (${c.beside.gcLong}) | ${f1(c.alone.cpuSeconds)} / ${f1(c.beside.cpuSeconds)} | ${f0(c.floodRps)} (${c.floodNot401}) | ${f1(c.alone.load)} / ${f1(c.beside.load)} |`,
      ),
    ),
  ];
  return lines;
}

export async function scaleBenchmarks(
  say: (line: string) => void,
  h: ScaleHelpers,
  sizes: number[],
  file: string,
): Promise<Array<ScaleFigures | ScaleFailure>> {
  // The kinds the network's first agents never reach: checked on a small network.
  checkAgainstSchemas(generateLog('scale', 20_000, 1_000));
  const progress = (line: string) => process.stdout.write(`${line}\n`);
  const results: Array<ScaleFigures | ScaleFailure> = [];
  const loads: Array<[number, number]> = [];
  let rssPerEvent = DEFAULT_RSS_PER_EVENT;
  let lines: string[] = [];
  for (const millions of sizes) {
    const before = os.loadavg()[0];
    try {
      const f = await oneSize(millions, h, progress, rssPerEvent);
      results.push(f);
      // The next size's need, from this one's (a small size's fixed part would overstate it).
      if (f.events >= 1_000_000) rssPerEvent = Math.round((Math.max(f.peakRssMb, f.cleanRssMb) * 2 ** 20) / f.events);
    } catch (err) {
      // Reported in its row; the sizes after it are still tried (a smaller machine may skip only the largest).
      const failed = err instanceof Error ? err.message : String(err);
      progress(`  ${millions}M failed: ${failed}`);
      results.push({ millions, failed });
    }
    loads.push([before, os.loadavg()[0]]);
    // Written after every size: a run stopped later keeps what it measured.
    lines = scaleLines(sizes, results, loads, h);
    if (process.env.BENCH_WRITE !== '0') writeScaleSection(file, lines);
  }
  for (const line of lines) say(line);
  return results;
}
