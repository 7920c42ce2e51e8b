import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../api/config.ts';
import { PROJECTOR_SOCKET } from '../../api/services.ts';
import { defined } from '../helpers/defined.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { bootServerProcess, projectRoot } from '../helpers/process.ts';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus.ts';
import { request } from '../helpers/service.ts';

describe('process roles: configuration', () => {
  it('defaults ROLE to all and accepts api, projector and worker', () => {
    expect(loadConfig({}).role).to.equal('all');
    for (const role of ['all', 'api', 'projector', 'worker']) expect(loadConfig({ ROLE: role }).role).to.equal(role);
    expect(loadConfig({ ROLE: 'Projector' }).role).to.equal('projector');
  });

  it('refuses an unknown ROLE with a ConfigError naming the setting and the choices', () => {
    expect(() => loadConfig({ ROLE: 'reader' })).to.throw(ConfigError, 'ROLE must be one of all, api, projector, worker (got "reader")');
  });

  it('stops the start of a process with an unknown ROLE: exit status 2 and the message on stderr', async function () {
    this.timeout(60_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-network-role-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
        cwd: projectRoot,
        env: { ...process.env, ROLE: 'everything', PORT: '0', DATA_DIR: dataDir },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).to.equal(2);
      expect(stderr).to.include('configuration error: ROLE must be one of all, api, projector, worker (got "everything")');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('process roles: an api and a projector process on one embedded log', function () {
  this.timeout(600_000);
  const METRICS_TOKEN = 'roles-metrics-token-0123456789';
  const env = { SECRET_KEY: 'roles-test-secret-key-0123456789-abcdefghij', RATE_LIMIT_SCALE: '1000', METRICS_TOKEN };
  const scrape = async (url: string) => {
    const r = await request(url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` }, unchecked: true });
    expect(r.status, r.text).to.equal(200);
    expect(String(r.headers['content-type'])).to.match(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(r.text);
  };
  let dataDir: string;
  let projector: ServerProcess | null = null;
  let api: ServerProcess | null = null;
  let counter = 0;

  const apiUrl = () => defined(api, 'the api process').url;
  const req = (method: string, path: string, opts: Parameters<typeof request>[3] = {}) => request(apiUrl(), method, path, opts);
  const register = async () => {
    counter++;
    const r = await req('POST', '/api/protocol/register', {
      body: { name: `Split ${counter}`, capabilities: ['lead-gen'], owner_name: 'Owner', owner_email: `split${counter}.${process.pid}@example.com` },
    });
    expect(r.status, r.text).to.equal(200);
    return { agent_id: r.body.agent_id as string, api_key: r.body.api_key as string };
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-network-roles-'));
    projector = await bootServerProcess(dataDir, { ...env, ROLE: 'projector' });
    api = await bootServerProcess(dataDir, { ...env, ROLE: 'api' });
  });
  after(async () => {
    await api?.stop('SIGTERM');
    await projector?.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs each role as it says: the projector serves its read models on a private socket, and over HTTP only /health and /metrics', async () => {
    const p = defined(projector, 'the projector process');
    expect(p.line('service listening')).to.include({ role: 'projector' });
    expect(p.line('serving the read models to api and worker processes')).to.not.equal(undefined);
    expect(defined(api, 'the api process').line('service listening')).to.include({ role: 'api' });
    const socket = statSync(join(dataDir, PROJECTOR_SOCKET));
    expect(socket.isSocket()).to.equal(true);
    expect(socket.mode & 0o777).to.equal(0o600);
    // Readiness is the API's check: the stores answer and every projection is within the lag bound.
    const ready = await request(p.url, 'GET', '/health/ready', { unchecked: true });
    expect(ready.status, ready.text).to.equal(200);
    expect(ready.body).to.include({ status: 'ready', role: 'projector', lag_events: 0 });
    expect(ready.body.checks).to.deep.equal({ event_log: 'ok', read_store: 'ok', projections: 'ok' });
    expect((await request(p.url, 'GET', '/health', { unchecked: true })).body).to.include({ status: 'ok', role: 'projector' });
    // Its own metrics: the lag of the projections it applies (0 once caught up), behind the token.
    const metrics = await scrape(p.url);
    expect(sampleValue(metrics, 'projection_lag_events', { projection: 'posts' })).to.equal(0);
    expect(sampleValue(metrics, 'event_log_head_position')).to.be.a('number');
    const refused = await request(p.url, 'GET', '/metrics', { unchecked: true });
    expect(refused.status).to.equal(401);
    expect(refused.body.code).to.equal('unauthorized');
    const other = await request(p.url, 'GET', '/api/feed/posts', { unchecked: true });
    expect(other.status).to.equal(404);
    expect(other.body.code).to.equal('route_not_found');
    expect((await req('GET', '/health/live')).status).to.equal(200);
  });

  it('registers, posts and reads the post back at once through the api process', async () => {
    const a = await register();
    const profile = await req('GET', `/api/protocol/agents/${a.agent_id}`);
    expect(profile.status).to.equal(200);
    expect(profile.body.name).to.equal(`Split ${counter}`);
    const post = await req('POST', '/api/feed/posts', {
      apiKey: a.api_key,
      body: { title: 'Split roles', body: 'Written by the api, projected elsewhere', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);
    const read = await req('GET', `/api/agent/posts/${post.body.post_id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ title: 'Split roles' });
    const list = await req('GET', '/api/feed/posts?limit=100');
    expect((list.body.items as Array<{ title: string }>).map((p) => p.title)).to.include('Split roles');
    const credits = await req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body.balance).to.equal(49.9);
  });

  it('follows and reads both counts at once', async () => {
    const [a, b] = [await register(), await register()];
    const r = await req('POST', `/api/protocol/agents/${b.agent_id}/follow`, { apiKey: a.api_key });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ following: true, changed: true, follower_count: 1 });
    expect((await req('GET', `/api/protocol/agents/${b.agent_id}`)).body.follower_count).to.equal(1);
    expect((await req('GET', `/api/protocol/agents/${a.agent_id}`)).body.following_count).to.equal(1);
    const un = await req('DELETE', `/api/protocol/agents/${b.agent_id}/follow`, { apiKey: a.api_key });
    expect(un.body).to.include({ following: false, changed: true, follower_count: 0 });
    expect((await req('GET', `/api/protocol/agents/${a.agent_id}`)).body.following_count).to.equal(0);
  });

  it('sends an A2A message and reads it in the inbox at once', async () => {
    const [a, b] = [await register(), await register()];
    const sent = await req('POST', '/api/agent/a2a/message', {
      apiKey: a.api_key,
      body: { to_agent_id: b.agent_id, intent: 'intro_request', payload: { reason: 'split' } },
    });
    expect(sent.status, sent.text).to.equal(200);
    const inbox = await req('GET', '/api/agent/a2a/inbox', { apiKey: b.api_key });
    expect(inbox.body.total).to.equal(1);
    expect(inbox.body.items[0]).to.include({ message_id: sent.body.message_id, from_agent_id: a.agent_id });
    const all = await req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
    expect(all.body.events[0]).to.include({ event: 'a2a_message' });
  });

  it('keeps read-your-writes under 40 concurrent writes, each read back by its writer', async () => {
    const agents = await Promise.all(Array.from({ length: 8 }, () => register()));
    const results = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const who = agents[i % agents.length];
        const post = await req('POST', '/api/feed/posts', { apiKey: who.api_key, body: { title: `Burst ${i}`, body: 'burst', post_type: 'signal_found' } });
        expect(post.status, post.text).to.equal(200);
        const read = await req('GET', `/api/agent/posts/${post.body.post_id}`);
        return read.status === 200 && read.body.title === `Burst ${i}`;
      }),
    );
    expect(results.filter(Boolean)).to.have.length(40);
  });

  it('starts a worker process beside them: Agenda on the shared log, the read models through the projector, /health and /metrics only', async () => {
    const worker = await bootServerProcess(dataDir, { ...env, ROLE: 'worker' });
    try {
      expect(worker.line('service listening')).to.include({ role: 'worker' });
      const ready = await request(worker.url, 'GET', '/health/ready', { unchecked: true });
      expect(ready.status, ready.text).to.equal(200);
      expect(ready.body).to.include({ status: 'ready', role: 'worker' });
      expect(ready.body.checks).to.deep.equal({ event_log: 'ok', read_store: 'ok', projections: 'ok' });
      expect((await request(worker.url, 'GET', '/api/feed/posts', { unchecked: true })).body.code).to.equal('route_not_found');
      // The job scheduler's figures are read where the jobs run.
      const metrics = await scrape(worker.url);
      expect(sampleValue(metrics, 'agenda_jobs', { state: 'queued' })).to.be.a('number');
      expect(metrics.has('agenda_job_failures_total')).to.equal(true);
      expect(metrics.has('webhook_deliveries_total')).to.equal(true);
      // The api keeps answering its writes with the worker running.
      const a = await register();
      expect((await req('GET', `/api/protocol/agents/${a.agent_id}`)).status).to.equal(200);
    } finally {
      expect(await worker.stop('SIGTERM')).to.equal(0);
    }
  });

  it('refuses a second projector on the same data directory', async () => {
    let failure: unknown;
    try {
      const second = await bootServerProcess(dataDir, { ...env, ROLE: 'projector' });
      await second.stop('SIGKILL');
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.include('another process already serves the read store');
  });

  it('follows a projector restart: the api reconnects, and what it wrote meanwhile is read back; readiness says the read store is away meanwhile', async () => {
    const a = await register();
    const worker = await bootServerProcess(dataDir, { ...env, ROLE: 'worker' });
    try {
      await defined(projector, 'the projector process').stop('SIGTERM');
      projector = null;
      // Without a projector the api answers reads 503 (the envelope, not a 500) and stays up.
      const down = await req('GET', `/api/protocol/agents/${a.agent_id}`);
      expect(down.status).to.equal(503);
      expect(down.body.code).to.equal('service_unavailable');
      expect((await req('GET', '/health/live')).status).to.equal(200);
      // Neither the api nor the worker is ready: the read store they reach through the projector is away.
      for (const url of [apiUrl(), worker.url]) {
        const ready = await request(url, 'GET', '/health/ready', { unchecked: true });
        expect(ready.status, ready.text).to.equal(503);
        expect(ready.body.status).to.equal('not_ready');
        expect(ready.body.checks).to.include({ event_log: 'ok', read_store: 'unavailable' });
      }
      projector = await bootServerProcess(dataDir, { ...env, ROLE: 'projector' });
      // The worker reconnects on its own: ready again at the first read-store answer.
      let again = await request(worker.url, 'GET', '/health/ready', { unchecked: true });
      // (no count of tries: the suite's timeout bounds the wait, so a slow machine only waits longer)
      while (again.status !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = await request(worker.url, 'GET', '/health/ready', { unchecked: true });
      }
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.include({ status: 'ready', role: 'worker' });
    } finally {
      expect(await worker.stop('SIGTERM')).to.equal(0);
    }
    const post = await req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'After restart', body: 'x', post_type: 'signal_found' } });
    expect(post.status, post.text).to.equal(200);
    const read = await req('GET', `/api/agent/posts/${post.body.post_id}`);
    expect(read.status).to.equal(200);
    expect(read.body.title).to.equal('After restart');
    expect((await req('GET', `/api/protocol/agents/${a.agent_id}`)).status).to.equal(200);
  });
});
