import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../helpers/process.ts';
import { defined } from '../helpers/defined.ts';
import { bootServerProcess, projectRoot, startServerProcess } from '../helpers/process.ts';
import { request } from '../helpers/service.ts';
import { fill } from '../bench/replay.ts';

describe('graceful shutdown', () => {
  it('on SIGTERM finishes in-flight requests, exits 0, and keeps every acknowledged write', async function () {
    this.timeout(300_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-term-'));
    let server: ServerProcess = await bootServerProcess(dataDir);
    try {
      const reg = await request(server.url, 'POST', '/api/protocol/register', {
        body: { name: 'T', capabilities: ['lead-gen'], owner_name: 'O', owner_email: 'term@example.com' },
      });
      const apiKey = reg.body.api_key as string;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 40 });
      await Promise.all(Array.from({ length: 40 }, () => request(server.url, 'GET', '/health', { agent })));
      const running = server;
      let signalled = false;
      // The signal goes out as the first write is acknowledged, the others still on their way.
      const inflight = Array.from({ length: 40 }, (_, i) =>
        request(running.url, 'POST', '/api/feed/posts', { agent, apiKey, body: { title: `t${i}`, body: 'b', post_type: 'signal_found' } }).then(
          (r) => {
            if (r.status === 200 && !signalled) {
              signalled = true;
              running.child.kill('SIGTERM');
            }
            return { status: r.status, post_id: r.body?.post_id as string | undefined };
          },
          () => ({ status: 0, post_id: undefined }),
        ),
      );
      const results = await Promise.all(inflight);
      expect(signalled, 'a write was acknowledged').to.equal(true);
      expect(await running.exited).to.equal(0);
      agent.destroy();
      const acknowledged = results.filter((r) => r.status === 200).map((r) => r.post_id);
      expect(acknowledged.length).to.be.greaterThan(0);

      server = await bootServerProcess(dataDir);
      const feed = await request(server.url, 'GET', '/api/feed/posts?limit=100');
      const ids = new Set((feed.body.items as Array<{ post_id: string }>).map((p) => p.post_id));
      for (const id of acknowledged) expect(ids.has(id as string), id).to.equal(true);
    } finally {
      server.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('listens at once: while the read models catch up every request gets 503 service_starting, then the service answers', async function () {
    this.timeout(600_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-start-'));
    // A log long enough that catching up takes a few seconds here.
    await fill(join(dataDir, 'events.sqlite'), 'mix', 120_000);
    // Resolves as the catch-up begins: the requests below are answered between its pages.
    const server = await startServerProcess(dataDir);
    try {
      const starting = await request(server.url, 'GET', '/health');
      expect(starting.status).to.equal(503);
      expect(starting.body).to.include({ status: 'starting' });
      const write = await request(server.url, 'POST', '/api/feed/posts', { apiKey: 'ak_nobody', body: { title: 't', body: 'b', post_type: 'signal_found' } });
      expect(write.status).to.equal(503);
      expect(write.body).to.deep.include({ code: 'service_starting' });
      await server.waitForLine('service listening');
      const ready = await request(server.url, 'GET', '/health');
      expect(ready.status).to.equal(200);
      // Caught up with the whole log (and with what the workers appended at start since).
      expect(ready.body).to.include({ status: 'ok' });
      expect(ready.body.projection_position).to.be.at.least(120_000);
    } finally {
      server.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a bad configuration value, naming the variable', async function () {
    this.timeout(300_000);
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

  /**
   * A POST whose body is sent in two halves: the request is in flight (headers and half its body
   * received) until `finish` sends the rest. Resolves with the status and parsed answer.
   */
  function slowPost(url: string, path: string, apiKey: string, body: unknown) {
    const bytes = Buffer.from(JSON.stringify(body));
    const half = Math.floor(bytes.length / 2);
    let finish!: () => void;
    let sent!: () => void;
    const halfSent = new Promise<void>((resolve) => (sent = resolve));
    const answered = new Promise<{ status: number; body: { post_id?: string } }>((resolve, reject) => {
      const req = http.request(new URL(path, url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': bytes.length, 'x-api-key': apiKey },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { post_id?: string } }));
      });
      req.on('error', reject);
      req.write(bytes.subarray(0, half), () => sent());
      finish = () => req.end(bytes.subarray(half));
    });
    return { answered, finish, halfSent };
  }

  /** Whether a process with this pid exists. */
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`under npm start, ${signal} to the process group (a terminal's Ctrl-C, systemd's stop) answers the in-flight request, commits the read models and keeps the write`, async function () {
      this.timeout(300_000);
      const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-group-'));
      let server: ServerProcess = await bootServerProcess(dataDir, {}, 'npm start');
      try {
        const reg = await request(server.url, 'POST', '/api/protocol/register', {
          body: { name: 'G', capabilities: ['lead-gen'], owner_name: 'O', owner_email: `group-${signal}@example.com` },
        });
        expect(reg.status, reg.text).to.equal(200);
        const post = slowPost(server.url, '/api/feed/posts', reg.body.api_key as string, {
          title: 'In flight',
          body: 'Sent across a stop',
          post_type: 'signal_found',
        });
        // The request is under way before the signal goes out: its headers and half its body are
        // sent, and a request on another connection, opened after, is answered.
        await post.halfSent;
        expect((await request(server.url, 'GET', '/health/live')).status).to.equal(200);
        // The leader (npm) must outlive the service process: a terminal, systemd or a container
        // takes the leader's exit as the end of the service.
        const nodePid = server.lines[0].pid as number;
        let answered = false;
        const leader = new Promise<{ answered: boolean; serviceAlive: boolean }>((resolve) =>
          server.child.once('exit', () => resolve({ answered, serviceAlive: alive(nodePid) })),
        );
        process.kill(-(server.child.pid as number), signal);
        await server.waitForLine('shutting down');
        post.finish();
        const answer = await post.answered;
        answered = true;
        expect(answer.status).to.equal(200);
        expect(await leader, 'when npm exits').to.deep.equal({ answered: true, serviceAlive: false });
        await server.exited;
        expect(existsSync(join(dataDir, 'read-models.sqlite'))).to.equal(true);

        server = await bootServerProcess(dataDir);
        const caughtUp = defined(server.line('read models caught up'), "the line 'read models caught up'");
        expect(caughtUp).to.include({ store: 'sqlite' });
        expect(caughtUp.from, 'the restart found the read models committed up to the head').to.equal(caughtUp.position);
        const feed = await request(server.url, 'GET', '/api/feed/posts?limit=100');
        expect((feed.body.items as Array<{ post_id: string }>).map((p) => p.post_id)).to.include(answer.body.post_id);
      } finally {
        try {
          process.kill(-(server.child.pid as number), 'SIGKILL');
        } catch {
          server.child.kill('SIGKILL');
        }
        await server.exited;
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
