import { expect } from 'chai';
import { ManualClock } from '../../events/kernel/clock.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestService } from '../helpers/service.ts';
import { startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';

type Agent = { agent_id: string; api_key: string };
const ADMIN = 'room-admin@example.com';
const post = (title: string, extra: Record<string, unknown> = {}) => ({ title, body: `About ${title}`, post_type: 'signal_found', ...extra });

describe('api: scheduled posts', () => {
  let svc: TestService;
  let agent: Agent;
  before(async () => {
    svc = await startTestService();
    agent = await svc.register();
  });
  after(async () => {
    await svc.stop();
  });

  const workers = () => {
    const w = svc.running.workers;
    if (!w) throw new Error('workers not running');
    return w;
  };

  it('charges 0.1 at scheduling, lists it as upcoming, and publishes it at publish_at through the job', async () => {
    const res = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: agent.api_key,
      body: post('Later', { publish_at: '2026-03-10T10:30:00Z', room_slug: 'lead-gen' }),
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ published: false, status: 'scheduled', publish_at: '2026-03-10T10:30:00.000Z', credits_charged: 0.1, balance: 49.9 });
    const id = res.body.post_id;
    const history = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits/history?limit=1`, { apiKey: agent.api_key });
    expect(history.body.transactions[0]).to.include({ type: 'debit', action: 'schedule_post', amount: 0.1, balance_after: 49.9 });
    expect(history.body.transactions[0].reference).to.deep.equal({ post_id: id });

    const upcoming = await svc.req('GET', '/api/feed/posts/scheduled', { apiKey: agent.api_key });
    expect(upcoming.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([id]);
    expect(upcoming.body.items[0]).to.include({ published: false, title: 'Later' });
    const other = await svc.register();
    expect((await svc.req('GET', '/api/feed/posts/scheduled', { apiKey: other.api_key })).body.items).to.deep.equal([]);
    expect((await svc.req('GET', '/api/feed/posts/scheduled')).status).to.equal(401);
    const feedIds = async () => (await svc.req('GET', '/api/feed/posts?limit=100')).body.items.map((p: { post_id: string }) => p.post_id);
    expect(await feedIds()).to.not.include(id);

    // The reactor creates one Agenda job per scheduled post. Agenda runs on the wall clock, for which
    // the test's dates are past, so it may already have run it: its body consults the injected clock.
    let jobs: Array<{ data: unknown }> = [];
    for (let i = 0; i < 6000 && jobs.length === 0; i++) {
      jobs = (await workers().agenda.queryJobs({ name: 'feed.publish-scheduled-post', data: { post_id: id } })).jobs;
      if (jobs.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(jobs).to.have.length(1);
    expect(jobs[0].data).to.deep.equal({ post_id: id, agent_id: agent.agent_id });
    expect(await feedIds()).to.not.include(id);

    const saved = svc.clock.now();
    try {
      svc.clock.set('2026-03-10T10:29:59.000Z');
      expect(await workers().publishScheduledPost(id)).to.equal(false);
      expect(await workers().publishDueScheduledPosts()).to.equal(0);
      svc.clock.set('2026-03-10T10:30:00.000Z');
      expect(await workers().publishScheduledPost(id)).to.equal(true);
      expect(await workers().publishDueScheduledPosts()).to.equal(0);
      expect(await workers().publishScheduledPost(id)).to.equal(false);
    } finally {
      svc.clock.set(saved);
    }
    expect(await feedIds()).to.include(id);
    const detail = await svc.req('GET', `/api/agent/posts/${id}`);
    expect(detail.body).to.include({ published: true, published_at: '2026-03-10T10:30:00.000Z', room_slug: 'lead-gen' });
    expect((await svc.req('GET', '/api/feed/posts/scheduled', { apiKey: agent.api_key })).body.items).to.deep.equal([]);
    // Publication charges nothing more.
    const credits = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
    expect(credits.body).to.include({ balance: 49.9, used: 0.1 });
  });

  it('cancels a scheduled post with a refund; only the author may, and only while scheduled', async () => {
    const a = await svc.register();
    const b = await svc.register();
    const res = await svc.req('POST', '/api/feed/posts/schedule', { apiKey: a.api_key, body: post('Cancel me', { publish_at: '2026-03-11T00:00:00Z' }) });
    const id = res.body.post_id;
    expect((await svc.req('DELETE', `/api/feed/posts/scheduled/${id}`, { apiKey: b.api_key })).status).to.equal(403);
    expect((await svc.req('DELETE', '/api/feed/posts/scheduled/pst_nope', { apiKey: a.api_key })).status).to.equal(404);
    const del = await svc.req('DELETE', `/api/feed/posts/scheduled/${id}`, { apiKey: a.api_key });
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ post_id: id, status: 'cancelled', credits_refunded: 0.1, balance: 50 });
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history?limit=2`, { apiKey: a.api_key });
    expect(history.body.transactions[0]).to.include({ type: 'credit', action: 'schedule_post_refund', amount: 0.1, balance_after: 50 });
    expect(history.body.transactions[0].reference).to.deep.equal({ post_id: id });
    expect(history.body.transactions[1]).to.include({ type: 'debit', action: 'schedule_post', amount: 0.1, balance_after: 49.9 });
    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body).to.include({ balance: 50, used: 0 });
    const again = await svc.req('DELETE', `/api/feed/posts/scheduled/${id}`, { apiKey: a.api_key });
    expect(again.status).to.equal(409);
    const saved = svc.clock.now();
    try {
      svc.clock.set('2026-03-11T00:00:00.000Z');
      expect(await workers().publishDueScheduledPosts()).to.equal(0);
    } finally {
      svc.clock.set(saved);
    }
    expect((await svc.req('GET', `/api/agent/posts/${id}`)).status).to.equal(404);
  });

  it('validates publish_at (future, at most 90 days) and the post body (422), charging nothing', async () => {
    const before = await svc.running.services.log.headPosition();
    for (const body of [
      post('no time'),
      post('past', { publish_at: '2026-03-10T09:00:00Z' }),
      post('now', { publish_at: '2026-03-10T09:30:00Z' }),
      post('far', { publish_at: '2026-06-09T09:30:00Z' }),
      post('bad', { publish_at: 'soon' }),
      { ...post('x', { publish_at: '2026-03-11T00:00:00Z' }), post_type: 'rant' },
    ]) {
      const r = await svc.req('POST', '/api/feed/posts/schedule', { apiKey: agent.api_key, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
    }
    expect(await svc.running.services.log.headPosition()).to.equal(before);
  });
});

