import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SNAPSHOT_FILE } from '../../api/services.ts';
import { projectionCodeFingerprint, readSnapshot, writeSnapshot } from '../../projections/store/snapshot.ts';
import { fill } from '../bench/replay.ts';
import { bootServerProcess, projectRoot, randomPort } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

async function stop(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

describe('restart from a read-model snapshot (real processes, embedded stores)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let port: number;
  let base: string;
  let child: ChildProcess | null = null;
  let apiKey: string;
  const snapshotPath = () => join(dataDir, SNAPSHOT_FILE);

  const titles = async (): Promise<string[]> => {
    const r = await request(base, 'GET', '/api/feed/posts?limit=100');
    expect(r.status).to.equal(200);
    return (r.body.items as Array<{ title: string }>).map((p) => p.title).sort();
  };
  const post = async (title: string) => {
    const r = await request(base, 'POST', '/api/feed/posts', { apiKey, body: { title, body: `${title} #restart`, post_type: 'signal_found' } });
    expect(r.status).to.equal(200);
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-restart-'));
    port = randomPort();
    base = `http://127.0.0.1:${port}`;
    child = await bootServerProcess(dataDir, port);
    const reg = await request(base, 'POST', '/api/protocol/register', {
      body: { name: 'Restarter', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'restart@example.com' },
    });
    expect(reg.status).to.equal(200);
    apiKey = reg.body.api_key as string;
    for (const t of ['first', 'second', 'third']) await post(t);
  });
  after(async () => {
    if (child) await stop(child, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a clean stop writes the snapshot (owner-only file); the next start uses it', async () => {
    expect(await stop(child as ChildProcess, 'SIGTERM')).to.equal(0);
    child = null;
    expect(existsSync(snapshotPath())).to.equal(true);
    expect(statSync(snapshotPath()).mode & 0o777).to.equal(0o600);
    // Proof that the start reads the snapshot rather than the log: a title changed in a snapshot
    // that passes every check (same code, intact, same last event) is what the feed then shows.
    const snapshot = readSnapshot(snapshotPath(), projectionCodeFingerprint());
    const posts = snapshot?.collections.find((c) => c.name === 'posts');
    const doc = posts?.docs.find((d) => d.title === 'first');
    expect(doc).to.not.equal(undefined);
    doc!.title = 'first (from the snapshot)';
    const { fingerprint, position, eventId, createdAt } = snapshot!.header;
    writeSnapshot(snapshotPath(), { fingerprint, position, eventId, createdAt }, snapshot!.collections);
    child = await bootServerProcess(dataDir, port);
    expect(await titles()).to.deep.equal(['first (from the snapshot)', 'second', 'third']);
    // The agent, its key and its balance came back too: it can post at once.
    await post('fourth');
    const me = await request(base, 'GET', '/api/protocol/me', { apiKey });
    expect(me.status).to.equal(200);
  });

  it('after kill -9, the start takes the last snapshot and replays the events appended since', async () => {
    const before = readFileSync(snapshotPath());
    await post('fifth');
    await stop(child as ChildProcess, 'SIGKILL');
    child = await bootServerProcess(dataDir, port);
    // The snapshot is the one of the last clean stop (kill -9 writes none) ...
    expect(readFileSync(snapshotPath()).equals(before)).to.equal(true);
    // ... and the posts made after it were replayed from the log onto it.
    expect(await titles()).to.deep.equal(['fifth', 'first (from the snapshot)', 'fourth', 'second', 'third']);
    const credits = await request(base, 'GET', '/api/protocol/credits', { apiKey });
    expect(credits.status).to.equal(200);
  });

  it('a damaged snapshot is not used: the start replays the whole log', async () => {
    await stop(child as ChildProcess, 'SIGTERM');
    child = null;
    const bytes = readFileSync(snapshotPath());
    bytes[bytes.length >> 1] ^= 0x01;
    writeFileSync(snapshotPath(), bytes);
    child = await bootServerProcess(dataDir, port);
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'third']);
  });

  it('READ_MODEL_SNAPSHOTS=0: no snapshot is read or written', async () => {
    await stop(child as ChildProcess, 'SIGTERM');
    child = null;
    // A valid snapshot (from the clean stop above) with a changed title: not read when disabled.
    const snapshot = readSnapshot(snapshotPath(), projectionCodeFingerprint());
    const doc = snapshot?.collections.find((c) => c.name === 'posts')?.docs.find((d) => d.title === 'second');
    doc!.title = 'second (from the snapshot)';
    writeSnapshot(snapshotPath(), { ...snapshot!.header }, snapshot!.collections);
    const written = readFileSync(snapshotPath());
    child = await bootServerProcess(dataDir, port, { READ_MODEL_SNAPSHOTS: '0' });
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'third']);
    await post('sixth');
    expect(await stop(child as ChildProcess, 'SIGTERM')).to.equal(0);
    child = null;
    expect(readFileSync(snapshotPath()).equals(written)).to.equal(true);
  });

  it('a start that replays at least READ_MODEL_SNAPSHOT_AFTER_EVENTS events writes a snapshot before it answers', async () => {
    rmSync(snapshotPath());
    child = await bootServerProcess(dataDir, port, { READ_MODEL_SNAPSHOT_AFTER_EVENTS: '1' });
    // Written during the start (the whole log was replayed), before /health said 200.
    const snapshot = readSnapshot(snapshotPath(), projectionCodeFingerprint());
    const saved = snapshot?.collections
      .find((c) => c.name === 'posts')
      ?.docs.map((d) => d.title)
      .sort();
    expect(saved).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'sixth', 'third']);
    await stop(child as ChildProcess, 'SIGKILL');
    child = await bootServerProcess(dataDir, port);
    expect(await titles()).to.deep.equal(['fifth', 'first', 'fourth', 'second', 'sixth', 'third']);
  });
});

