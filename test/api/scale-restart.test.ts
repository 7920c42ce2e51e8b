// Restarts of the embedded default on a long log (real processes): a first start that replays it,
// kill -9 under a write load, the start after the crash (last snapshot plus the tail), read models
// equal to a rebuild from position 0, and a start from a clean stop's snapshot. SCALE_EVENTS sets
// the log's length (20,000 by default; 1,000,000 for the figures in docs/PERFORMANCE.md); each
// phase's time and the heap held are printed.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fill } from '../bench/replay.ts';
import { defined } from '../helpers/defined.ts';
import type { LogLine, ServerProcess } from '../helpers/process.ts';
import { bootServerProcess, projectRoot } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

const EVENTS = Number(process.env.SCALE_EVENTS ?? 20_000);
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';
/** Posts acknowledged under the load before the kill. */
const ACKNOWLEDGED = 150;

describe(`restarts at scale: a ${EVENTS}-event log (real processes, embedded stores)`, function () {
  this.timeout(3_600_000);
  let dataDir: string;
  const figures: Record<string, unknown> = { events: EVENTS };
  let server: ServerProcess | null = null;
  // Every start writes a snapshot after a replay of a tenth of the log (100,000 at 1 million).
  const env = { READ_STORE: 'memory', SECRET_KEY: SECRET, READ_MODEL_SNAPSHOT_AFTER_EVENTS: String(Math.max(1000, Math.floor(EVENTS / 10))) };

  const boot = async (name: string, extra: Record<string, string> = {}) => {
    const t = performance.now();
    server = await bootServerProcess(dataDir, { ...env, ...extra });
    const caughtUp = defined(server.line('read models caught up'), "the line 'read models caught up'");
    figures[`${name}_listening_ms`] = Math.round(performance.now() - t);
    figures[`${name}_caught_up_ms`] = caughtUp.ms;
    figures[`${name}_heap_used_mb`] = caughtUp.heap_used_mb;
    return server;
  };
  const line = (msg: string): LogLine => defined(server?.line(msg), `the line '${msg}'`);

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-scale-'));
    const t = performance.now();
    await fill(join(dataDir, 'events.sqlite'), 'mix', EVENTS);
    figures.fill_ms = Math.round(performance.now() - t);
  });
  after(() => {
    server?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    process.stdout.write(`      scale figures: ${JSON.stringify(figures)}\n`);
  });

  it('keeps every acknowledged write over kill -9, restores from snapshots, and equals a rebuild from position 0', async () => {
    // 1. The first start replays the whole log and, that being long, saves it before it answers.
    await boot('first_start');
    expect(line('read models caught up')).to.include({ position: EVENTS });
    expect(line('read-model snapshot written')).to.include({ position: EVENTS, why: 'long replay at start' });
    figures.snapshot_mb = Math.round((line('read-model snapshot written').bytes as number) / 1e6);
    figures.snapshot_write_ms = line('read-model snapshot written').ms;

    // 2. kill -9 under a write load.
    const base = defined(server as ServerProcess | null, 'the server').url;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    const reg = await request(base, 'POST', '/api/protocol/register', {
      agent,
      body: { name: 'Scale', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'scale@example.com' },
    });
    expect(reg.status).to.equal(200);
    const apiKey = reg.body.api_key as string;
    const acknowledged: string[] = [];
    let enough: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (enough = resolve));
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await request(base, 'POST', '/api/feed/posts', {
            agent,
            apiKey,
            body: { title: `w${w}-${i}`, body: 'scaleload', post_type: 'signal_found' },
            headers: { 'idempotency-key': `w${w}-${i}` },
          });
          if (r.status === 200 && acknowledged.push(r.body.post_id as string) === ACKNOWLEDGED) enough();
        } catch {
          return; // the server died under us
        }
      }
    };
    const load = Promise.all(Array.from({ length: 20 }, (_, w) => worker(w)));
    await Promise.race([
      reached,
      load.then(() => {
        if (acknowledged.length < ACKNOWLEDGED) throw new Error(`the load ended after ${acknowledged.length} acknowledged writes`);
      }),
    ]);
    const killed = defined(server as ServerProcess | null, 'the server').stop('SIGKILL');
    stop = true;
    await load;
    agent.destroy();
    await killed;
    server = null;

    // 3. The start after the crash: the snapshot of step 1 and the events appended since.
    await boot('after_kill_9');
    expect(line('read models restored from snapshot')).to.include({ position: EVENTS });
    figures.after_kill_9_snapshot_load_ms = line('read models restored from snapshot').ms;
    const after = defined(server as ServerProcess | null, 'the server').url;
    const seen = new Map<string, number>();
    for (let page = 0; ; page++) {
      const r = await request(after, 'GET', `/api/agent/posts?q=scaleload&limit=100&page=${page}`);
      for (const p of r.body.items as Array<{ post_id: string }>) seen.set(p.post_id, (seen.get(p.post_id) ?? 0) + 1);
      if (r.body.items.length < 100) break;
    }
    for (const id of acknowledged) expect(seen.get(id), id).to.equal(1);
    for (const count of seen.values()) expect(count).to.equal(1);
    const credits = await request(after, 'GET', `/api/protocol/agents/${reg.body.agent_id}/credits`, { apiKey });
    expect(credits.body.used).to.equal(Math.round(seen.size * 10) / 100);
    const feed = await request(after, 'GET', '/api/feed/posts?limit=50');

    // 4. A clean stop writes the snapshot; the next start loads it and replays nothing.
    expect(await defined(server as ServerProcess | null, 'the server').stop('SIGTERM')).to.equal(0);
    server = null;
    await boot('after_clean_stop');
    expect(line('read models restored from snapshot').position).to.be.greaterThan(EVENTS);
    figures.after_clean_stop_snapshot_load_ms = line('read models restored from snapshot').ms;
    expect((await request(defined(server as ServerProcess | null, 'the server').url, 'GET', '/api/feed/posts?limit=50')).body).to.deep.equal(feed.body);
    expect(await defined(server as ServerProcess | null, 'the server').stop('SIGTERM')).to.equal(0);
    server = null;

    // 5. Restart-equal: the read models loaded from that snapshot equal a rebuild from position 0.
    const t = performance.now();
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'api/cli.ts', 'replay'], {
      cwd: projectRoot,
      env: { ...process.env, READ_STORE: 'memory', DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    figures.rebuild_and_compare_ms = Math.round(performance.now() - t);
    expect(cli.status, cli.stderr).to.equal(0);
    expect(cli.stdout).to.include('all rebuilt read models equal the live ones');
    expect(cli.stdout).not.to.include('MISMATCH');
  });
});