describe('api: scheduled posts survive a restart', () => {
  it('re-derives pending work at start: a post due while the service was down is published at start', async () => {
    const clock = new ManualClock('2026-03-10T09:30:00.000Z');
    let svc = await startTestService({}, { clock });
    const agent = await svc.register();
    const res = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: agent.api_key,
      body: post('Across restarts', { publish_at: '2026-03-10T12:00:00Z' }),
    });
    const future = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: agent.api_key,
      body: post('Still later', { publish_at: '2026-03-20T12:00:00Z' }),
    });
    const dataDir = svc.dataDir;
    await svc.stop({ keepData: true });
    clock.set('2026-03-10T12:03:00.000Z');
    svc = await startTestService({}, { clock, dataDir });
    try {
      const detail = await svc.req('GET', `/api/agent/posts/${res.body.post_id}`);
      expect(detail.status).to.equal(200);
      expect(detail.body.published_at).to.equal('2026-03-10T12:03:00.000Z');
      const upcoming = await svc.req('GET', '/api/feed/posts/scheduled', { apiKey: agent.api_key });
      expect(upcoming.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([future.body.post_id]);
      const jobs = (await svc.running.workers?.agenda.queryJobs({ name: 'feed.publish-scheduled-post', data: { post_id: future.body.post_id } }))?.jobs ?? [];
      expect(jobs).to.have.length(1);
    } finally {
      await svc.stop();
    }
  });
});

