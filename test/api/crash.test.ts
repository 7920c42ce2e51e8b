import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from '../helpers/service.ts';

const root = new URL('../..', import.meta.url).pathname;

function boot(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 20_000;
    const poll = () => {
      request(`http://127.0.0.1:${port}`, 'GET', '/health').then(
        (r) => (r.status === 200 ? resolve(child) : setTimeout(poll, 100)),
        () => (Date.now() > deadline ? reject(new Error('server did not start')) : setTimeout(poll, 100)),
      );
    };
    child.once('exit', (code) => reject(new Error(`server exited early (${code})`)));
    poll();
  });
}

describe('crash safety: kill -9 during a write load', () => {
  it('keeps every acknowledged write, in the log and the read models, none doubled', async function () {
    this.timeout(90_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-crash-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const base = `http://127.0.0.1:${port}`;
    let child = await boot(dataDir, port);
    try {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
      const reg = await request(base, 'POST', '/api/protocol/register', {
        agent,
        body: { name: 'Crash', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'crash@example.com' },
      });
      expect(reg.status).to.equal(200);
      const apiKey = reg.body.api_key as string;
      const acknowledged: string[] = [];
      let stop = false;
      const worker = async (w: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const r = await request(base, 'POST', '/api/feed/posts', {
              agent,
              apiKey,
              body: { title: `w${w}-${i}`, body: 'load', post_type: 'signal_found' },
              headers: { 'idempotency-key': `w${w}-${i}` },
            });
            if (r.status === 200) acknowledged.push(r.body.post_id as string);
          } catch {
            return; // the server died under us
          }
        }
      };
      const load = Promise.all(Array.from({ length: 20 }, (_, w) => worker(w)));
      while (acknowledged.length < 150) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGKILL');
      stop = true;
      await load;
      agent.destroy();
      await new Promise((r) => child.once('exit', r));

      child = await boot(dataDir, port);
      const seen = new Map<string, number>();
      for (let page = 0; ; page++) {
        const r = await request(base, 'GET', `/api/feed/posts?limit=100&page=${page}`);
        for (const p of r.body.items as Array<{ post_id: string }>) seen.set(p.post_id, (seen.get(p.post_id) ?? 0) + 1);
        if (r.body.items.length < 100) break;
      }
      for (const id of acknowledged) expect(seen.get(id), id).to.equal(1);
      for (const count of seen.values()) expect(count).to.equal(1);
      const credits = await request(base, 'GET', `/api/protocol/agents/${reg.body.agent_id}/credits`, { apiKey });
      expect(credits.body.used).to.equal(Math.round(seen.size * 10) / 100);
      expect(seen.size).to.be.at.least(acknowledged.length);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
