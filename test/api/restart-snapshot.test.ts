import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SNAPSHOT_FILE } from '../../api/services.ts';
import { projectionCodeFingerprint, readSnapshot, writeSnapshot } from '../../projections/store/snapshot.ts';
import type { Snapshot } from '../../projections/store/snapshot.ts';
import { fill } from '../bench/replay.ts';
import { defined } from '../helpers/defined.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess, startServerProcess } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

/** The snapshot with one post's title changed: it passes every check (same code, intact, same last event). */
function retitled(snapshot: Snapshot | null, from: string, to: string): Snapshot {
  const s = defined(snapshot, 'the snapshot');
  const doc = defined(
    s.collections.find((c) => c.name === 'posts')?.docs.find((d) => d.title === from),
    `the post '${from}' in the snapshot`,
  );
  doc.title = to;
  return s;
}

/** Snapshots are the in-memory read store's (READ_STORE=memory); the SQLite store's restarts: sqlite-restart.test.ts. */
const MEMORY = { READ_STORE: 'memory' };

describe('restart from a read-model snapshot (real processes, embedded stores)', function () {
  this.timeout(600_000);
  let dataDir: string;
  let server: ServerProcess | null = null;
  let apiKey: string;
  const snapshotPath = () => join(dataDir, SNAPSHOT_FILE);
  const running = () => defined(server, 'a running server');
  /** Stops the running server with `signal`; resolves with its exit code. */
  const stop = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const code = await running().stop(signal);
    server = null;
    return code;
  };
  const boot = async (env: Record<string, string> = {}) => {
    // One server on the data directory at a time, even after a test that failed half-way.
    if (server) await stop('SIGKILL');
    server = await bootServerProcess(dataDir, { ...MEMORY, ...env });
  };

  const titles = async (): Promise<string[]> => {
    const r = await request(running().url, 'GET', '/api/feed/posts?limit=100');
    expect(r.status).to.equal(200);
    return (r.body.items as Array<{ title: string }>).map((p) => p.title).sort();
  };
  const post = async (title: string) => {
    const r = await request(running().url, 'POST', '/api/feed/posts', { apiKey, body: { title, body: `${title} #restart`, post_type: 'signal_found' } });
    expect(r.status).to.equal(200);
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-restart-'));
    await boot();
    const reg = await request(running().url, 'POST', '/api/protocol/register', {
      body: { name: 'Restarter', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'restart@example.com' },
    });
    expect(reg.status).to.equal(200);
    apiKey = reg.body.api_key as string;
    for (const t of ['first', 'second', 'third']) await post(t);
  });
  after(async () => {
    if (server) await stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a clean stop writes the snapshot (owner-only file); the next start uses it', async () => {
    expect(await stop('SIGTERM')).to.equal(0);
    expect(existsSync(snapshotPath())).to.equal(true);
    expect(statSync(snapshotPath()).mode & 0o777).to.equal(0o600);
    // Proof that the start reads the snapshot rather than the log: a title changed in a snapshot
    // that passes every check (same code, intact, same last event) is what the feed then shows.
    const snapshot = retitled(readSnapshot(snapshotPath(), projectionCodeFingerprint()), 'first', 'first (from the snapshot)');
    const { fingerprint, position, eventId, createdAt } = snapshot.header;
    writeSnapshot(snapshotPath(), { fingerprint, position, eventId, createdAt }, snapshot.collections);
    await boot();
    expect(await titles()).to.deep.equal(['first (from the snapshot)', 'second', 'third']);
    // The agent, its key and its balance came back too: it can post at once.
    await post('fourth');
    const me = await request(running().url, 'GET', '/api/protocol/me', { apiKey });
    expect(me.status).to.equal(200);
  });

  it('after kill -9, the start takes the last snapshot and replays the events appended since', async () => {
    const before = readFileSync(snapshotPath());
    await post('fifth');
    await stop('SIGKILL');
    await boot();
    // The snapshot is the one of the last clean stop (kill -9 writes none) ...
    expect(readFileSync(snapshotPath()).equals(before)).to.equal(true);
    // ... and the posts made after it were replayed from the log onto it.
    expect(await titles()).to.deep.equal(['fifth', 'first (from the snapshot)', 'fourth', 'second', 'third']);
    const credits = await request(running().url, 'GET', '/api/protocol/credits', { apiKey });
    expect(credits.status).to.equal(200);
  });

  it('a damaged snapshot is not used: the start replays the whole log', async () => {
    await stop('SIGTERM');
    const bytes = readFileSync(snapshotPath());
    bytes[bytes.length >> 1] ^= 0x01;
    writeFileSync(snapshotPath(), bytes);
    await boot();
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'third']);
  });

  it('READ_MODEL_SNAPSHOTS=0: no snapshot is read or written', async () => {
    await stop('SIGTERM');
    // A valid snapshot (from the clean stop above) with a changed title: not read when disabled.
    const snapshot = retitled(readSnapshot(snapshotPath(), projectionCodeFingerprint()), 'second', 'second (from the snapshot)');
    writeSnapshot(snapshotPath(), { ...snapshot.header }, snapshot.collections);
    const written = readFileSync(snapshotPath());
    await boot({ READ_MODEL_SNAPSHOTS: '0' });
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'third']);
    await post('sixth');
    expect(await stop('SIGTERM')).to.equal(0);
    expect(readFileSync(snapshotPath()).equals(written)).to.equal(true);
  });

  it('a start that replays at least READ_MODEL_SNAPSHOT_AFTER_EVENTS events writes a snapshot before it answers', async () => {
    rmSync(snapshotPath());
    await boot({ READ_MODEL_SNAPSHOT_AFTER_EVENTS: '1' });
    // Written during the start (the whole log was replayed), before /health said 200.
    const snapshot = readSnapshot(snapshotPath(), projectionCodeFingerprint());
    const saved = snapshot?.collections
      .find((c) => c.name === 'posts')
      ?.docs.map((d) => d.title)
      .sort();
    expect(saved).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'sixth', 'third']);
    await stop('SIGKILL');
    await boot();
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'sixth', 'third']);
  });
});