describe('api: pins (bearer only; the signed-in user acts as a human)', () => {
  let svc: TestService;
  let outbox: string;
  /** A super admin (ADMIN_EMAILS) with no linked agent. */
  let admin: string;
  let author: Agent;
  let stranger: string;
  const posts: string[] = [];
  const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    admin = (await signUp(svc, outbox, ADMIN)).access_token;
    const me = await svc.req('GET', '/api/auth/me', as(admin));
    expect(me.body.agents).to.deep.equal([]);
    author = await svc.register();
    stranger = (await signUp(svc, outbox)).access_token;
    for (let i = 0; i < 4; i++)
      posts.push((await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post(`Pin ${i}`, { room_slug: 'lead-gen' }) })).body.post_id);
  });
  after(() => stopWithOutbox(svc, outbox));

  it('lets a super admin without a linked agent pin at most 3 posts per room, returned as full objects (defect 9)', async () => {
    for (const id of posts.slice(0, 3)) {
      const r = await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${id}`, as(admin));
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ pinned: true, already_pinned: false, room_slug: 'lead-gen' });
    }
    const again = await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[0]}`, as(admin));
    expect(again.body).to.include({ pinned: true, already_pinned: true });
    const fourth = await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[3]}`, as(admin));
    expect(fourth.status).to.equal(409);
    expect(fourth.body.code).to.equal('pin_limit');
    const pinned = await svc.req('GET', '/api/agent/rooms/lead-gen/pinned');
    expect(pinned.status).to.equal(200);
    expect(pinned.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal(posts.slice(0, 3));
    expect(pinned.body.items[0]).to.include({ title: 'Pin 0', agent_id: author.agent_id, room_slug: 'lead-gen' });
    const notes = await svc.running.services.store.collection('notifications').find({ agent_id: author.agent_id, type: 'anchor_pin' }, { sort: { seq: -1 } });
    expect(notes).to.have.length(3);
    expect(notes[0].data).to.deep.equal({ post_id: posts[2], room_slug: 'lead-gen' });
    const events = await svc.running.services.log.readStream('room-lead-gen');
    const pin = events.find((e) => e.type === 'RoomPostPinned');
    expect(pin?.data).to.include({ agent_id: null });
    expect((pin?.data as { user_id: string }).user_id).to.match(/^usr_/);
  });

  it('answers an API key on pin and unpin with 401, even the key of an admin-owned agent', async () => {
    const adminAgent = await svc.register({ owner_email: ADMIN });
    for (const method of ['POST', 'DELETE']) {
      const r = await svc.req(method, `/api/agent/rooms/lead-gen/pin/${posts[0]}`, { apiKey: adminAgent.api_key });
      expect(r.status).to.equal(401);
      expect(r.body.code).to.equal('unauthorized');
    }
    expect((await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[3]}`)).status).to.equal(401);
  });

  it('refuses pins and unpins by anyone else (403), unknown rooms and posts from another room (404)', async () => {
    const before = await svc.running.services.log.headPosition();
    expect((await svc.req('DELETE', `/api/agent/rooms/lead-gen/pin/${posts[0]}`, as(stranger))).status).to.equal(403);
    expect((await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[3]}`, as(stranger))).status).to.equal(403);
    expect((await svc.req('POST', `/api/agent/rooms/no-such-room/pin/${posts[3]}`, as(admin))).status).to.equal(404);
    const elsewhere = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('Other room', { room_slug: 'b2b-sales' }) });
    expect((await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${elsewhere.body.post_id}`, as(admin))).status).to.equal(404);
    expect(await svc.running.services.log.headPosition()).to.equal(before + 1);
  });

  it("lets a custom room's creator (the owner of its first agent, signed in) pin there, and nobody else but admins", async () => {
    const { user: creator, agent } = await signUpWithAgent(svc, outbox, { capabilities: ['hydro-power'] });
    const { user: second, agent: secondAgent } = await signUpWithAgent(svc, outbox, { capabilities: ['hydro-power'] });
    await svc.register({ capabilities: ['hydro-power'] });
    const room = await svc.req('GET', '/api/feed/topics/hydro-power');
    expect(room.body.room.created_by).to.equal(agent.agent_id);
    const p = await svc.req('POST', '/api/feed/posts', { apiKey: secondAgent.api_key, body: post('Dam news', { room_slug: 'hydro-power' }) });
    expect((await svc.req('POST', `/api/agent/rooms/hydro-power/pin/${p.body.post_id}`, as(second.access_token))).status).to.equal(403);
    expect((await svc.req('POST', `/api/agent/rooms/hydro-power/pin/${p.body.post_id}`, { apiKey: agent.api_key })).status).to.equal(401);
    const ok = await svc.req('POST', `/api/agent/rooms/hydro-power/pin/${p.body.post_id}`, as(creator.access_token));
    expect(ok.status, ok.text).to.equal(200);
    expect((await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[3]}`, as(creator.access_token))).status).to.equal(403);
    const pinned = await svc.req('GET', '/api/agent/rooms/hydro-power/pinned');
    expect(pinned.body.items.map((x: { post_id: string }) => x.post_id)).to.deep.equal([p.body.post_id]);
  });

  it('unpins (then 404 for a post not pinned) and frees a slot', async () => {
    const r = await svc.req('DELETE', `/api/agent/rooms/lead-gen/pin/${posts[1]}`, as(admin));
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ pinned: false });
    expect((await svc.req('DELETE', `/api/agent/rooms/lead-gen/pin/${posts[1]}`, as(admin))).status).to.equal(404);
    expect((await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${posts[3]}`, as(admin))).status).to.equal(200);
    const pinned = await svc.req('GET', '/api/agent/rooms/lead-gen/pinned');
    expect(pinned.body.items.map((p: { post_id: string }) => p.post_id)).to.deep.equal([posts[0], posts[2], posts[3]]);
  });
});

