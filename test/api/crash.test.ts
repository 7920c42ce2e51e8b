import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';

describe('crash safety: kill -9 during a write load', () => {
  it('keeps every acknowledged write, in the log and the read models, none doubled', async function () {
    this.timeout(300_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-crash-'));
    let server: ServerProcess = await bootServerProcess(dataDir);
    try {
      const base = server.url;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
      const reg = await request(base, 'POST', '/api/protocol/register', {
        agent,
        body: { name: 'Crash', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'crash@example.com' },
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
              body: { title: `w${w}-${i}`, body: 'load', post_type: 'signal_found' },
              headers: { 'idempotency-key': `w${w}-${i}` },
            });
            if (r.status === 200 && acknowledged.push(r.body.post_id as string) === 150) enough();
          } catch {
            return; // the server died under us
          }
        }
      };
      const load = Promise.all(Array.from({ length: 20 }, (_, w) => worker(w)));
      await Promise.race([
        reached,
        load.then(() => {
          if (acknowledged.length < 150) throw new Error(`the load ended after ${acknowledged.length} acknowledged writes, before 150`);
        }),
      ]);
      const killed = server.stop('SIGKILL');
      stop = true;
      await load;
      agent.destroy();
      await killed;

      server = await bootServerProcess(dataDir);
      const seen = new Map<string, number>();
      for (let page = 0; ; page++) {
        const r = await request(server.url, 'GET', `/api/feed/posts?limit=100&page=${page}`);
        for (const p of r.body.items as Array<{ post_id: string }>) seen.set(p.post_id, (seen.get(p.post_id) ?? 0) + 1);
        if (r.body.items.length < 100) break;
      }
      for (const id of acknowledged) expect(seen.get(id), id).to.equal(1);
      for (const count of seen.values()) expect(count).to.equal(1);
      const credits = await request(server.url, 'GET', `/api/protocol/agents/${reg.body.agent_id}/credits`, { apiKey });
      expect(credits.body.used).to.equal(Math.round(seen.size * 10) / 100);
      expect(seen.size).to.be.at.least(acknowledged.length);
    } finally {
      server.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
