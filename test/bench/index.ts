// npm run bench: every figure is a ratio to a ceiling measured in the same run on the same machine.
import { getHeapStatistics } from 'node:v8';
import { heapLimitFlag, machineMemory } from '../../api/heap-limit.ts';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpuMs, withCpu } from './util.ts';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import type { NewEvent } from '../../events/store/port.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { applyUpdate } from '../../projections/store/updates.ts';
import { postsProjection } from '../../projections/feed/posts.ts';
import { freePort } from '../helpers/process.ts';
import { rawRequest as request } from '../helpers/service.ts';
import { messagingBenchmarks } from './messaging.ts';
import { replayBenchmarks, type ReplayFigures } from './replay.ts';
import { socialQueryBenchmarks } from './social.ts';
import { marketplaceQueryBenchmarks } from './marketplace.ts';
import { rebuildBenchmarks } from './rebuild.ts';

import { circleBenchmarks } from './circles.ts';
import { moderationBenchmarks } from './moderation.ts';
import { writeReport, type SuiteReport } from './report.ts';
import { siteBenchmarks } from './site.ts';
import { scaleBenchmarks, scaleSizes } from './scale.ts';

const root = new URL('../..', import.meta.url).pathname;
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
const out: string[] = [];
const suites: SuiteReport[] = [];
const say = (line: string) => {
  process.stdout.write(`${line}\n`);
  out.push(line);
};