describe('api: trending hashtags', () => {
  it('ranks the top 10 hashtags of the last 7 days', async () => {
    const svc = await startTestService();
    try {
      const a = await svc.register();
      svc.clock.set('2026-03-02T12:00:00.000Z');
      for (let i = 0; i < 5; i++) await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: post(`old ${i}`, { body: `#stale ${i}` }) });
      svc.clock.set('2026-03-04T00:00:00.000Z');
      await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: post('day 1', { body: '#ai #tag0 day one' }) });
      svc.clock.set('2026-03-10T09:30:00.000Z');
      for (let i = 0; i < 3; i++) await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: post(`ai ${i}`, { body: `#AI and #agents ${i}` }) });
      for (let t = 0; t < 10; t++) await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: post(`tag ${t}`, { body: `#tag${t}` }) });
      const res = await svc.req('GET', '/api/feed/trending');
      expect(res.status).to.equal(200);
      expect(res.body.window_days).to.equal(7);
      expect(res.body.items).to.have.length(10);
      expect(res.body.items[0]).to.deep.equal({ hashtag: 'ai', tag: '#ai', count: 4 });
      expect(res.body.items[1]).to.deep.equal({ hashtag: 'agents', tag: '#agents', count: 3 });
      expect(res.body.items[2]).to.deep.equal({ hashtag: 'tag0', tag: '#tag0', count: 2 });
      expect(res.body.items.map((i: { hashtag: string }) => i.hashtag)).to.not.include('stale');
    } finally {
      await svc.stop();
    }
  });
});

describe('api: scheduling and pin limits (real limits)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1', ADMIN_EMAILS: ADMIN });
  });
  after(async () => {
    await svc.stop();
  });

  it('allows 10 schedules per hour, then 429 with the headers; 100 per 24 h, then 429 daily_cap', async () => {
    const agent = await svc.register();
    const schedule = (i: number) =>
      svc.req('POST', '/api/feed/posts/schedule', { apiKey: agent.api_key, body: post(`S${i}`, { publish_at: '2026-04-30T00:00:00Z' }) });
    for (let i = 0; i < 10; i++) expect((await schedule(i)).status).to.equal(200);
    const limited = await schedule(10);
    expect(limited.status).to.equal(429);
    expect(limited.body.code).to.equal('rate_limited');
    expect(limited.headers['ratelimit-limit']).to.equal('10');
    expect(limited.headers['ratelimit-remaining']).to.equal('0');
    expect(limited.headers['retry-after']).to.be.a('string');
    for (let h = 1; h < 10; h++) {
      svc.clock.advance(3600_000);
      for (let i = 0; i < 10; i++) expect((await schedule(h * 100 + i)).status).to.equal(200);
    }
    svc.clock.advance(3600_000);
    const before = await svc.running.services.log.headPosition();
    const capped = await schedule(5000);
    expect(capped.status).to.equal(429);
    expect(capped.body.code).to.equal('daily_cap');
    expect(capped.headers['ratelimit-limit']).to.equal('100');
    expect(capped.headers['retry-after']).to.equal(String(14 * 3600));
    expect(await svc.running.services.log.headPosition()).to.equal(before);
    const credits = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
    expect(credits.body).to.include({ balance: 40, used: 10 });
    svc.clock.advance(14 * 3600_000);
    expect((await schedule(6000)).status).to.equal(200);
  });

  it('limits pins and unpins to 10 per minute', async () => {
    svc.clock.advance(3600_000);
    const outbox = mkdtempSync(join(tmpdir(), 'agent-network-outbox-'));
    const limitedSvc = await startTestService({ RATE_LIMIT_SCALE: '1', ADMIN_EMAILS: ADMIN, MAIL_OUTBOX_DIR: outbox });
    try {
      const admin = { headers: { authorization: `Bearer ${(await signUp(limitedSvc, outbox, ADMIN)).access_token}` } };
      const author = await limitedSvc.register();
      const p = await limitedSvc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: post('pinned often', { room_slug: 'lead-gen' }) });
      for (let i = 0; i < 10; i++) {
        const r = await limitedSvc.req(i % 2 ? 'DELETE' : 'POST', `/api/agent/rooms/lead-gen/pin/${p.body.post_id}`, admin);
        expect(r.status, r.text).to.equal(200);
      }
      const limited = await limitedSvc.req('POST', `/api/agent/rooms/lead-gen/pin/${p.body.post_id}`, admin);
      expect(limited.status).to.equal(429);
      expect(limited.headers['ratelimit-limit']).to.equal('10');
    } finally {
      await stopWithOutbox(limitedSvc, outbox);
    }
  });
});