describe('a stop signal during the start-up catch-up (real processes, embedded stores)', function () {
  this.timeout(180_000);
  const EVENTS = 100_000;
  let dataDir: string;
  let port: number;
  let base: string;

  /** Starts the service with info logs on stdout, collected as parsed lines. */
  const spawnService = (env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: projectRoot,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMIT_SCALE: '0', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: Array<Record<string, unknown>> = [];
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.startsWith('{')) lines.push(JSON.parse(p) as Record<string, unknown>);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, lines, exited, line: (msg: string) => lines.find((l) => l.msg === msg) };
  };
  /** Polls /health until it answers; returns the status and how long that answer took. */
  const firstAnswer = async (): Promise<{ status: number; ms: number }> => {
    for (;;) {
      const t = Date.now();
      try {
        const r = await request(base, 'GET', '/health');
        return { status: r.status, ms: Date.now() - t };
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-start-stop-'));
    port = randomPort();
    base = `http://127.0.0.1:${port}`;
    await fill(join(dataDir, 'events.sqlite'), 'mix', EVENTS);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers 503 at once while catching up, stops cleanly on SIGTERM keeping its progress, and the next start carries on from it', async () => {
    const first = spawnService({ READ_MODEL_SNAPSHOT_AFTER_EVENTS: '1000' });
    // The catch-up gives the event loop turns: /health answers 503 promptly, not when it ends.
    const answer = await firstAnswer();
    expect(answer.status).to.equal(503);
    expect(answer.ms).to.be.below(1000);
    first.child.kill('SIGTERM');
    expect(await first.exited).to.equal(0);
    const stopped = first.line('stopped during start-up');
    expect(stopped, 'the signal landed during the catch-up').to.not.equal(undefined);
    const cut = stopped!.position as number;
    expect(cut).to.be.within(1000, EVENTS - 1);
    expect(first.line('read-model snapshot written')).to.include({ position: cut, why: 'stopped during start-up' });
    expect(readSnapshot(join(dataDir, SNAPSHOT_FILE), projectionCodeFingerprint())?.header.position).to.equal(cut);

    // The next start loads that cut and replays only the rest.
    const second = spawnService();
    for (;;) {
      if ((await firstAnswer()).status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(second.line('read models restored from snapshot')).to.include({ position: cut });
    const caughtUp = second.line('read models caught up');
    expect(caughtUp).to.include({ position: EVENTS });
    // The heap the read models leave is in the same line (a warning follows when it runs short).
    expect(caughtUp!.heap_used_mb).to.be.a('number').and.above(0);
    expect(caughtUp!.heap_limit_mb)
      .to.be.a('number')
      .and.above(caughtUp!.heap_used_mb as number);
    const resumed = await request(base, 'GET', '/api/feed/posts?limit=50');
    const agents = await request(base, 'GET', '/api/protocol/agents?limit=50');
    second.child.kill('SIGTERM');
    expect(await second.exited).to.equal(0);

    // What it serves equals a start that replays the whole log without a snapshot.
    const whole = spawnService({ READ_MODEL_SNAPSHOTS: '0' });
    for (;;) {
      if ((await firstAnswer()).status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(whole.line('read models restored from snapshot')).to.equal(undefined);
    expect((await request(base, 'GET', '/api/feed/posts?limit=50')).body).to.deep.equal(resumed.body);
    expect((await request(base, 'GET', '/api/protocol/agents?limit=50')).body).to.deep.equal(agents.body);
    whole.child.kill('SIGTERM');
    expect(await whole.exited).to.equal(0);
  });
});