/** Starts a server on a port free when picked; one that finds it taken meanwhile (EADDRINUSE) is started again on another. */
async function spawnServer(args: string[], env: Record<string, string>, startTimeoutMs = 60_000): Promise<{ child: ChildProcess; url: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      // BENCH_CPU_PROF=<folder>: the service writes a V8 CPU profile there when it stops (README, Tests and benchmarks).
      [
        ...(args[0] === 'api/server.ts' && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        // BENCH_SERVICE_FLAGS="--flag ...": extra Node/V8 flags for the service alone (to try a runtime setting against the same ceiling).
        ...(args[0] === 'api/server.ts' && process.env.BENCH_SERVICE_FLAGS ? process.env.BENCH_SERVICE_FLAGS.split(/\s+/).filter(Boolean) : []),
        // The heap `npm start` gives the service: sized from the machine (api/heap-limit.ts).
        ...(args[0] === 'api/server.ts'
          ? [heapLimitFlag(machineMemory(), process.env.NODE_OPTIONS, getHeapStatistics().heap_size_limit)].filter((f) => f !== null)
          : []),
        '--import',
        'tsx',
        ...args,
      ],
      {
        cwd: root,
        env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
        // The service's stdout (its trace output under BENCH_SERVICE_FLAGS, e.g. --trace-gc) goes to the bench's stderr.
        stdio: ['ignore', args[0] === 'api/server.ts' && process.env.BENCH_SERVICE_FLAGS ? 'pipe' : 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      process.stderr.write(chunk);
    });
    child.stdout?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    let exited = false;
    child.once('exit', () => (exited = true));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + startTimeoutMs;
    while (!exited) {
      const r = await request(url, 'GET', '/health').catch(() => null);
      if (r?.status === 200 && !exited) return { child, url };
      if (Date.now() > deadline) {
        child.kill('SIGKILL'); // not left running behind a failed size
        throw new Error(`${args[0]} did not answer /health within ${Math.round(startTimeoutMs / 1000)} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!stderr.includes('EADDRINUSE') || attempt >= 5) throw new Error(`${args[0]} exited before it answered`);
  }
}

async function stopServer(child: ChildProcess) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Requests answered (where known). */
  total?: number;
}

async function load(url: string, path: string, bodies: () => { body: string; headers?: Record<string, string> }): Promise<Load> {
  const result = await autocannon({
    url: url + path,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const b = bodies();
          return { ...req, body: b.body, headers: { ...req.headers, ...(b.headers ?? {}) } };
        },
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, total: result.requests.total };
}

/** Like `load`, but each request names its own path (and headers). */
async function loadPaths(url: string, next: () => { path: string; headers?: Record<string, string> }): Promise<Load> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const n = next();
          return { ...req, path: n.path, body: '{}', headers: { ...req.headers, ...(n.headers ?? {}) } };
        },
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, total: result.requests.total };
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface HttpFigures {
  /** Median per-round ratio of the charged write to the bare handler. */
  postsRatio: number;
  /** Median and worst p99 of the charged write over the rounds, ms. */
  postsP99: number;
  postsP99Worst: number;
}

/**
 * The ceiling and the service run side by side and are measured in alternation, round after
 * round: each round's ratio compares loads a few seconds apart, so a shared machine speeding up or
 * slowing down between the two is caught in one round, not in every figure.
 */
async function httpBenchmarks(): Promise<HttpFigures> {
  say(`## HTTP (autocannon, 50 connections, ${DURATION} s each, ${ROUNDS} rounds alternating ceiling and service)`);
  const bare = await spawnServer(['test/bench/bare-koa.ts'], {});
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  const bareBody = () => ({ body: JSON.stringify({ title: 'Bench', body: 'Bench body #tag', post_type: 'signal_found' }) });
  await load(bare.url, '/', bareBody); // warm-up
  let n = 0;
  const registration = () => ({
    body: JSON.stringify({ name: `Bench ${++n}`, capabilities: ['lead-gen'], owner_name: 'Bench', owner_email: `bench-${n}-${randomUUID()}@example.com` }),
  });
  // Enough agents that no balance runs out during the rounds (50 credits = 500 posts each).
  const keys: string[] = [];
  for (let i = 0; i < 600; i++) {
    const r = await request(svc.url, 'POST', '/api/protocol/register', {
      body: { name: `W${i}`, capabilities: ['lead-gen'], owner_name: 'W', owner_email: `writer-${i}-${randomUUID()}@example.com` },
    });
    keys.push(r.body.api_key as string);
  }
  let k = 0;
  const post = () => ({
    // Distinct titles: the same agent repeating a title and body within 48 h is a suppressed duplicate signal.
    body: JSON.stringify({ title: `Bench post ${k}`, body: 'A signal with #bench and #load', post_type: 'signal_found', room_slug: 'lead-gen' }),
    headers: { 'x-api-key': keys[k++ % keys.length] },
  });
  // The posts rounds first: a registration leaves background jobs behind (the scout, the monthly
  // grant), which would run during whatever is measured next. The registration rounds pause after
  // each load for them.
  const postRounds: Array<{ ceiling: Load; load: Load }> = [];
  for (let r = 0; r < ROUNDS; r++) postRounds.push({ ceiling: await load(bare.url, '/', bareBody), load: await load(svc.url, '/api/feed/posts', post) });
  const registerRounds: Array<{ ceiling: Load; load: Load }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    registerRounds.push({ ceiling: await load(bare.url, '/', bareBody), load: await load(svc.url, '/api/protocol/register', registration) });
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
  await stopServer(svc.child);
  await stopServer(bare.child);
  rmSync(dataDir, { recursive: true, force: true });

  say('');
  say('Medians over the rounds; p99 with the worst round in brackets; the ratio is the median of the per-round ratios (each round listed).');
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to bare Koa | per round |');
  say('|---|---|---|---|---|---|---|');
  const row = (label: string, rounds: Array<{ ceiling: Load; load: Load }>, pick: (r: { ceiling: Load; load: Load }) => Load) => {
    const loads = rounds.map(pick);
    const ratios = rounds.map((r) => pick(r).rps / r.ceiling.rps);
    const perRound = pick === ceilingOf ? loads.map((l) => l.rps.toFixed(0)).join(', ') + ' req/s' : ratios.map((x) => x.toFixed(2)).join(', ');
    say(
      `| ${label} | ${median(loads.map((l) => l.rps)).toFixed(0)} | ${median(loads.map((l) => l.p50))} | ${median(loads.map((l) => l.p99))} (${Math.max(...loads.map((l) => l.p99))}) | ${loads.reduce((a, l) => a + l.non2xx, 0)} | ${median(ratios).toFixed(2)} | ${perRound} |`,
    );
  };
  const ceilingOf = (r: { ceiling: Load }) => r.ceiling;
  row('bare Koa + koa-body POST (ceiling)', [...postRounds, ...registerRounds], ceilingOf);
  row('POST /api/feed/posts (charged, synchronous=FULL)', postRounds, (r) => r.load);
  row('POST /api/protocol/register', registerRounds, (r) => r.load);
  say('');
  const p99s = postRounds.map((r) => r.load.p99);
  return { postsRatio: median(postRounds.map((r) => r.load.rps / r.ceiling.rps)), postsP99: median(p99s), postsP99Worst: Math.max(...p99s) };
}

async function loadGet(url: string, path: string, headers: Record<string, string> = {}): Promise<Load & { status304: number }> {
  const result = await autocannon({ url: url + path, method: 'GET', connections: CONNECTIONS, duration: DURATION, headers });
  const codes = result.statusCodeStats as unknown as Record<string, { count: number } | undefined>;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    total: result.requests.total,
    status304: codes['304']?.count ?? 0,
  };
}

/**
 * A public feed page, `GET /api/feed/posts?limit=20`, full and revalidated with If-None-Match
 * (304), against a bare Koa handler serving the same bytes from memory, in alternation.
 */
async function feedReadBenchmarks(): Promise<{ full: number; notModified: number }> {
  say(`## Public reads (autocannon, 50 connections, ${DURATION} s each, ${ROUNDS} rounds alternating ceiling and service)`);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  for (let i = 0; i < 5; i++) {
    const r = await request(svc.url, 'POST', '/api/protocol/register', {
      body: { name: `Reader ${i}`, capabilities: ['lead-gen'], owner_name: 'R', owner_email: `reader-${i}-${randomUUID()}@example.com` },
    });
    for (let j = 0; j < 8; j++) {
      await request(svc.url, 'POST', '/api/feed/posts', {
        apiKey: r.body.api_key as string,
        body: { title: `Feed post ${i}.${j}`, body: `A public signal number ${j} with #bench and #feed and a few words to read.`, post_type: 'signal_found' },
      });
    }
  }
  const path = '/api/feed/posts?limit=20';
  const page = await request(svc.url, 'GET', path);
  const file = join(dataDir, 'feed-page.json');
  writeFileSync(file, page.text);
  const bare = await spawnServer(['test/bench/bare-koa.ts'], { BARE_BODY_FILE: file });
  const etag = String(page.headers.etag);
  await loadGet(bare.url, path); // warm-up
  await loadGet(svc.url, path);
  const rounds: Array<{ ceiling: Load; full: Load; cached: Load & { status304: number } }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    rounds.push({
      ceiling: await loadGet(bare.url, path),
      full: await loadGet(svc.url, path),
      cached: await loadGet(svc.url, path, { 'if-none-match': etag }),
    });
  }
  await stopServer(svc.child);
  await stopServer(bare.child);
  rmSync(dataDir, { recursive: true, force: true });
  say('');
  say(`The page is ${Buffer.byteLength(page.text)} bytes (20 posts). Medians over the rounds; the ratio is the median of the per-round ratios.`);
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to bare Koa | per round |');
  say('|---|---|---|---|---|---|---|');
  const row = (label: string, pick: (r: (typeof rounds)[number]) => Load, extra = '') => {
    const loads = rounds.map(pick);
    const ratios = rounds.map((r) => pick(r).rps / r.ceiling.rps);
    say(
      `| ${label} | ${median(loads.map((l) => l.rps)).toFixed(0)} | ${median(loads.map((l) => l.p50))} | ${median(loads.map((l) => l.p99))} | ${loads.reduce((a, l) => a + l.non2xx, 0)}${extra} | ${median(ratios).toFixed(2)} | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`,
    );
  };
  row('bare Koa, same bytes from memory (ceiling)', (r) => r.ceiling);
  row('GET /api/feed/posts?limit=20', (r) => r.full);
  row('same, If-None-Match (304)', (r) => r.cached, ` (all 304: ${rounds.every((r) => r.cached.status304 > 0 && r.cached.non2xx === r.cached.status304)})`);
  say('');
  const full = median(rounds.map((r) => r.full.rps / r.ceiling.rps));
  const notModified = median(rounds.map((r) => r.cached.rps / r.ceiling.rps));
  say(
    `Targets: feed page >= 0.5 of the ceiling: ${full.toFixed(2)} ${full >= 0.5 ? 'met' : 'NOT met'}; If-None-Match >= 0.8: ${notModified.toFixed(2)} ${notModified >= 0.8 ? 'met' : 'NOT met'}.`,
  );
  say('');
  return { full, notModified };
}

const postEvent = (i: number, stream: string): NewEvent => ({
  id: randomUUID(),
  type: 'PostPublished',
  data: {
    post_id: `pst_${i.toString(36).padStart(20, '0')}`,
    agent_id: stream.slice(6),
    agent_name: 'Bench agent',
    title: `Post number ${i}`,
    body: `A realistic body for post ${i} with #bench and #replay hashtags and some text to parse.`,
    post_type: 'signal_found',
    room_slug: i % 3 === 0 ? 'lead-gen' : null,
    hashtags: ['bench', 'replay'],
    published_at: new Date(1_780_000_000_000 + i * 1000).toISOString(),
    charge: { action: 'post', amount_mc: 100, balance_after_mc: 1_000_000 - (i % 1000) * 100 },
  },
  metadata: {
    actor: null,
    request_id: null,
    correlation_id: null,
    causation_id: randomUUID(),
    occurred_at: new Date(1_780_000_000_000 + i * 1000).toISOString(),
    schema_version: 1,
  },
});

async function logBenchmarks(): Promise<number> {
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-log-'));
  const N = 50_000;
  const CONCURRENCY = 100;
  try {
    // Ceiling: raw better-sqlite3 inserts of the same rows, committed in batches of CONCURRENCY.
    const raw = new Database(join(dir, 'raw.sqlite'));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.exec(
      'CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE(stream, revision))',
    );
    const ins = raw.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
    const batch = raw.transaction((rows: NewEvent[], base: number) => {
      rows.forEach((e, j) =>
        ins.run(e.id, `agent-${(base + j) % 1000}`, Math.floor((base + j) / 1000), e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)),
      );
    });
    const rawEvents = Array.from({ length: N }, (_, i) => postEvent(i, `agent-${i % 1000}`));
    let t = performance.now();
    for (let i = 0; i < N; i += CONCURRENCY) batch(rawEvents.slice(i, i + CONCURRENCY), i);
    const rawAppend = N / ((performance.now() - t) / 1000);

    // Adapter: CONCURRENCY concurrent appends (different streams, expected revisions), group-committed.
    const log = SqliteEventLog.open({ path: join(dir, 'log.sqlite') });
    const events = Array.from({ length: N }, (_, i) => postEvent(i, `agent-${i % 1000}`));
    t = performance.now();
    for (let i = 0; i < N; i += CONCURRENCY) {
      await Promise.all(
        events.slice(i, i + CONCURRENCY).map((e, j) => log.append(`agent-${(i + j) % 1000}`, [e], i + j < 1000 ? 'no_stream' : Math.floor((i + j) / 1000) - 1)),
      );
    }
    const append = N / ((performance.now() - t) / 1000);

    say(`## Event log append (SQLite, synchronous=FULL, ${N} events, ${CONCURRENCY} concurrent appends)`);
    say('');
    say('| path | events/s | ratio |');
    say('|---|---|---|');
    say(`| raw better-sqlite3 insert loop, ${CONCURRENCY} per transaction (ceiling) | ${rawAppend.toFixed(0)} | 1.00 |`);
    say(`| SqliteEventLog.append, group commit | ${append.toFixed(0)} | ${(append / rawAppend).toFixed(2)} |`);
    say('');

    raw.close();
    await log.close();
    return append / rawAppend;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Social: a follow (a new pair each request, so every one appends an event) against the bare Koa
 * POST in alternating rounds, and the leaderboard and member-directory reads at 100,000 each.
 */
async function socialBenchmarks(): Promise<void> {
  say(`## Social (follow over HTTP: autocannon, 50 connections, ${DURATION} s each, ${ROUNDS} rounds alternating ceiling and service)`);
  const bare = await spawnServer(['test/bench/bare-koa.ts'], {});
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-social-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  const bareBody = () => ({ body: JSON.stringify({ title: 'Bench' }) });
  await load(bare.url, '/', bareBody); // warm-up
  const agents: Array<{ id: string; key: string }> = [];
  for (let i = 0; i < 600; i++) {
    const r = await request(svc.url, 'POST', '/api/protocol/register', {
      body: { name: `F${i}`, capabilities: ['lead-gen'], owner_name: 'F', owner_email: `follower-${i}-${randomUUID()}@example.com` },
    });
    agents.push({ id: r.body.agent_id as string, key: r.body.api_key as string });
  }
  const n = agents.length;
  let k = 0;
  // Request k: follower k mod n follows the agent 1 + floor(k / n) places on (never itself, never twice).
  const follow = () => {
    const i = k % n;
    const j = (i + 1 + (Math.floor(k / n) % (n - 1))) % n;
    k++;
    return { path: `/api/protocol/agents/${agents[j]?.id}/follow`, headers: { 'x-api-key': agents[i]?.key ?? '' } };
  };
  await new Promise((resolve) => setTimeout(resolve, 3000)); // the registrations' background jobs
  const rounds: Array<{ ceiling: Load; load: Load }> = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push({ ceiling: await load(bare.url, '/', bareBody), load: await loadPaths(svc.url, follow) });
  await stopServer(svc.child);
  await stopServer(bare.child);
  rmSync(dataDir, { recursive: true, force: true });
  const ratios = rounds.map((r) => r.load.rps / r.ceiling.rps);
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to bare Koa | per round |');
  say('|---|---|---|---|---|---|---|');
  say(
    `| bare Koa + koa-body POST (ceiling) | ${median(rounds.map((r) => r.ceiling.rps)).toFixed(0)} | ${median(rounds.map((r) => r.ceiling.p50))} | ${median(rounds.map((r) => r.ceiling.p99))} | 0 | 1.00 | |`,
  );
  say(
    `| POST /api/protocol/agents/{id}/follow (new pair each) | ${median(rounds.map((r) => r.load.rps)).toFixed(0)} | ${median(rounds.map((r) => r.load.p50))} | ${median(rounds.map((r) => r.load.p99))} | ${rounds.reduce((a, r) => a + r.load.non2xx, 0)} | ${median(ratios).toFixed(2)} | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`,
  );
  say('');
  say(`Target: a follow at least 0.3 of the bare POST: ${median(ratios) >= 0.3 ? 'met' : 'NOT met'}.`);
  say('');
  const slowest = await socialQueryBenchmarks(say);
  say(`Target: leaderboard page and member search under 5 ms median at 100,000 each: ${slowest < 5 ? 'met' : 'NOT met'} (slowest ${slowest.toFixed(3)} ms).`);
  say('');
}

/**
 * MCP: a `tools/call` of get_credits over POST /api/mcp (the request the SDK client sends, in each
 * protocol revision) against the REST read of the same data, GET /api/protocol/agents/{id}/credits,
 * in alternating rounds on the same server; and the same skill over A2A (SendMessage on /api/a2a).
 */
async function mcpBenchmarks(): Promise<number> {
  say(`## MCP tool call vs REST (autocannon, 50 connections, ${DURATION} s each, ${ROUNDS} rounds alternating REST and MCP)`);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-mcp-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  const reg = await request(svc.url, 'POST', '/api/protocol/register', {
    body: { name: 'MCP bench', capabilities: ['lead-gen'], owner_name: 'M', owner_email: `mcp-bench-${randomUUID()}@example.com` },
  });
  const agentId = reg.body.agent_id as string;
  const key = reg.body.api_key as string;
  const accept = 'application/json, text/event-stream';
  const call = (revision: '2025-11-25' | '2026-07-28') => {
    const params: Record<string, unknown> = { name: 'get_credits', arguments: {} };
    const headers: Record<string, string> = { 'x-api-key': key, accept, 'mcp-protocol-version': revision };
    if (revision === '2026-07-28') {
      params._meta = {
        'io.modelcontextprotocol/protocolVersion': revision,
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      Object.assign(headers, { 'mcp-method': 'tools/call', 'mcp-name': 'get_credits' });
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
    return () => ({ body, headers });
  };
  // The same skill over A2A (docs/A2A.md): SendMessage with one data part, a fresh message id each time.
  let sent = 0;
  const a2a = () => ({
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `bench-${++sent}`, role: 'ROLE_USER', parts: [{ data: { skill: 'get_credits' } }] } },
    }),
    headers: { 'x-api-key': key, 'a2a-version': '1.0' },
  });
  // Each answer checked once before loading: the same balance by both paths.
  const rest = await request(svc.url, 'GET', `/api/protocol/agents/${agentId}/credits`, { apiKey: key });
  for (const revision of ['2025-11-25', '2026-07-28'] as const) {
    const b = call(revision)();
    const r = await request(svc.url, 'POST', '/api/mcp', { rawBody: b.body, headers: { ...b.headers, 'content-type': 'application/json' } });
    const got = (r.body as { result?: { structuredContent?: { balance?: number } } }).result?.structuredContent?.balance;
    if (r.status !== 200 || got !== rest.body.balance) throw new Error(`MCP ${revision} answered ${r.status} ${r.text}`);
  }
  {
    const b = a2a();
    const r = await request(svc.url, 'POST', '/api/a2a', { rawBody: b.body, headers: { ...b.headers, 'content-type': 'application/json' } });
    const got = (r.body as { result?: { message?: { parts?: Array<{ data?: { balance?: number } }> } } }).result?.message?.parts?.[0]?.data?.balance;
    if (r.status !== 200 || got !== rest.body.balance) throw new Error(`A2A answered ${r.status} ${r.text}`);
  }
  const restPath = `/api/protocol/agents/${agentId}/credits`;
  await loadGet(svc.url, restPath, { 'x-api-key': key }); // warm-up
  await load(svc.url, '/api/mcp', call('2026-07-28'));
  // The SDK's serving path alone (test/bench/bare-mcp.ts: bare Koa, createMcpHandler, a constant
  // tool) against a bare Koa GET in the same process: what that path costs with nothing of ours.
  const bareMcp = await spawnServer(['test/bench/bare-mcp.ts'], {});
  const bareCall = (revision: '2025-11-25' | '2026-07-28') => {
    const b = call(revision);
    return () => {
      const { body, headers } = b();
      return { body, headers: { ...headers, 'x-api-key': '' } };
    };
  };
  for (const revision of ['2025-11-25', '2026-07-28'] as const) {
    const b = bareCall(revision)();
    const r = await request(bareMcp.url, 'POST', '/mcp', { rawBody: b.body, headers: { ...b.headers, 'content-type': 'application/json' }, unchecked: true });
    const got = (r.body as { result?: { structuredContent?: { balance?: number } } }).result?.structuredContent?.balance;
    if (r.status !== 200 || got !== 50) throw new Error(`bare MCP ${revision} answered ${r.status} ${r.text}`);
  }
  // Each load with the server's CPU per request (user + system, all threads): steadier than req/s on a shared machine.
  type Measured = Load & { cpu: number };
  const measured = (pid: number | undefined, run: () => Promise<Load>): Promise<Measured> => withCpu(pid, run);
  const rounds: Array<Record<'rest' | 'legacy' | 'modern' | 'a2a' | 'bareGet' | 'bareLegacy' | 'bareModern', Measured>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    rounds.push({
      rest: await measured(svc.child.pid, () => loadGet(svc.url, restPath, { 'x-api-key': key })),
      legacy: await measured(svc.child.pid, () => load(svc.url, '/api/mcp', call('2025-11-25'))),
      modern: await measured(svc.child.pid, () => load(svc.url, '/api/mcp', call('2026-07-28'))),
      a2a: await measured(svc.child.pid, () => load(svc.url, '/api/a2a', a2a)),
      bareGet: await measured(bareMcp.child.pid, () => loadGet(bareMcp.url, '/')),
      bareLegacy: await measured(bareMcp.child.pid, () => load(bareMcp.url, '/mcp', bareCall('2025-11-25'))),
      bareModern: await measured(bareMcp.child.pid, () => load(bareMcp.url, '/mcp', bareCall('2026-07-28'))),
    });
  }
  await stopServer(bareMcp.child);
  await stopServer(svc.child);
  rmSync(dataDir, { recursive: true, force: true });
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to the REST read | per round |');
  say('|---|---|---|---|---|---|---|');
  /** A table row: the median req/s and latencies of one path, and its ratio to `base` in each round. */
  const row = (label: string, pick: (r: (typeof rounds)[number]) => Load, base: (r: (typeof rounds)[number]) => Load = (r) => r.rest) => {
    const loads = rounds.map(pick);
    const ratios = rounds.map((r) => pick(r).rps / base(r).rps);
    say(
      `| ${label} | ${median(loads.map((l) => l.rps)).toFixed(0)} | ${median(loads.map((l) => l.p50))} | ${median(loads.map((l) => l.p99))} | ${loads.reduce((a, l) => a + l.non2xx, 0)} | ${median(ratios).toFixed(2)} | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`,
    );
  };
  row('GET /api/protocol/agents/{id}/credits (REST)', (r) => r.rest);
  row('POST /api/mcp tools/call get_credits, 2025-11-25 (stateless, JSON)', (r) => r.legacy);
  row('POST /api/mcp tools/call get_credits, 2026-07-28 (per-request envelope)', (r) => r.modern);
  row('POST /api/a2a SendMessage, skill get_credits (A2A 1.0, JSON-RPC; no target)', (r) => r.a2a);
  say('');
  say(
    "The MCP SDK's serving path alone (test/bench/bare-mcp.ts: bare Koa, `createMcpHandler`, a tool answering a constant), against a bare Koa GET in the same rounds:",
  );
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to the bare GET | per round |');
  say('|---|---|---|---|---|---|---|');
  row(
    'bare Koa GET (ceiling)',
    (r) => r.bareGet,
    (r) => r.bareGet,
  );
  row(
    'bare MCP tools/call, 2025-11-25',
    (r) => r.bareLegacy,
    (r) => r.bareGet,
  );
  row(
    'bare MCP tools/call, 2026-07-28',
    (r) => r.bareModern,
    (r) => r.bareGet,
  );
  say('');
  say('CPU of the server per request (ms, user + system, all threads; median of the rounds):');
  say('');
  say('| REST read | MCP 2025-11-25 | MCP 2026-07-28 | A2A | bare Koa GET | bare MCP 2025-11-25 | bare MCP 2026-07-28 |');
  say('|---|---|---|---|---|---|---|');
  const cpu = (k: keyof (typeof rounds)[number]) => median(rounds.map((r) => r[k].cpu)).toFixed(3);
  say(`| ${cpu('rest')} | ${cpu('legacy')} | ${cpu('modern')} | ${cpu('a2a')} | ${cpu('bareGet')} | ${cpu('bareLegacy')} | ${cpu('bareModern')} |`);
  say('');
  const worst = Math.min(median(rounds.map((r) => r.legacy.rps / r.rest.rps)), median(rounds.map((r) => r.modern.rps / r.rest.rps)));
  say(
    `Target: an MCP get_credits call at least 0.3 of the REST read, in both revisions: ${worst >= 0.3 ? 'met' : 'NOT met'} (lower median ${worst.toFixed(2)}).`,
  );
  say('');
  return worst;
}

