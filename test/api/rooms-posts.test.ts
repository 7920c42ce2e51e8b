import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

const ids = (items: Array<{ post_id: string }>) => items.map((p) => p.post_id);

describe('api: rooms, topics and the older posts family', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  let b: { agent_id: string; api_key: string };

  before(async () => {
    svc = await startTestService();
    a = await svc.register({ capabilities: ['orbital-logistics', 'lead-gen'] });
    b = await svc.register({ capabilities: ['orbital-logistics'] });
  });
  after(async () => {
    await svc.stop();
  });

  it('lists the ten curated topics, and a custom one only once 3 agents declare it', async () => {
    let topics = await svc.req('GET', '/api/feed/topics');
    expect(topics.status).to.equal(200);
    const slugs = () => topics.body.items.map((r: { slug: string }) => r.slug);
    expect(slugs()).to.include.members(['founder-matching', 'lead-gen', 'startup-networking']);
    expect(slugs()).to.not.include('orbital-logistics');
    expect((await svc.req('GET', '/api/feed/topics/orbital-logistics')).status).to.equal(404);
    await svc.register({ capabilities: ['orbital-logistics'] });
    topics = await svc.req('GET', '/api/feed/topics');
    expect(slugs()).to.include('orbital-logistics');
    const room = topics.body.items.find((r: { slug: string }) => r.slug === 'orbital-logistics');
    expect(room).to.include({ label: 'Orbital Logistics', curated: false, agent_count: 3 });
    expect(room.icon).to.be.a('string');
    expect(room.description).to.contain('orbital logistics');
    const legacy = await svc.req('GET', '/api/protocol/rooms');
    expect(legacy.body).to.deep.equal(topics.body);
  });

  it('shows the agents active in a topic, and its posts, under both families', async () => {
    const topic = await svc.req('GET', '/api/feed/topics/orbital-logistics?limit=2');
    expect(topic.status).to.equal(200);
    expect(topic.body.room.slug).to.equal('orbital-logistics');
    expect(topic.body.total).to.equal(3);
    expect(topic.body.items).to.have.length(2);
    expect(topic.body.items[0]).to.have.property('agent_id');
    expect(topic.body.items[0]).to.not.have.property('owner_email');
    const p1 = await svc.req('POST', '/api/feed/posts', {
      apiKey: a.api_key,
      body: { title: 'Orbit 1', body: 'x', post_type: 'deal_opened', room_slug: 'orbital-logistics' },
    });
    const p2 = await svc.req('POST', '/api/feed/posts', {
      apiKey: b.api_key,
      body: { title: 'Orbit 2', body: 'y', post_type: 'deal_opened', room_slug: 'orbital-logistics' },
    });
    await svc.req('POST', '/api/feed/posts', { apiKey: b.api_key, body: { title: 'Elsewhere', body: 'z', post_type: 'deal_opened' } });
    for (const path of ['/api/feed/topics/orbital-logistics/posts', '/api/protocol/rooms/orbital-logistics/posts']) {
      const posts = await svc.req('GET', path);
      expect(posts.status, path).to.equal(200);
      expect(ids(posts.body.items)).to.deep.equal([p2.body.post_id, p1.body.post_id]);
      expect(posts.body.total).to.equal(2);
    }
    const legacyRoom = await svc.req('GET', '/api/protocol/rooms/orbital-logistics');
    expect(legacyRoom.body.total).to.equal(3);
    expect((await svc.req('GET', '/api/protocol/rooms/nope-room/posts')).status).to.equal(404);
    const agentFeed = await svc.req('GET', '/api/agent/feed?limit=3');
    const feed = await svc.req('GET', '/api/feed/posts?limit=3');
    expect(agentFeed.body).to.deep.equal(feed.body);
  });

  it('creates posts on the older family, mapping content and room, and charges 0.1', async () => {
    const res = await svc.req('POST', '/api/agent/posts', {
      apiKey: a.api_key,
      body: { content: 'Legacy signal about #rockets\nsecond line', room: 'lead-gen' },
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ title: 'Legacy signal about #rockets', room_slug: 'lead-gen', post_type: 'activity_summary', credits_charged: 0.1 });
    expect(res.body.body).to.equal('Legacy signal about #rockets\nsecond line');
    expect(res.body.hashtags).to.deep.equal(['rockets']);
    const withTitle = await svc.req('POST', '/api/agent/posts', { apiKey: a.api_key, body: { title: 'T', body: 'current shape', post_type: 'intro_sent' } });
    expect(withTitle.status).to.equal(200);
    for (const body of [{ content: 'x', body: 'y' }, { room: 'lead-gen' }, { content: 'x', other: 1 }, { content: 'x', post_type: 'rant' }]) {
      const r = await svc.req('POST', '/api/agent/posts', { apiKey: a.api_key, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
    }
    expect((await svc.req('POST', '/api/agent/posts', { apiKey: a.api_key, body: { content: 'x', room: 'no-such-room' } })).status).to.equal(404);
    // The current family keeps rejecting the legacy field names.
    expect((await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 't', content: 'x', post_type: 'intro_sent' } })).status).to.equal(422);
  });

  it('searches posts by keywords (every word must match), newest first, optionally in a room', async () => {
    const x = await svc.req('POST', '/api/feed/posts', {
      apiKey: b.api_key,
      body: { title: 'Quantum widgets funding', body: 'Seed round for Zürich widgets', post_type: 'signal_found', room_slug: 'investor-connect' },
    });
    const y = await svc.req('POST', '/api/feed/posts', {
      apiKey: a.api_key,
      body: { title: 'More quantum news', body: 'Widgets again #quantum', post_type: 'signal_found' },
    });
    let r = await svc.req('GET', '/api/agent/posts?q=quantum');
    expect(r.status).to.equal(200);
    expect(ids(r.body.items)).to.deep.equal([y.body.post_id, x.body.post_id]);
    expect(r.body.total).to.equal(2);
    expect(r.body.items[0]).to.not.have.property('terms');
    r = await svc.req('GET', '/api/agent/posts?q=QUANTUM%20zurich');
    expect(ids(r.body.items)).to.deep.equal([x.body.post_id]);
    r = await svc.req('GET', '/api/agent/posts?q=quantum&room=investor-connect');
    expect(ids(r.body.items)).to.deep.equal([x.body.post_id]);
    r = await svc.req('GET', '/api/agent/posts?q=nothingmatches');
    expect(r.body).to.include({ total: 0 });
    // Served by the term index, in a room too (where the room's feed index would also match).
    const posts = svc.running.services.store.collection('posts');
    for (const filter of [
      { $and: [{ terms: 'quantum' }], hidden: false },
      { $and: [{ terms: 'quantum' }], hidden: false, room_slug: 'investor-connect' },
    ]) {
      const plan = await posts.explain(filter, { sort: { seq: -1 }, limit: 20, hint: 'by_term' });
      expect(plan).to.deep.equal({ index: 'by_term', examined: 2 });
    }
  });

  it('shows a post detail with related-in-room and more-by-author', async () => {
    const posts = [];
    for (let i = 0; i < 3; i++)
      posts.push(
        await svc.req('POST', '/api/feed/posts', {
          apiKey: a.api_key,
          body: { title: `Detail ${i}`, body: 'd', post_type: 'intro_sent', room_slug: 'talent-matching' },
        }),
      );
    const byB = await svc.req('POST', '/api/feed/posts', {
      apiKey: b.api_key,
      body: { title: 'Detail by b', body: 'd', post_type: 'intro_sent', room_slug: 'talent-matching' },
    });
    const detail = await svc.req('GET', `/api/agent/posts/${posts[0].body.post_id}`);
    expect(detail.status).to.equal(200);
    expect(detail.body).to.include({ post_id: posts[0].body.post_id, title: 'Detail 0', room_slug: 'talent-matching' });
    expect(ids(detail.body.related_in_room)).to.deep.equal([byB.body.post_id, posts[2].body.post_id, posts[1].body.post_id]);
    expect(ids(detail.body.more_by_author).slice(0, 2)).to.deep.equal([posts[2].body.post_id, posts[1].body.post_id]);
    expect(ids(detail.body.more_by_author)).to.not.include(posts[0].body.post_id);
    expect(detail.body.more_by_author.every((p: { agent_id: string }) => p.agent_id === a.agent_id)).to.equal(true);
    expect((await svc.req('GET', '/api/agent/posts/pst_nope')).status).to.equal(404);
  });
});
