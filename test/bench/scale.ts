// `npm run bench -- scale [--sizes=1,3,10]`: the service on a generated network of 100,000 agents
// and N million events in the scale mix (replay-mix.ts SCALE_MIX), written straight into the event
// log's table (bulk inserts, as the replay bench fills its logs); then, per size: the first start
// (a replay of the whole log), the heap and resident memory held, the write path and the feed read
// against bare Koa on that data, as-of reads, a clean stop and the start after it, and the start
// after a kill -9. The figures replace the generated "Scale" part of docs/PERFORMANCE.md.
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  feedRatio: number;
  feedP99: number;
  asOfIndexSeconds: number;
  asOfMedianMs: number;
  asOfMaxMs: number;
  /** p99 of ordinary profile reads (10 connections) alone, and beside 20 connections of anonymous as-of reads. */
  readP99Alone: number;
  readP99BesideAnonymousAsOf: number;
  stopSeconds: number;
  cleanStartSeconds: number;
  cleanHeapMb: number;
  cleanRssMb: number;
  crashStartSeconds: number;
}

const START_TIMEOUT_MS = 60 * 60_000;
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

async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function oneSize(millions: number, h: ScaleHelpers, say: (line: string) => void): Promise<ScaleFigures> {
  const events = Math.round(millions * 1_000_000);
  const agents = Math.min(100_000, Math.round(events / 10));
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-scale-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0', METRICS_TOKEN, SECRET_KEY };
  try {
    say(`- ${millions}M: filling ${events.toLocaleString('en')} events, ${agents.toLocaleString('en')} agents ...`);
    let t = performance.now();
    await fill(join(dataDir, 'events.sqlite'), 'scale', events, agents);
    const fillSeconds = seconds(t);

    // The first start: no snapshot, the whole log replayed.
    t = performance.now();
    let svc = await h.spawnServer(['api/server.ts'], env, START_TIMEOUT_MS);
    const firstStartSeconds = seconds(t);
    const held = await memoryOf(svc.url, svc.child.pid);

    // Writers with keys (the generated agents' keys are not known), each with credits for the rounds.
    const keys: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await request(svc.url, 'POST', '/api/protocol/register', {
        body: { name: `Scale writer ${i}`, capabilities: ['lead-gen'], owner_name: 'W', owner_email: `scale-${i}-${randomUUID()}@example.com` },
      });
      if (r.status !== 201 && r.status !== 200) throw new Error(`registration: ${r.status} ${r.text}`);
      keys.push(r.body.api_key as string);
    }
    const path = '/api/feed/posts?limit=20';
    const page = await request(svc.url, 'GET', path);
    const pageFile = join(dataDir, 'feed-page.json');
    writeFileSync(pageFile, page.text);
    const bare = await h.spawnServer(['test/bench/bare-koa.ts'], { BARE_BODY_FILE: pageFile });
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
    await h.load(bare.url, '/', bareBody); // warm-up
    const writes: Array<{ ceiling: Load; load: Load }> = [];
    const reads: Array<{ ceiling: Load; load: Load }> = [];
    for (let r = 0; r < h.rounds; r++) {
      writes.push({ ceiling: await h.load(bare.url, '/', bareBody), load: await h.load(svc.url, '/api/feed/posts', post) });
      reads.push({ ceiling: await h.loadGet(bare.url, path), load: await h.loadGet(svc.url, path) });
    }
    await h.stopServer(bare.child);

    // As-of reads of a busy generated agent: the first builds the index (503 until it has read the log).
    const subject = id('agt', 0);
    const asOfPath = (p: number) => `/api/protocol/agents/${subject}?as_of=${p}`;
    const head = (await request(svc.url, 'GET', '/api/health')).body.projection_position as number;
    t = performance.now();
    for (;;) {
      const r = await request(svc.url, 'GET', asOfPath(head), { apiKey: keys[0] });
      if (r.status === 200) break;
      if (r.status !== 503) throw new Error(`as-of read: ${r.status} ${r.text}`);
    }
    const asOfIndexSeconds = seconds(t);
    const asOfTimes: number[] = [];
    for (let i = 1; i <= 50; i++) {
      // Positions spread over the log, each read once (no cache).
      const p = Math.max(1, Math.floor((head * i) / 51));
      const t1 = performance.now();
      const r = await request(svc.url, 'GET', asOfPath(p), { apiKey: keys[1] });
      asOfTimes.push(performance.now() - t1);
      if (r.status !== 200 && r.status !== 404) throw new Error(`as-of read at ${p}: ${r.status} ${r.text}`);
    }

    // Ordinary reads alone, then beside 20 connections of anonymous as-of reads of the same profile.
    const ordinary = () => autocannon({ url: `${svc.url}/api/protocol/agents/${subject}`, connections: 10, duration: h.duration });
    const alone = await ordinary();
    const [beside] = await Promise.all([ordinary(), autocannon({ url: svc.url + asOfPath(head), connections: 20, duration: h.duration })]);

    // A clean stop (the snapshot written), the start after it, then a kill -9 and the start after that.
    t = performance.now();
    await h.stopServer(svc.child);
    const stopSeconds = seconds(t);
    t = performance.now();
    svc = await h.spawnServer(['api/server.ts'], env, START_TIMEOUT_MS);
    const cleanStartSeconds = seconds(t);
    const clean = await memoryOf(svc.url, svc.child.pid);
    // Writes after the snapshot, so the crash start has a tail to replay beyond it.
    for (let i = 0; i < 200; i++) {
      const p = post();
      await request(svc.url, 'POST', '/api/feed/posts', { rawBody: p.body, headers: { 'content-type': 'application/json', ...p.headers } });
    }
    await killHard(svc.child);
    t = performance.now();
    svc = await h.spawnServer(['api/server.ts'], env, START_TIMEOUT_MS);
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
      feedRatio: ratio(reads),
      feedP99: median(reads.map((r) => r.load.p99)),
      asOfIndexSeconds,
      asOfMedianMs: median(asOfTimes),
      asOfMaxMs: Math.max(...asOfTimes),
      readP99Alone: alone.latency.p99,
      readP99BesideAnonymousAsOf: beside.latency.p99,
      stopSeconds,
      cleanStartSeconds,
      cleanHeapMb: mb(clean.heap),
      cleanRssMb: mb(clean.rss),
      crashStartSeconds,
    };
    say(`  ${JSON.stringify(figures)}`);
    return figures;
  } finally {
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

export async function scaleBenchmarks(say: (line: string) => void, h: ScaleHelpers, sizes: number[], file: string): Promise<ScaleFigures[]> {
  // The kinds the network's first agents never reach: checked on a small network.
  checkAgainstSchemas(generateLog('scale', 20_000, 1_000));
  const progress = (line: string) => process.stdout.write(`${line}\n`);
  const all: ScaleFigures[] = [];
  const loads = [os.loadavg()[0]];
  for (const millions of sizes) {
    all.push(await oneSize(millions, h, progress));
    loads.push(os.loadavg()[0]);
  }
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const f1 = (x: number) => x.toFixed(1);
  const lines = [
    '## Scale: a generated network of millions of events',
    '',
    `Measured ${when} UTC by \`npm run bench -- scale --sizes=${sizes.join(',')}\` on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}, ${mb(os.totalmem())} MB.`,
    '',
    `A generated network: min(100,000, events / 10) agents registered first, then the scale mix per 100 events (14 posts, 12 comments, 17 reactions, 5 comment upvotes, 2 boosts, 10 DMs, 17 heartbeats, 14 webhook deliveries, 5 follows, 1 contract opened and 2 of its transitions, 1 top-up), written into the event log's table in bulk; then the service (embedded default) started on it. Write path and feed read: autocannon, 50 connections, ${h.duration} s, ${h.rounds} rounds alternating with bare Koa (the median per-round ratio, and the service's median p99). As-of: the index built by the first read, then 50 reads of the first agent's profile at positions spread over the log, one at a time; then that profile read live by 10 connections for ${h.duration} s, alone and beside 20 connections asking for it anonymously with \`as_of\` (refused 401). Starts: from spawning the process to \`/health\` 200.`,
    '',
    '| events | agents | fill s | first start s | heap MB | RSS MB (peak) | write ratio (p99 ms) | feed ratio (p99 ms) | as-of index s | as-of ms median (max) | profile read p99 ms alone / beside 20 anonymous as-of | clean stop s | start after clean stop s (heap, RSS MB) | start after kill -9 s |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...all.map(
      (f) =>
        `| ${f.events.toLocaleString('en')} | ${f.agents.toLocaleString('en')} | ${f1(f.fillSeconds)} | ${f1(f.firstStartSeconds)} | ${f.heapMb} | ${f.rssMb} (${f.peakRssMb}) | ${f.writeRatio.toFixed(2)} (${f.writeP99}) | ${f.feedRatio.toFixed(2)} (${f.feedP99}) | ${f1(f.asOfIndexSeconds)} | ${f.asOfMedianMs.toFixed(1)} (${f.asOfMaxMs.toFixed(1)}) | ${f.readP99Alone} / ${f.readP99BesideAnonymousAsOf} | ${f1(f.stopSeconds)} | ${f1(f.cleanStartSeconds)} (${f.cleanHeapMb}, ${f.cleanRssMb}) | ${f1(f.crashStartSeconds)} |`,
    ),
  ];
  lines.push(
    '',
    `The machine's load average (1 minute) before and after each size: ${loads.map((l) => l.toFixed(1)).join(', ')}, on ${os.cpus().length} cores shared with other work; times and ratios move with it.`,
  );
  for (const line of lines) say(line);
  // BENCH_WRITE=0: printed only, as the other suites.
  if (process.env.BENCH_WRITE !== '0') writeScaleSection(file, lines);
  return all;
}