describe('a stop signal during the start-up catch-up (real processes, embedded stores)', function () {
  this.timeout(600_000);
  const EVENTS = 100_000;
  let dataDir: string;
  const started: ServerProcess[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-start-stop-'));
    await fill(join(dataDir, 'events.sqlite'), 'mix', EVENTS);
  });
  after(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 while catching up, stops cleanly on SIGTERM keeping its progress, and the next start carries on from it', async () => {
    // Resolves when the catch-up begins. Its first page (5,000 events, past the 1,000 that make a
    // stop write a snapshot) is applied before the process takes another turn of its event loop,
    // so the request and the signal below are handled between two pages of this long catch-up.
    const first = await startServerProcess(dataDir, { ...MEMORY, READ_MODEL_SNAPSHOT_AFTER_EVENTS: '1000' });
    started.push(first);
    const health = await request(first.url, 'GET', '/health');
    expect(health.status).to.equal(503);
    expect(health.body).to.include({ status: 'starting' });
    expect(await first.stop('SIGTERM')).to.equal(0);
    const stopped = defined(first.line('stopped during start-up'), "the line 'stopped during start-up'");
    const cut = stopped.position;
    expect(cut)
      .to.be.a('number')
      .within(1000, EVENTS - 1);
    expect(first.line('read-model snapshot written')).to.include({ position: cut, why: 'stopped during start-up' });
    expect(readSnapshot(join(dataDir, SNAPSHOT_FILE), projectionCodeFingerprint())?.header.position).to.equal(cut);

    // The next start loads that cut and replays only the rest.
    const second = await bootServerProcess(dataDir, MEMORY);
    started.push(second);
    expect(second.line('read models restored from snapshot')).to.include({ position: cut });
    const caughtUp = defined(second.line('read models caught up'), "the line 'read models caught up'");
    expect(caughtUp).to.include({ position: EVENTS });
    // The heap the read models leave is in the same line (a warning follows when it runs short).
    expect(caughtUp.heap_used_mb).to.be.a('number').and.above(0);
    expect(caughtUp.heap_limit_mb)
      .to.be.a('number')
      .and.above(caughtUp.heap_used_mb as number);
    const resumed = await request(second.url, 'GET', '/api/feed/posts?limit=50');
    const agents = await request(second.url, 'GET', '/api/protocol/agents?limit=50');
    expect(await second.stop('SIGTERM')).to.equal(0);

    // What it serves equals a start that replays the whole log without a snapshot.
    const whole = await bootServerProcess(dataDir, { ...MEMORY, READ_MODEL_SNAPSHOTS: '0' });
    started.push(whole);
    expect(whole.line('read models restored from snapshot')).to.equal(undefined);
    expect((await request(whole.url, 'GET', '/api/feed/posts?limit=50')).body).to.deep.equal(resumed.body);
    expect((await request(whole.url, 'GET', '/api/protocol/agents?limit=50')).body).to.deep.equal(agents.body);
    expect(await whole.stop('SIGTERM')).to.equal(0);
  });
});
