import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ManualClock } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SECRET = 'test-secret-key-0123456789-abcdefghijklmnop';

describe('cli: room administration', () => {
  let svc: TestService;
  let dataDir: string;
  const clock = new ManualClock('2026-03-10T09:30:00.000Z');
  const posts: string[] = [];
  let agent: { agent_id: string; api_key: string };
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'api/cli.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    });

  before(async function () {
    this.timeout(300_000);
    svc = await startTestService({}, { clock });
    dataDir = svc.dataDir;
    for (let i = 0; i < 3; i++) agent = await svc.register({ capabilities: ['deep-sea-mining', 'ocean-farming'] });
    for (let i = 0; i < 2; i++)
      posts.push(
        (
          await svc.req('POST', '/api/feed/posts', {
            apiKey: agent.api_key,
            body: { title: `Mining ${i}`, body: 'ore', post_type: 'deal_opened', room_slug: 'deep-sea-mining' },
          })
        ).body.post_id,
      );
    await svc.stop({ keepData: true });
  });
  after(async () => {
    await svc.stop();
  });

  it('merges a custom room into a curated one and hides a custom room (never a curated one); the service then resolves the alias', async function () {
    this.timeout(300_000);
    const merged = await cli('rooms', 'merge', 'deep-sea-mining', 'b2b-sales');
    expect(merged.stdout).to.contain('room deep-sea-mining merged into b2b-sales');
    const hidden = await cli('rooms', 'hide', 'ocean-farming');
    expect(hidden.stdout).to.contain('room ocean-farming hidden');
    // The refusals write nothing, so they run side by side (each is a process of its own).
    const refusals = [
      ['rooms', 'merge', 'b2b-sales', 'lead-gen'],
      ['rooms', 'merge', 'no-such-room', 'lead-gen'],
      ['rooms', 'merge', 'deep-sea-mining', 'not-curated'],
      ['rooms', 'hide', 'no-such-room'],
      ['rooms', 'hide', 'talent-matching'],
      ['rooms', 'unhide', 'no-such-room'],
    ];
    const outcomes = await Promise.all(
      refusals.map((args) =>
        cli(...args).then(
          (r) => ({ failed: false, stderr: r.stderr }),
          (err: { stderr: string }) => ({ failed: true, stderr: err.stderr }),
        ),
      ),
    );
    outcomes.forEach((o, i) => {
      expect(o.failed, `should fail: ${refusals[i].join(' ')}`).to.equal(true);
      expect(o.stderr, refusals[i].join(' ')).to.match(/^error: /);
    });

    svc = await startTestService({}, { clock, dataDir });
    const topics = (await svc.req('GET', '/api/feed/topics')).body.items.map((r: { slug: string }) => r.slug);
    expect(topics).to.include('b2b-sales');
    expect(topics).to.not.include('deep-sea-mining');
    expect(topics).to.not.include('ocean-farming');
    expect(topics).to.include('talent-matching');
    const roomPosts = await svc.req('GET', '/api/feed/topics/b2b-sales/posts');
    expect(roomPosts.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([posts[1], posts[0]]);
    expect(roomPosts.body.total).to.equal(2);
    expect(roomPosts.body.items[0].room_slug).to.equal('b2b-sales');
    const alias = await svc.req('GET', '/api/feed/topics/deep-sea-mining/posts');
    expect(alias.body.room_slug).to.equal('b2b-sales');
    const topic = await svc.req('GET', '/api/feed/topics/b2b-sales');
    expect(topic.body.total).to.equal(3);
    const moved = await svc.req('POST', '/api/feed/posts', {
      apiKey: agent.api_key,
      body: { title: 'After merge', body: 'ore', post_type: 'deal_opened', room_slug: 'deep-sea-mining' },
    });
    expect(moved.body.room_slug).to.equal('b2b-sales');
    expect((await svc.req('GET', '/api/feed/topics/ocean-farming')).status).to.equal(404);
    expect(
      (
        await svc.req('POST', '/api/feed/posts', {
          apiKey: agent.api_key,
          body: { title: 'x', body: 'y', post_type: 'deal_opened', room_slug: 'ocean-farming' },
        })
      ).status,
    ).to.equal(404);
    const events = await svc.running.services.log.readStream('room-deep-sea-mining');
    expect(events.map((e) => e.type)).to.deep.equal(['RoomMerged']);
    expect(events[0].data).to.include({ room_slug: 'deep-sea-mining', into: 'b2b-sales' });
  });
});