/** Runs `fn` over `items` with `lanes` in flight at once. */
async function inParallel<T>(items: T[], lanes: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * Marketplace: a contract transition (accept, start, deliver on the API-key surface: each one a
 * revision-checked append on the contract's stream; accept and deliver mail both parties, the
 * mails queued and sent by the workers behind the requests) against the bare Koa POST in
 * alternating rounds; then the listing search and the dispute queue at 100,000 listings.
 */
/** The token the benchmarks' services answer /metrics with (settle reads the queue and lags there). */
const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';

/**
 * Waits until a benchmarked service has no background work left: no Agenda job queued, running or
 * locked, no in-process worker backlog (mails being queued or sent) and every projection caught
 * up, seen on two scrapes of /metrics in a row.
 */
async function settle(url: string): Promise<void> {
  let quiet = 0;
  for (let i = 0; i < 600 && quiet < 2; i++) {
    const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
    const busy = text
      .split('\n')
      .filter((l) => l.startsWith('agenda_jobs{') || l.startsWith('worker_backlog{') || l.startsWith('projection_lag_events{'))
      .some((l) => Number(l.split(' ').pop()) > 0);
    quiet = busy ? 0 : quiet + 1;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function marketplaceBenchmarks(): Promise<void> {
  const seconds = Math.min(DURATION, Number(process.env.BENCH_MARKET_SECONDS ?? 5));
  const contractsWanted = Number(process.env.BENCH_CONTRACTS ?? 12000);
  // Contracts for a warm-up run of each verb before the measured passes (the ceiling is warmed up too).
  const warmUps = Math.min(1000, Math.ceil(contractsWanted / 6));
  say(`## Marketplace (contract transitions over HTTP: autocannon, 50 connections, ${seconds} s each, ${ROUNDS} rounds alternating ceiling and service)`);
  const bare = await spawnServer(['test/bench/bare-koa.ts'], {});
  const bareAppend = await spawnServer(['test/bench/bare-append.ts'], {});
  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-market-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0', METRICS_TOKEN: BENCH_METRICS_TOKEN });
  const bareBody = () => ({ body: JSON.stringify({ note: 'Bench' }) });
  await load(bare.url, '/', bareBody); // warm-up
  await load(bareAppend.url, '/', bareBody);
  const register = async (i: number) =>
    (
      await request(svc.url, 'POST', '/api/protocol/register', {
        body: { name: `M${i}`, capabilities: ['lead-gen'], owner_name: 'M', owner_email: `market-${i}-${randomUUID()}@example.com` },
      })
    ).body.api_key as string;
  const requesters: string[] = [];
  const providers: string[] = [];
  const total = contractsWanted + warmUps;
  for (let i = 0; i < Math.ceil(total / 100); i++) requesters.push(await register(i));
  for (let i = 0; i < Math.ceil(total / 200); i++) providers.push(await register(10_000 + i));
  const opened: string[] = [];
  const listing = { title: 'Bench listing', description: 'A pipeline to build', category: 'engineering', price: 100, pricing_type: 'fixed' };
  await inParallel(
    Array.from({ length: total }, (_, i) => i),
    16,
    async (i) => {
      const owner = requesters[Math.floor(i / 100)] ?? '';
      const provider = providers[Math.floor(i / 200)] ?? '';
      const l = await request(svc.url, 'POST', '/api/agent/marketplace', { apiKey: owner, body: listing });
      const r = await request(svc.url, 'POST', `/api/agent/marketplace/${l.body.intent_id}/respond`, { apiKey: provider, body: { message: 'on it' } });
      const c = await request(svc.url, 'POST', `/api/agent/marketplace/${l.body.intent_id}/responses/${r.body.response_id}/accept`, { apiKey: owner });
      if (c.status === 201) opened.push(`${c.body.contract_id as string} ${provider}`);
    },
  );
  const warm = opened.slice(0, warmUps);
  const ids = opened.slice(warmUps);
  const n = ids.length;
  // Three passes over the contracts, one verb each (accept, start, deliver: two of them mail both
  // parties), every transition sent exactly once (autocannon's `amount`), so no pass runs out of
  // contracts and answers 409s; each pass is timed against a bare POST of the same amount.
  const VERBS = ['accept', 'start', 'deliver'] as const;
  const passes: Array<{ verb: string; ceiling: Load; load: Load; seconds: number; cpu: number; ceilingCpu: number; append: Load; appendCpu: number }> = [];
  const run = async (child: ChildProcess, opts: autocannon.Options): Promise<{ load: Load; seconds: number; cpu: number }> => {
    // autocannon's own duration, and the moment its promise settles, move in whole seconds (its
    // ticker): the pass is timed here, from the start to the last response.
    const t0 = performance.now();
    const cpu0 = cpuMs(child.pid);
    let last = t0;
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon({ connections: CONNECTIONS, method: 'POST', headers: { 'content-type': 'application/json' }, ...opts }, (err, r) =>
        err ? reject(err) : resolve(r),
      );
      instance.on('response', () => (last = performance.now()));
    });
    const seconds = (last - t0) / 1000;
    return {
      load: { rps: result.requests.total / seconds, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, total: result.requests.total },
      seconds,
      cpu: cpuMs(child.pid) - cpu0,
    };
  };
  /** One pass: `verb` on each of `contracts` ("<contract id> <provider key>") exactly once. */
  const pass = (contracts: string[], verb: string): autocannon.Options => {
    let k = 0;
    return {
      url: svc.url,
      amount: contracts.length,
      requests: [
        {
          setupRequest: (req) => {
            const [id, key] = (contracts[k++ % contracts.length] ?? '').split(' ');
            return { ...req, path: `/api/agent/contracts/${id}/${verb}`, body: '{}', headers: { ...req.headers, 'x-api-key': key ?? '' } };
          },
        },
      ],
    };
  };
  // Warm-up: each verb on the warm-up contracts (its code paths compiled, its mails sent), unmeasured.
  for (const verb of VERBS) await run(svc.child, pass(warm, verb));
  await settle(svc.url);
  for (const verb of VERBS) {
    // The ceiling runs for the pass length (a burst of only n requests would time its own warm-up).
    const ceiling = await run(bare.child, { url: `${bare.url}/`, duration: seconds, body: bareBody().body });
    // The pass's CPU includes the mails it queued, sent before the next pass (settle).
    const cpu0 = cpuMs(svc.child.pid);
    const market = await run(svc.child, pass(ids, verb));
    await settle(svc.url); // the pass's mails are sent before the next pass starts
    // The floor: a bare Koa POST doing one durable append and nothing else, for the pass length.
    const append = await run(bareAppend.child, { url: `${bareAppend.url}/`, duration: seconds, body: bareBody().body });
    passes.push({
      append: append.load,
      appendCpu: append.cpu / Math.max(1, append.load.total ?? 0),
      verb,
      ceiling: ceiling.load,
      load: market.load,
      seconds: market.seconds,
      cpu: (cpuMs(svc.child.pid) - cpu0) / n,
      ceilingCpu: ceiling.cpu / Math.max(1, ceiling.load.total ?? 0),
    });
  }
  await stopServer(svc.child);
  await stopServer(bare.child);
  await stopServer(bareAppend.child);
  rmSync(dataDir, { recursive: true, force: true });
  const ratio = (p: (typeof passes)[number]) => p.load.rps / p.ceiling.rps;
  // All three passes together: the transitions' req/s over the passes' whole time, against the ceilings' mean req/s.
  const overall = (passes.length * n) / passes.reduce((a, p) => a + p.seconds, 0) / (passes.reduce((a, p) => a + p.ceiling.rps, 0) / passes.length);
  say('');
  say(
    `${n} contracts set up (listing, response, accept); ${3 * n} transitions sent, each exactly once, after a warm-up of the three verbs on ${warm.length} other contracts.`,
  );
  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | bare Koa req/s (same run) | ratio to bare Koa | CPU ms/request (bare Koa) | CPU ratio |');
  say('|---|---|---|---|---|---|---|---|---|');
  for (const p of passes)
    say(
      `| POST /api/agent/contracts/{id}/${p.verb} | ${p.load.rps.toFixed(0)} | ${p.load.p50} | ${p.load.p99} | ${p.load.non2xx} | ${p.ceiling.rps.toFixed(0)} | ${ratio(p).toFixed(2)} | ${p.cpu.toFixed(3)} (${p.ceilingCpu.toFixed(3)}) | ${(p.ceilingCpu / p.cpu).toFixed(2)} |`,
    );
  const cpuOverall = passes.reduce((a, p) => a + p.ceilingCpu, 0) / passes.reduce((a, p) => a + p.cpu, 0);
  say(`| all three passes | | | | | | ${overall.toFixed(2)} | | ${cpuOverall.toFixed(2)} |`);
  for (const p of passes)
    say(
      `| bare Koa + one SQLite event-log append (bare-append.ts), beside ${p.verb} | ${p.append.rps.toFixed(0)} | ${p.append.p50} | ${p.append.p99} | ${p.append.non2xx} | ${p.ceiling.rps.toFixed(0)} | ${(p.append.rps / p.ceiling.rps).toFixed(2)} | ${p.appendCpu.toFixed(3)} (${p.ceilingCpu.toFixed(3)}) | ${(p.ceilingCpu / p.appendCpu).toFixed(2)} |`,
    );
  const floor = passes.reduce((a, p) => a + p.append.rps, 0) / passes.reduce((a, p) => a + p.ceiling.rps, 0);
  say('');
  say(
    `The floor of any event-sourced write here, a bare Koa POST doing one durable append (synchronous=FULL) and nothing else, is ${floor.toFixed(2)} of the bare POST; the transitions reach ${(overall / floor).toFixed(2)} of it.`,
  );
  say('');
  say(
    "CPU: user + system time of the server process, all threads, per request (a transition's includes the mails it queued); steadier than req/s on a busy machine.",
  );
  say('');
  say(`Target: a contract transition at least 0.3 of the bare POST: ${overall >= 0.3 ? 'met' : 'NOT met'}.`);
  say('');
  const slowest = await marketplaceQueryBenchmarks(say);
  say(`Slowest median above: ${slowest.toFixed(3)} ms (target: the dispute queue and a listing search under 5 ms median at 100,000 listings).`);
  say('');
}

/** The slowest median (ms) of the queries at each size. */
async function queryBenchmarks(): Promise<Map<number, number>> {
  const slowest = new Map<number, number>();
  say('## Indexed read-model queries (in-memory store; median of 200 runs)');
  say('');
  say('| documents | query | median ms | p99 ms | examined |');
  say('|---|---|---|---|---|');
  for (const size of [100_000, 1_000_000]) {
    const store = new MemoryReadStore();
    for (const spec of postsProjection.collections) await store.ensureCollection(spec);
    const posts = store.collection('posts');
    const rooms = ['lead-gen', 'investor-connect', 'b2b-sales', 'talent-matching', null];
    for (let i = 1; i <= size; i++) {
      await posts.applyAt(`pst_${i}`, i, {
        $set: { agent_id: `agt_${i % 5000}`, title: `t${i}`, room_slug: rooms[i % rooms.length], hidden: i % 97 === 0, seq: i },
      });
    }
    for (const [label, filter] of [
      ['public feed, first page', { hidden: false }],
      ['one room, first page', { room_slug: 'lead-gen', hidden: false }],
      ["one agent's posts", { agent_id: 'agt_42' }],
    ] as const) {
      const times: number[] = [];
      for (let r = 0; r < 200; r++) {
        const t = performance.now();
        await posts.find(filter, { sort: { seq: -1 }, limit: 20 });
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      const plan = await posts.explain(filter, { sort: { seq: -1 }, limit: 20 });
      say(`| ${size.toLocaleString('en')} | ${label} | ${times[100].toFixed(3)} | ${times[198].toFixed(3)} | ${plan.examined} (${plan.index}) |`);
      slowest.set(size, Math.max(slowest.get(size) ?? 0, times[100]));
    }
  }
  say('');
  return slowest;
}

/** Microseconds per call of `op`, the median of 5 runs of `n` calls. */
async function perOp(n: number, op: (i: number) => unknown): Promise<number> {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await op(i);
    runs.push(((performance.now() - t) * 1000) / n);
  }
  return median(runs);
}

/** The in-memory store's write path, per operation: what every projection write of a replay costs. */
async function storeBenchmarks(): Promise<void> {
  say('## In-memory store writes (median of 5 runs of 100,000)');
  say('');
  say('| operation | µs per op |');
  say('|---|---|');
  const store = new MemoryReadStore();
  await store.ensureCollection({
    name: 'agents',
    indexes: [
      { name: 'handle', keys: { handle: 1 }, unique: true },
      { name: 'karma', keys: { karma: -1 } },
    ],
  });
  const agents = store.collection<string>('agents');
  for (let i = 0; i < 1000; i++) await agents.applyAt(`a${i}`, i + 1, { $set: { handle: `h${i}`, karma: 0 } });
  let position = 2000;
  const applyAt = await perOp(100_000, (i) => agents.applyAt(`a${i % 1000}`, position++, { $set: { last_seen: 'x' }, $inc: { posts: 1 } }));
  say(`| applyAt: $set and $inc on a document with two secondary indexes | ${applyAt.toFixed(2)} |`);
  const doc: Record<string, unknown> = { _id: 'a', n: 0, name: 'x', o: { c: 0 } };
  const update = await perOp(100_000, (i) =>
    applyUpdate(doc, { $set: { name: i & 1 ? 'a' : 'b', at: '2024-01-01' }, $inc: { n: 1, 'o.c': 2 } }, { isInsert: false }),
  );
  say(`| applyUpdate: the same update on a plain document | ${update.toFixed(2)} |`);
  say('');
}

const verdict = (met: boolean) => (met ? 'met' : 'not met');

/** The targets of the write path, the log, replay and queries, each with this run's figure and whether it is met. */
function targets(http: HttpFigures, appendRatio: number, replay: ReplayFigures[], queries: Map<number, number>): string[] {
  const out = ['## Targets, from this run', ''];
  const httpMet = http.postsRatio >= 0.3 && http.postsP99 < 40;
  out.push(
    `- Charged write path >= 0.3 of a bare Koa + koa-body POST handler with p99 < 40 ms: ${verdict(httpMet)} (ratio ${http.postsRatio.toFixed(2)}, p99 ${http.postsP99} ms, worst round ${http.postsP99Worst} ms).`,
  );
  out.push(`- Raw append >= 0.7 of a plain better-sqlite3 insert loop at the same durability: ${verdict(appendRatio >= 0.7)} (${appendRatio.toFixed(2)}).`);
  for (const r of replay) {
    const met = r.ratio >= 0.6 && r.replay >= 300_000;
    out.push(
      `- Replay >= 300,000 events/s and >= 0.6 of a raw read + JSON.parse loop, ${r.log} log: ${verdict(met)} (${r.replay.toFixed(0)} events/s, ratio ${r.ratio.toFixed(2)}; the ceiling itself read ${r.raw.toFixed(0)} events/s; ${(r.indexShare * 100).toFixed(0)}% of the catch-up went to building indexes, and with no secondary index at all the projections' documents alone reached ${r.floors.documentsOnly.toFixed(2)}).`,
    );
  }
  const q100k = queries.get(100_000) ?? Number.NaN;
  const q1m = queries.get(1_000_000) ?? Number.NaN;
  out.push(
    `- Indexed read-model query < 1 ms at 100,000 documents: ${verdict(q100k < 1)} (slowest median ${q100k.toFixed(3)} ms; at 1,000,000: ${q1m.toFixed(3)} ms).`,
  );
  out.push('');
  return out;
}

/** Runs one suite, keeping the lines it says as its section of docs/PERFORMANCE.md. */
async function suite<T>(name: string, run: () => Promise<T>): Promise<T> {
  const from = out.length;
  const result = await run();
  suites.push({ name, lines: out.splice(from) });
  return result;
}

async function main() {
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  const machine = `${os.cpus().length} x ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  const today = new Date().toISOString().slice(0, 10);
  const docPath = join(root, 'docs/PERFORMANCE.md');
  const only = process.argv[2];
  if (only) {
    const sections: Record<string, () => Promise<unknown>> = {
      http: httpBenchmarks,
      log: logBenchmarks,
      replay: () => replayBenchmarks(say),
      query: queryBenchmarks,
      store: storeBenchmarks,
      messaging: () => messagingBenchmarks(say),
      feed: feedReadBenchmarks,
      social: socialBenchmarks,
      'social-queries': () => socialQueryBenchmarks(say),
      marketplace: marketplaceBenchmarks,
      'marketplace-queries': () => marketplaceQueryBenchmarks(say),
      mcp: mcpBenchmarks,
      rebuild: () => rebuildBenchmarks(say),
      circles: () => circleBenchmarks(say, { spawnServer, stopServer, load, rounds: ROUNDS, duration: DURATION }),
      moderation: () => moderationBenchmarks(say),
      site: () => siteBenchmarks(say, { spawnServer, stopServer, loadGet, rounds: ROUNDS, duration: DURATION, root }),
      scale: () =>
        scaleBenchmarks(
          say,
          { spawnServer, stopServer, load, loadGet, rounds: ROUNDS, duration: DURATION },
          scaleSizes(process.argv.slice(3)),
          join(root, 'docs/PERFORMANCE.md'),
        ),
    };
    const run = sections[only];
    if (!run) throw new Error(`unknown section ${only}: one of ${Object.keys(sections).join(', ')}`);
    // The scale benchmark writes its own part of the document (after the bench markers), which a full run keeps.
    if (only === 'scale') return void (await run());
    await suite(only, run);
    // BENCH_WRITE=0: print the figures without writing them into the document.
    if (process.env.BENCH_WRITE === '0') return;
    const [measured] = suites;
    while (measured.lines.at(-1) === '') measured.lines.pop();
    measured.lines.push('', `Measured ${today} by \`npm run bench -- ${only}\` on ${machine}.`);
    writeFileSync(docPath, writeReport(readFileSync(docPath, 'utf8'), { suites: [measured] }, { replaceAll: false }));
    return;
  }
  const http = await suite('http', httpBenchmarks);
  const appendRatio = await suite('log', logBenchmarks);
  const replay = await suite('replay', () => replayBenchmarks(say));
  const queries = await suite('query', queryBenchmarks);
  await suite('store', storeBenchmarks);
  await suite('messaging', () => messagingBenchmarks(say));
  await suite('feed', feedReadBenchmarks);
  await suite('social', socialBenchmarks);
  await suite('marketplace', marketplaceBenchmarks);
  await suite('mcp', mcpBenchmarks);
  await suite('circles', () => circleBenchmarks(say, { spawnServer, stopServer, load, rounds: ROUNDS, duration: DURATION }));
  await suite('moderation', () => moderationBenchmarks(say));
  await suite('site', () => siteBenchmarks(say, { spawnServer, stopServer, loadGet, rounds: ROUNDS, duration: DURATION, root }));
  suites.push({ name: 'targets', lines: targets(http, appendRatio, replay, queries) });
  const header = [
    `Measured ${today} by \`npm run bench\` on ${machine}.`,
    'These machines are shared and noisy: every figure is compared with a ceiling measured in the same run.',
  ];
  if (process.env.BENCH_WRITE === '0') return;
  writeFileSync(docPath, writeReport(readFileSync(docPath, 'utf8'), { header, suites }, { replaceAll: true }));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
