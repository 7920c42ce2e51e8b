// Restarts of the SQLite read store (READ_STORE=sqlite) as real processes:
// kill -9 in the middle of the start-up catch-up, then a start that carries on from the committed
// checkpoints (not from 0), a clean stop's restart that replays nothing, and read models equal to a
// rebuild from position 0. SQLITE_RESTART_EVENTS sets the log's length (40,000 by default).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READ_MODELS_FILE } from '../../api/services.ts';
import { SqliteReadStore } from '../../projections/store/sqlite.ts';
import { CHECKPOINTS } from '../../projections/types.ts';
import { fill } from '../bench/replay.ts';
import { defined } from '../helpers/defined.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess, projectRoot, startServerProcess } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

const EVENTS = Number(process.env.SQLITE_RESTART_EVENTS ?? 40_000);
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

/** The lowest checkpoint committed to the read-model file (what a restart would carry on from), or null while none is. */
async function committedCheckpoint(path: string): Promise<number | null> {
  let store: SqliteReadStore | null = null;
  try {
    // A second connection sees only what the server's has committed.
    store = new SqliteReadStore(path);
    const positions = (await store.collection(CHECKPOINTS).find({})).map((d) => d.position as number);
    return positions.length === 0 ? null : Math.min(...positions);
  } catch {
    return null; // the file is not there yet, or its first commit is under way
  } finally {
    await store?.close();
  }
}

describe(`SQLite read store restarts: a ${EVENTS}-event log (real processes)`, function () {
  this.timeout(900_000);
  let dataDir: string;
  const started: ServerProcess[] = [];
  const env = { SECRET_KEY: SECRET, READ_STORE: 'sqlite' };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-sqlite-restart-'));
    await fill(join(dataDir, 'events.sqlite'), 'mix', EVENTS);
  });
  after(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('after kill -9 mid-catch-up carries on from the committed checkpoints and equals a rebuild from position 0', async () => {
    const file = join(dataDir, READ_MODELS_FILE);
    const first = await startServerProcess(dataDir, env);
    started.push(first);
    // Killed once some batch of the catch-up is committed (and before the end: the log is long).
    let cut: number | null = null;
    while (cut === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      cut = await committedCheckpoint(file);
      if (first.line('read models caught up') !== undefined) throw new Error('the catch-up ended before the kill: make SQLITE_RESTART_EVENTS larger');
    }
    await first.stop('SIGKILL');
    const atKill = defined(await committedCheckpoint(file), 'a committed checkpoint after the kill');
    expect(atKill).to.be.within(1, EVENTS - 1000);
    expect(statSync(file).mode & 0o777).to.equal(0o600);

    const second = await bootServerProcess(dataDir, env);
    started.push(second);
    const caughtUp = defined(second.line('read models caught up'), "the line 'read models caught up'");
    expect(caughtUp).to.include({ store: 'sqlite', from: atKill });
    const head = caughtUp.position as number;
    expect(head).to.be.at.least(EVENTS);
    const feed = await request(second.url, 'GET', '/api/feed/posts?limit=50');
    expect(feed.body.items).to.have.length(50);
    expect(await second.stop('SIGTERM')).to.equal(0);

    // A clean stop committed everything: the next start replays nothing and serves the same.
    const third = await bootServerProcess(dataDir, env);
    started.push(third);
    // (Its position is past `head`: the workers of the second start appended events of their own.)
    const restarted = defined(third.line('read models caught up'), "the line 'read models caught up'");
    expect(restarted.position).to.be.at.least(head);
    expect(restarted.from).to.equal(restarted.position);
    expect((await request(third.url, 'GET', '/api/feed/posts?limit=50')).body.items).to.have.length(50);
    expect(await third.stop('SIGTERM')).to.equal(0);

    // Restart-equal: every read model equals a rebuild from position 0.
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'api/cli.ts', 'replay'], {
      cwd: projectRoot,
      env: { ...process.env, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    expect(cli.status, cli.stderr).to.equal(0);
    expect(cli.stdout).to.include('all rebuilt read models equal the live ones');
    expect(cli.stdout).not.to.include('MISMATCH');
  });
});
