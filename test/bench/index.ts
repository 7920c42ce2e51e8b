// npm run bench: every figure is a ratio to a ceiling measured in the same run on the same machine.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { SqliteEventLog } from '../../events/store/sqlite.ts';
import type { NewEvent } from '../../events/store/port.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { postsProjection } from '../../projections/feed.ts';
import { request } from '../helpers/service.ts';
import { messagingBenchmarks } from './messaging.ts';
import { replayBenchmarks } from './replay.ts';

const root = new URL('../..', import.meta.url).pathname;
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
const out: string[] = [];
const say = (line: string) => {
  process.stdout.write(`${line}\n`);
  out.push(line);
};

function spawnServer(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = () =>
      request(url, 'GET', '/health').then(
        (r) => (r.status === 200 ? resolve({ child, url }) : setTimeout(poll, 100)),
        () => (Date.now() > deadline ? reject(new Error(`${args[0]} did not start`)) : setTimeout(poll, 100)),
      );
    poll();
  });
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
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

async function httpBenchmarks() {
  say('## HTTP (autocannon, 50 connections, ' + DURATION + ' s each)');
  const bare = await spawnServer(['test/bench/bare-koa.ts'], {});
  // warm-up
  await load(bare.url, '/', () => ({ body: JSON.stringify({ title: 'x', body: 'y', post_type: 'signal_found' }) }));
  const ceiling = await load(bare.url, '/', () => ({ body: JSON.stringify({ title: 'Bench', body: 'Bench body #tag', post_type: 'signal_found' }) }));
  await stopServer(bare.child);

  const dataDir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-'));
  const svc = await spawnServer(['api/server.ts'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' });
  let n = 0;
  const register = await load(svc.url, '/api/protocol/register', () => ({
    body: JSON.stringify({ name: `Bench ${++n}`, capabilities: ['lead-gen'], owner_name: 'Bench', owner_email: `bench-${n}-${randomUUID()}@example.com` }),
  }));
  // Enough agents that no balance runs out during the run (50 credits = 500 posts each).
  const keys: string[] = [];
  for (let i = 0; i < 400; i++) {
    const r = await request(svc.url, 'POST', '/api/protocol/register', { body: { name: `W${i}`, capabilities: ['lead-gen'], owner_name: 'W', owner_email: `writer-${i}-${randomUUID()}@example.com` } });
    keys.push(r.body.api_key as string);
  }
  let k = 0;
  const post = await load(svc.url, '/api/feed/posts', () => ({
    // Distinct titles: the same agent repeating a title and body within 48 h is a suppressed duplicate signal.
    body: JSON.stringify({ title: `Bench post ${k}`, body: 'A signal with #bench and #load', post_type: 'signal_found', room_slug: 'lead-gen' }),
    headers: { 'x-api-key': keys[k++ % keys.length] },
  }));
  await stopServer(svc.child);
  rmSync(dataDir, { recursive: true, force: true });

  say('');
  say('| path | req/s | p50 ms | p99 ms | non-2xx | ratio to bare Koa |');
  say('|---|---|---|---|---|---|');
  say(`| bare Koa + koa-body POST (ceiling) | ${ceiling.rps.toFixed(0)} | ${ceiling.p50} | ${ceiling.p99} | ${ceiling.non2xx} | 1.00 |`);
  say(`| POST /api/protocol/register | ${register.rps.toFixed(0)} | ${register.p50} | ${register.p99} | ${register.non2xx} | ${(register.rps / ceiling.rps).toFixed(2)} |`);
  say(`| POST /api/feed/posts (charged, synchronous=FULL) | ${post.rps.toFixed(0)} | ${post.p50} | ${post.p99} | ${post.non2xx} | ${(post.rps / ceiling.rps).toFixed(2)} |`);
  say('');
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
  metadata: { actor: null, request_id: null, correlation_id: null, causation_id: randomUUID(), occurred_at: new Date(1_780_000_000_000 + i * 1000).toISOString(), schema_version: 1 },
});

async function logBenchmarks() {
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-network-bench-log-'));
  const N = 50_000;
  const CONCURRENCY = 100;
  try {
    // Ceiling: raw better-sqlite3 inserts of the same rows, committed in batches of CONCURRENCY.
    const raw = new Database(join(dir, 'raw.sqlite'));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.exec('CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE(stream, revision))');
    const ins = raw.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
    const batch = raw.transaction((rows: NewEvent[], base: number) => {
      rows.forEach((e, j) => ins.run(e.id, `agent-${(base + j) % 1000}`, Math.floor((base + j) / 1000), e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)));
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
      await Promise.all(events.slice(i, i + CONCURRENCY).map((e, j) => log.append(`agent-${(i + j) % 1000}`, [e], (i + j) < 1000 ? 'no_stream' : Math.floor((i + j) / 1000) - 1)));
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function queryBenchmarks() {
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
      await posts.applyAt(`pst_${i}`, i, { $set: { agent_id: `agt_${i % 5000}`, title: `t${i}`, room_slug: rooms[i % rooms.length], hidden: i % 97 === 0, seq: i } });
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
    }
  }
  say('');
}

const NOTES = [
  '## Targets (issue 2) and where the time goes',
  '',
  'The ratios in the tables above are the figures of record; these notes explain them.',
  '',
  '- Raw append >= 0.7 of a plain better-sqlite3 insert loop at the same durability: met.',
  '- Indexed read-model query < 1 ms at 100,000 documents, first feed page < 5 ms at 1,000,000: met.',
  '- Charged write path >= 0.3 of a bare Koa + koa-body POST handler with p99 < 40 ms: not met',
  '  (0.19 to 0.23 over three runs on 2026-11-22, p99 36 to 43 ms; the first measurement was',
  '  0.13 and 72 ms). The main thread is saturated: per post, about a fifth of its time goes to the',
  '  read models that follow the post (the post document and its four indexes, one entry per',
  '  search term in by_term; the feed counters, rooms, hashtags, daily usage), a quarter to Koa and',
  '  HTTP (what the bare handler also pays), then garbage collection, the command (aggregate, signal',
  '  window, charge), handing the append to the writer thread, and the API-key hash.',
  '- Replay >= 0.6 of a raw SQLite read + JSON.parse loop: not met (mixed log 0.24 to 0.28, posts-only',
  '  log 0.11 to 0.15, over two full runs; they were 0.17 and 0.08). A catch-up from far behind now bulk loads: documents',
  '  are written without their non-unique index entries, and each index is built at the end from one',
  '  sort of its keys. What is left per event of the mixed log: garbage collection (a sixth), reading',
  '  and parsing the log (a sixth, as in the ceiling), writing the documents, the projections\' own',
  '  logic, and the index builds (computing the keys costs more than sorting them).',
  '- Per-projection costs in the table above are measured with indexes maintained write by write',
  '  (each projection alone), the way live application runs.',
  '- Tried and dropped because they did not make the full run faster: index trees partitioned on',
  '  their first field, a read-ahead thread for catch-up reads, per-group insertion hints in the',
  '  index trees (about 10% off each insert: the cost is memory latency, not the descent), and a',
  '  larger V8 young generation (within the noise of these machines).',
];

async function main() {
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  const header = [
    '# Performance',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench\` on ${os.cpus().length} x ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`,
    'These machines are shared and noisy: every figure is compared with a ceiling measured in the same run.',
    '',
  ];
  const only = process.argv[2];
  if (!only || only === 'http') await httpBenchmarks();
  if (!only || only === 'log') await logBenchmarks();
  if (!only || only === 'replay') await replayBenchmarks(say);
  if (!only || only === 'query') await queryBenchmarks();
  if (!only || only === 'messaging') await messagingBenchmarks(say);
  if (!only) writeFileSync(join(root, 'docs/PERFORMANCE.md'), [...header, ...out, ...NOTES, ''].join('\n'));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
