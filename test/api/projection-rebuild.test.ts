import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { postsProjection } from '../../projections/feed/posts.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import { agentHeartbeatReceived, postPublished } from '../fixtures/events.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const ADMIN = 'rebuilder@example.com';

describe('one-projection rebuild of the running service (admin route)', () => {
  let svc: TestService;
  let outbox: string;
  let admin: string;
  let member: string;

  before(async function () {
    this.timeout(300_000);
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    admin = (await signUp(svc, outbox, ADMIN)).access_token;
    member = (await signUp(svc, outbox)).access_token;
    // A log long enough that the rebuild reads several pages: posts, and heartbeats the posts
    // projection does not handle (a one-projection rebuild skips them).
    const { log, clock, runner } = svc.running.services;
    let position = 0;
    for (let batch = 0; batch < 24; batch++) {
      const appends = [];
      for (let i = 0; i < 500; i++) {
        const n = batch * 500 + i;
        const post = `pst_seed${String(n).padStart(16, '0')}`;
        const meta = { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: clock.now().toISOString(), schema_version: 1 };
        const e = n % 2 === 0 ? postPublished({ post_id: post, title: `Seed ${n}` }) : agentHeartbeatReceived();
        appends.push(log.append(`seed-${n}`, [{ id: randomUUID(), type: e.type, data: e.data, metadata: meta }], 'no_stream'));
      }
      position = (await Promise.all(appends)).reduce((max, r) => Math.max(max, r.position), position);
    }
    await runner.waitFor(position, 120_000);
  });
  after(async () => stopWithOutbox(svc, outbox));

  const asAdmin = { headers: { authorization: '' } };
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it('refuses a plain member (403), an anonymous caller (401) and an unknown projection (404)', async () => {
    asAdmin.headers.authorization = `Bearer ${admin}`;
    const anonymous = await svc.req('POST', '/api/admin/projections/posts/rebuild');
    expect(anonymous.status).to.equal(401);
    const plain = await svc.req('POST', '/api/admin/projections/posts/rebuild', bearer(member));
    expect(plain.status).to.equal(403);
    expect(plain.body.code).to.equal('admin_required');
    expect((await svc.req('GET', '/api/admin/projections', bearer(member))).status).to.equal(403);
    const unknown = await svc.req('POST', '/api/admin/projections/no_such_thing/rebuild', bearer(admin));
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('projection_not_found');
  });

  it('lists every projection with its checkpoint, the head and the lag', async () => {
    const r = await svc.req('GET', '/api/admin/projections', bearer(admin));
    expect(r.status, r.text).to.equal(200);
    const posts = (r.body.items as Array<Record<string, unknown>>).find((p) => p.name === 'posts');
    expect(posts).to.include({ checkpoint: r.body.head, head: r.body.head, lag_events: 0, lag_seconds: 0 });
    expect(posts?.handles).to.include('PostPublished');
  });

  it('rebuilds posts under write load: reads never fail or go backwards, and the swapped read model equals a rebuild from 0', async function () {
    this.timeout(300_000);
    const agent = await svc.register();
    let writing = true;
    const failures: string[] = [];
    let writes = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const r = await svc.req('POST', '/api/feed/posts', {
          apiKey: agent.api_key,
          body: { title: `Under load ${i}`, body: `post ${i}`, post_type: 'signal_found' },
        });
        if (r.status !== 200) failures.push(`write ${r.status} ${r.text}`);
        else writes++;
      }
    })();
    let reads = 0;
    let lastTotal = 0;
    let lastPosition = 0;
    const reader = (async () => {
      while (writing) {
        const r = await svc.req('GET', '/api/feed/posts?limit=5');
        reads++;
        if (r.status !== 200) failures.push(`read ${r.status} ${r.text}`);
        else {
          if (r.body.total < lastTotal) failures.push(`total went back from ${lastTotal} to ${r.body.total}`);
          lastTotal = r.body.total;
        }
        const h = await svc.req('GET', '/api/health');
        if (h.body.projection_position < lastPosition) failures.push(`position went back from ${lastPosition} to ${h.body.projection_position}`);
        lastPosition = h.body.projection_position;
      }
    })();

    const started = await svc.req('POST', '/api/admin/projections/posts/rebuild', bearer(admin));
    expect(started.status, started.text).to.equal(202);
    expect(started.body).to.include({ projection: 'posts', state: 'running' });
    let status = started.body;
    const progress: number[] = [];
    // Besides the load above: while the last status seen says running, a write read back at once
    // (at least one, since the first status is running).
    let readBackWhileRunning = 0;
    while (status.state === 'running') {
      const mine = await svc.req('POST', '/api/feed/posts', {
        apiKey: agent.api_key,
        body: { title: `While rebuilding ${readBackWhileRunning}`, body: 'read back at once', post_type: 'signal_found' },
      });
      expect(mine.status, mine.text).to.equal(200);
      const back = await svc.req('GET', `/api/agent/posts/${mine.body.post_id}`);
      expect(back.status, back.text).to.equal(200);
      expect(back.body.title).to.equal(`While rebuilding ${readBackWhileRunning}`);
      readBackWhileRunning++;
      const r = await svc.req('GET', '/api/admin/projections/posts/rebuild', bearer(admin));
      expect(r.status).to.equal(200);
      status = r.body;
      progress.push(status.progress);
    }
    const writesDuring = writes;
    writing = false;
    await Promise.all([writer, reader]);

    expect(failures).to.deep.equal([]);
    expect(status.state, status.error).to.equal('swapped');
    expect(status.progress).to.equal(1);
    expect(status.eta_seconds).to.equal(0);
    // Only the events of the types posts handles were read: the seeded heartbeats were skipped.
    expect(status.events).to.be.lessThan(status.position - 5000);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1])).to.equal(true);
    expect(status.comparisons.map((c: { collection: string }) => c.collection).sort()).to.deep.equal(postsProjection.collections.map((c) => c.name).sort());
    for (const c of status.comparisons) expect(c.equal, c.collection).to.equal(true);
    expect(readBackWhileRunning).to.be.at.least(1);
    expect(writesDuring + reads).to.be.greaterThan(0);

    // Once the writes stop: the live read model equals a rebuild of posts from position 0.
    const { log, store, runner } = svc.running.services;
    await runner.waitFor(await log.headPosition());
    const fresh = new MemoryReadStore();
    const scratch = new ProjectionRunner(log, fresh, [postsProjection]);
    await scratch.start();
    await scratch.stop();
    expect(scratch.position).to.equal(runner.position);
    for (const spec of postsProjection.collections) {
      expect(await collectionChecksum(store, spec.name), spec.name).to.deep.equal(await collectionChecksum(fresh, spec.name));
    }
    expect((await store.listCollections()).filter((c) => c.startsWith('_rebuild_'))).to.deep.equal([]);
  });

  it('the CLI rebuilds one projection of the running service through the admin API, with its progress and the checksums', async function () {
    this.timeout(300_000);
    const run = promisify(execFile);
    const root = new URL('../..', import.meta.url).pathname;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'api/cli.ts', 'projections', 'rebuild', 'hashtags', '--url', svc.url], {
      cwd: root,
      env: { ...process.env, ADMIN_TOKEN: admin, LOG_LEVEL: 'silent' },
    });
    expect(stdout).to.match(/^OK +hashtags\//m);
    expect(stdout).to.not.contain('MISMATCH');
    expect(stdout).to.contain('rebuilt hashtags from');
    const status = await svc.req('GET', '/api/admin/projections/hashtags/rebuild', bearer(admin));
    expect(status.body.state).to.equal('swapped');
    const listed = await run(process.execPath, ['--import', 'tsx', 'api/cli.ts', 'projections', 'status', '--url', svc.url], {
      cwd: root,
      env: { ...process.env, ADMIN_TOKEN: admin, LOG_LEVEL: 'silent' },
    });
    expect(listed.stdout).to.match(/^hashtags\tcheckpoint \d+\tlag 0 events 0\.0 s\tlast rebuild swapped$/m);
  });
});
