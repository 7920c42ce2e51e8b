import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { collectionChecksum } from '../../projections/store/checksum.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { checksumsOf } from '../helpers/checksums.ts';
import { png as pngImage } from '../helpers/images.ts';
import { peerWithProof } from '../helpers/federation.ts';

const collections = [...new Set(allProjections.flatMap((p) => p.collections.map((c) => c.name)))];

const checksums = (store: ReadStore) => checksumsOf(store, collections);

describe('projections: replay', () => {
  let svc: TestService;
  let outbox: string;
  before(async function () {
    this.timeout(300_000);
    outbox = mkdtempSync(join(tmpdir(), 'agent-network-outbox-'));
    svc = await startTestService({ ADMIN_EMAILS: 'replay-admin@example.com', MAIL_OUTBOX_DIR: outbox, WEBHOOK_ALLOW_LOOPBACK: '1' });
    const agents = [];
    for (let i = 0; i < 6; i++) agents.push(await svc.register({ capabilities: i < 3 ? ['replay-room', 'lead-gen'] : ['lead-gen'] }));
    for (const [i, a] of agents.entries()) {
      await svc.req('PATCH', '/api/protocol/me', { apiKey: a.api_key, body: { name: `Renamed ${i}` } });
      for (let j = 0; j < 5; j++) {
        await svc.req('POST', '/api/feed/posts', {
          apiKey: a.api_key,
          body: { title: `p${j}`, body: `#tag${j} body`, post_type: 'signal_found', room_slug: j % 2 ? 'lead-gen' : null },
        });
      }
    }
    // Comments, replies, upvotes and reactions on the first posts (the content read models).
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    const postIds: string[] = feed.body.items.map((p: { post_id: string }) => p.post_id);
    for (const [i, a] of agents.entries()) {
      const target = postIds[i % 4];
      const c = await svc.req('POST', `/api/feed/posts/${target}/comments`, { apiKey: a.api_key, body: { content: `comment ${i}` } });
      const r = await svc.req('POST', `/api/feed/posts/${target}/comments/${c.body.comment_id}/reply`, {
        apiKey: agents[(i + 1) % 6].api_key,
        body: { content: `reply ${i}` },
      });
      await svc.req('POST', `/api/feed/posts/${target}/comments/${r.body.comment_id}/reply`, { apiKey: a.api_key, body: { content: `reply to reply ${i}` } });
      for (const voter of agents.slice(0, i + 1))
        await svc.req('POST', `/api/feed/posts/${target}/comments/${c.body.comment_id}/upvote`, { apiKey: voter.api_key });
      await svc.req('POST', `/api/feed/posts/${target}/comments/${c.body.comment_id}/upvote`, { apiKey: a.api_key });
      await svc.req('POST', `/api/feed/posts/${postIds[i]}/react`, {
        apiKey: a.api_key,
        body: { reaction: (['like', 'insightful', 'celebrate'] as const)[i % 3] },
      });
      await svc.req('POST', `/api/feed/posts/${postIds[0]}/react`, { apiKey: a.api_key, body: { reaction: 'like' } });
    }
    await svc.req('POST', `/api/feed/posts/${postIds[0]}/react`, { apiKey: agents[0].api_key, body: { reaction: 'like' } });
    // Polls and votes, a boost, a post and an agent ghosted by 5 flags, a room merged and one
    // hidden, scheduled posts (one published by the job, one cancelled), pins, an image.
    const [a0, a1, a2, a3] = agents;
    const poll = await svc.req('POST', '/api/feed/posts', {
      apiKey: a0.api_key,
      body: { title: 'Poll', body: 'Pick #poll', post_type: 'activity_summary', poll: { options: ['x', 'y', 'z'] } },
    });
    for (const [i, v] of agents.slice(1, 5).entries())
      await svc.req('POST', `/api/feed/posts/${poll.body.post_id}/poll/vote`, { apiKey: v.api_key, body: { option_index: i % 3 } });
    await svc.req('POST', `/api/feed/posts/${poll.body.post_id}/boost`, { apiKey: a1.api_key });
    const inRoom = [];
    for (let j = 0; j < 2; j++)
      inRoom.push(
        await svc.req('POST', '/api/feed/posts', {
          apiKey: a1.api_key,
          body: { title: `custom ${j}`, body: `in the custom room ${j}`, post_type: 'deal_opened', room_slug: 'replay-room' },
        }),
      );
    const victim = (await svc.req('GET', `/api/feed/posts?limit=100`)).body.items.find((p: { agent_id: string }) => p.agent_id === a2.agent_id).post_id;
    for (const f of agents.filter((a) => a !== a2)) await svc.req('POST', `/api/feed/posts/${victim}/flag`, { apiKey: f.api_key, body: { reason: 'spam' } });
    const spammer = await svc.register({ capabilities: ['lead-gen'] });
    for (let j = 0; j < 2; j++)
      await svc.req('POST', '/api/feed/posts', {
        apiKey: spammer.api_key,
        body: { title: `spam ${j}`, body: `#spam ${j}`, post_type: 'deal_opened', room_slug: 'lead-gen' },
      });
    for (const f of agents.slice(0, 5)) await svc.req('POST', `/api/protocol/agents/${spammer.agent_id}/flag`, { apiKey: f.api_key });
    const ctx = (id: string) => ({ commandId: id, actor: 'test', requestId: null, now: svc.clock.now() });
    // The flags above come from fresh, unclaimed agents and hide nothing (docs/MODERATION.md): a
    // moderator hides the post and the agent, and hides then restores another post.
    const { decideModerationItem } = await import('../../commands/feed/moderation.ts');
    const decide = async (kind: 'post' | 'agent', id: string, author: string, decision: 'uphold' | 'restore', n: string) =>
      svc.running.services.runner.waitFor(
        (
          await decideModerationItem(
            svc.running.services.bus,
            { item_kind: kind, item_id: id, author_agent_id: author },
            decision,
            'usr_test',
            'replay',
            ctx(n),
          )
        ).position,
      );
    await decide('post', victim, a2.agent_id, 'uphold', 'mod-1');
    await decide('agent', spammer.agent_id, spammer.agent_id, 'uphold', 'mod-2');
    const restored = (await svc.req('GET', `/api/feed/posts?limit=100`)).body.items.find((p: { agent_id: string }) => p.agent_id === a3.agent_id).post_id;
    await decide('post', restored, a3.agent_id, 'uphold', 'mod-3');
    await decide('post', restored, a3.agent_id, 'restore', 'mod-4');
    await svc.req('POST', '/api/feed/posts', { apiKey: spammer.api_key, body: { title: 'spam later', body: 'after the ghosting', post_type: 'deal_opened' } });
    const { mergeRoom, hideRoom } = await import('../../commands/feed/rooms.ts');
    await svc.running.services.runner.waitFor(
      (
        await mergeRoom(
          svc.running.services.bus,
          { room_slug: 'replay-room', into: 'lead-gen', by: 'test', source: { curated: false }, target: { curated: true } },
          ctx('merge-1'),
        )
      ).position,
    );
    await svc.register({ capabilities: ['replay-hidden'] });
    await svc.running.services.runner.waitFor((await hideRoom(svc.running.services.bus, 'replay-hidden', 'test', { curated: false }, ctx('hide-1'))).position);
    const later = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: a3.api_key,
      body: { title: 'Scheduled', body: 'published by the job', post_type: 'intro_sent', room_slug: 'lead-gen', publish_at: '2026-03-20T00:00:00Z' },
    });
    const cancelled = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: a3.api_key,
      body: { title: 'Cancelled', body: 'never published', post_type: 'intro_sent', publish_at: '2026-03-21T00:00:00Z' },
    });
    await svc.req('DELETE', `/api/feed/posts/scheduled/${cancelled.body.post_id}`, { apiKey: a3.api_key });
    // Pins are bearer-only: a signed-in super admin (ADMIN_EMAILS) pins as a human.
    const admin = { headers: { authorization: `Bearer ${(await signUp(svc, outbox, 'replay-admin@example.com')).access_token}` } };
    const roomPosts = (await svc.req('GET', '/api/feed/topics/lead-gen/posts?limit=3')).body.items.map((p: { post_id: string }) => p.post_id);
    for (const id of roomPosts) await svc.req('POST', `/api/agent/rooms/lead-gen/pin/${id}`, admin);
    await svc.req('DELETE', `/api/agent/rooms/lead-gen/pin/${roomPosts[1]}`, admin);
    const png = pngImage();
    const boundary = 'replayboundary';
    const rawBody = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    await svc.req('POST', '/api/feed/upload-image', { apiKey: a0.api_key, rawBody, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    // The social graph: follows and an unfollow, trust stamps (one repeated), bonds through
    // request, accept, decline and removal, DMs both ways (response rate), a federation peer.
    for (const [i, a] of agents.entries()) {
      await svc.req('POST', `/api/protocol/agents/${agents[(i + 1) % 6].agent_id}/follow`, { apiKey: a.api_key });
      await svc.req('POST', `/api/protocol/agents/${agents[(i + 2) % 6].agent_id}/follow`, { apiKey: a.api_key });
      await svc.req('POST', `/api/agent/endorse/${agents[(i + 1) % 6].agent_id}`, { apiKey: a.api_key, body: { capability: 'lead-gen' } });
      await svc.req('POST', `/api/agent/endorse/${agents[(i + 1) % 6].agent_id}`, { apiKey: a.api_key, body: { capability: 'lead-gen' } });
      await svc.req('POST', `/api/agent/bonds/${agents[(i + 3) % 6].agent_id}`, { apiKey: a.api_key });
    }
    await svc.req('DELETE', `/api/protocol/agents/${a1.agent_id}/follow`, { apiKey: a0.api_key });
    await svc.req('POST', `/api/agent/bonds/${a0.agent_id}/accept`, { apiKey: a3.api_key });
    await svc.req('POST', `/api/agent/bonds/${a1.agent_id}/decline`, { apiKey: agents[4].api_key });
    await svc.req('DELETE', `/api/agent/bonds/${a3.agent_id}`, { apiKey: a0.api_key });
    svc.clock.advance(2 * 3_600_000);
    await svc.req('POST', `/api/protocol/agents/${a0.agent_id}/dm`, { apiKey: a0.api_key, body: { to_agent_id: a1.agent_id, message: 'hello' } });
    await svc.req('POST', `/api/protocol/agents/${a1.agent_id}/dm`, { apiKey: a1.api_key, body: { to_agent_id: a0.agent_id, message: 'hi back' } });
    const peerBody = { name: 'Peer', contact_email: 'ops@peer.example.com' };
    const peer = await peerWithProof(svc, peerBody);
    expect((await svc.req('POST', '/api/federation/register', { body: { ...peerBody, base_url: peer.base_url } })).status).to.equal(200);
    await peer.close();
    expect(later.status).to.equal(200);
    svc.clock.advance(40 * 86_400_000);
    await svc.running.workers?.sweepGrants();
    expect(await svc.running.workers?.publishDueScheduledPosts()).to.equal(1);
  });
  after(async () => {
    await stopWithOutbox(svc, outbox);
  });

  it('builds the same read models when the log is replayed twice from scratch', async () => {
    const build = async () => {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
      await runner.start();
      await runner.stop();
      return checksums(store);
    };
    const first = await build();
    const second = await build();
    expect(first).to.deep.equal(second);
    expect(first).to.deep.equal(await checksums(svc.running.services.store));
  });

  it('a catch-up or rebuild that bulk loads ends with the same documents and index entries as one maintaining indexes event by event', async () => {
    const entries = (store: MemoryReadStore) => {
      const out: Record<string, unknown> = {};
      for (const name of collections) for (const ix of store._data(name, false)?.indexes ?? []) out[`${name}.${ix.name}`] = [...ix.tree.entries('')];
      return out;
    };
    const { log } = svc.running.services;
    const [bulk, stepwise] = [new MemoryReadStore(), new MemoryReadStore()];
    const bulkRunner = new ProjectionRunner(log, bulk, allProjections, undefined, 0);
    const stepRunner = new ProjectionRunner(log, stepwise, allProjections, undefined, Number.POSITIVE_INFINITY);
    await bulkRunner.start();
    await stepRunner.start();
    expect(await checksums(bulk)).to.deep.equal(await checksums(stepwise));
    const want = entries(stepwise);
    expect(Object.values(want).some((e) => (e as unknown[]).length > 20)).to.equal(true);
    expect(entries(bulk)).to.deep.equal(want);
    await bulkRunner.rebuild(null);
    expect(entries(bulk)).to.deep.equal(want);
    await bulkRunner.stop();
    await stepRunner.stop();
  });

  it('applying every event a second time changes nothing (idempotent projections)', async () => {
    const store = new MemoryReadStore();
    const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
    await runner.start();
    await runner.stop();
    const once = await checksums(store);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: <N extends string>(n: N) => store.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksums(store)).to.deep.equal(once);
  });

  it('covers every content read model with data', async () => {
    const { store } = svc.running.services;
    for (const name of ['comments', 'inbox_events', 'notifications', 'hashtag_daily', 'scheduled_posts', 'room_pins', 'images', 'posts_ghosted_agents']) {
      expect(await store.collection(name).count({}), name).to.be.greaterThan(0);
    }
    expect(await store.collection('posts').count({ hidden: true })).to.equal(4);
    expect((await store.collection('rooms').findOne({ _id: 'replay-room' }))?.merged_into).to.equal('lead-gen');
    expect((await store.collection('rooms').findOne({ _id: 'replay-hidden' }))?.hidden).to.equal(true);
  });

  it('rebuilds each projection into fresh collections equal to the live ones, then swaps them in', async () => {
    const { runner, store } = svc.running.services;
    const compared: string[] = [];
    await runner.rebuild(null, {
      beforeSwap: async (_name, pairs) => {
        for (const [rebuilt, live] of pairs) {
          expect(await collectionChecksum(store, rebuilt), live).to.deep.equal(await collectionChecksum(store, live));
          compared.push(live);
        }
      },
    });
    expect(compared.sort()).to.deep.equal([...collections].sort());
    expect((await store.listCollections()).filter((c) => c.startsWith('_rebuild_'))).to.deep.equal([]);
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    // 30 + the poll + 2 in the merged room + the scheduled one - the ghosted post (the ghosted agent's 3 never show).
    expect(feed.body.items).to.have.length(33);
    expect(feed.body.total).to.equal(33);
  });
});
