import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootServerProcess, projectRoot, randomPort } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';
import { fill } from '../bench/replay.ts';

describe('graceful shutdown', () => {
  it('on SIGTERM finishes in-flight requests, exits 0, and keeps every acknowledged write', async function () {
    this.timeout(60_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-term-'));
    const port = randomPort();
    const base = `http://127.0.0.1:${port}`;
    let child = await bootServerProcess(dataDir, port);
    try {
      const reg = await request(base, 'POST', '/api/protocol/register', {
        body: { name: 'T', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'term@example.com' },
      });
      const apiKey = reg.body.api_key as string;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 40 });
      await Promise.all(Array.from({ length: 40 }, () => request(base, 'GET', '/health', { agent })));
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const inflight = Array.from({ length: 40 }, (_, i) =>
        request(base, 'POST', '/api/feed/posts', { agent, apiKey, body: { title: `t${i}`, body: 'b', post_type: 'signal_found' } }).then(
          (r) => ({ status: r.status, post_id: r.body?.post_id as string | undefined }),
          () => ({ status: 0, post_id: undefined }),
        ),
      );
      setTimeout(() => child.kill('SIGTERM'), 2);
      const results = await Promise.all(inflight);
      expect(await exit).to.equal(0);
      agent.destroy();
      const acknowledged = results.filter((r) => r.status === 200).map((r) => r.post_id);
      expect(acknowledged.length).to.be.greaterThan(0);

      child = await bootServerProcess(dataDir, port);
      const feed = await request(base, 'GET', '/api/feed/posts?limit=100');
      const ids = new Set((feed.body.items as Array<{ post_id: string }>).map((p) => p.post_id));
      for (const id of acknowledged) expect(ids.has(id as string), id).to.equal(true);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('listens at once: while the read models catch up every request gets 503 service_starting, then the service answers', async function () {
    this.timeout(120_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-start-'));
    const port = randomPort();
    const base = `http://127.0.0.1:${port}`;
    // A log long enough that catching up takes a few seconds here.
    await fill(join(dataDir, 'events.sqlite'), 'mix', 120_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: projectRoot,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const seen: Array<{ status: number; body: Record<string, unknown> }> = [];
      const deadline = Date.now() + 100_000;
      for (;;) {
        const r = await request(base, 'GET', '/health').catch(() => null);
        if (r) seen.push({ status: r.status, body: r.body });
        if (r?.status === 200 || Date.now() > deadline) break;
        if (r?.status === 503 && seen.length === 1) {
          const write = await request(base, 'POST', '/api/feed/posts', { apiKey: 'ak_nobody', body: { title: 't', body: 'b', post_type: 'signal_found' } });
          expect(write.status).to.equal(503);
          expect(write.body).to.deep.include({ code: 'service_starting' });
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(seen[0]).to.deep.include({ status: 503 });
      expect(seen[0].body).to.include({ status: 'starting' });
      expect(seen[seen.length - 1]).to.deep.include({ status: 200 });
      // Caught up with the whole log (and with what the workers appended at start since).
      expect(seen[seen.length - 1].body).to.include({ status: 'ok' });
      expect(seen[seen.length - 1].body.projection_position).to.be.at.least(120_000);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a bad configuration value, naming the variable', async function () {
    this.timeout(30_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: projectRoot,
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr).to.match(/configuration error: PORT must be an integer/);
  });
});
