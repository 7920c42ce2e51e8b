import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootServerProcess, projectRoot, randomPort } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

describe('graceful shutdown', () => {
  it('on SIGTERM finishes in-flight requests, exits 0, and keeps every acknowledged write', async function () {
    this.timeout(60_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-term-'));
    const port = randomPort();
    const base = `http://127.0.0.1:${port}`;
    let child = await bootServerProcess(dataDir, port);
    try {
      const reg = await request(base, 'POST', '/api/protocol/register', { body: { name: 'T', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'term@example.com' } });
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

  it('refuses to start with a bad configuration value, naming the variable', async function () {
    this.timeout(30_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], { cwd: projectRoot, env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr).to.match(/configuration error: PORT must be an integer/);
  });
});
