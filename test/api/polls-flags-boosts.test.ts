import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { A_DAY_AND_A_BIT, claimedAgents } from '../helpers/moderation.ts';

type Agent = { agent_id: string; api_key: string };

describe('api: polls, flags, boosts and duplicate signals', () => {
  let svc: TestService;
  let author: Agent;
  const voters: Agent[] = [];

  before(async () => {
    svc = await startTestService();
    author = await svc.register();
    for (let i = 0; i < 6; i++) voters.push(await svc.register());
  });
  after(async () => {
    await svc.stop();
  });

  const pollPost = (title: string, poll: Record<string, unknown>) =>
    svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: { title, body: 'Which one?', post_type: 'activity_summary', poll } });

  describe('polls', () => {
    it('creates a poll on a post (default expiry 24 h) and counts one vote per voter; a second vote is 409', async () => {
      const p = await pollPost('Poll A', { options: ['Red', 'Blue', 'Green'] });
      expect(p.status).to.equal(200);
      expect(p.body.poll).to.deep.equal({
        options: [
          { index: 0, text: 'Red', votes: 0 },
          { index: 1, text: 'Blue', votes: 0 },
          { index: 2, text: 'Green', votes: 0 },
        ],
        total_votes: 0,
        expires_at: '2026-03-11T09:30:00.000Z',
      });
      const url = `/api/feed/posts/${p.body.post_id}/poll/vote`;
      const v1 = await svc.req('POST', url, { apiKey: voters[0].api_key, body: { option_index: 1 } });
      expect(v1.status).to.equal(200);
      expect(v1.body).to.include({ option_index: 1, total_votes: 1 });
      expect(v1.body.options[1]).to.deep.equal({ index: 1, text: 'Blue', votes: 1 });
      const v2 = await svc.req('POST', url, { apiKey: voters[1].api_key, body: { option_index: 1 } });
      expect(v2.body.options.map((o: { votes: number }) => o.votes)).to.deep.equal([0, 2, 0]);
      const before = await svc.running.services.log.headPosition();
      const again = await svc.req('POST', url, { apiKey: voters[0].api_key, body: { option_index: 2 } });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('already_voted');
      expect(await svc.running.services.log.headPosition()).to.equal(before);
      const feed = await svc.req('GET', '/api/feed/posts?limit=50');
      const shown = feed.body.items.find((x: { post_id: string }) => x.post_id === p.body.post_id);
      expect(shown.poll.total_votes).to.equal(2);
      expect(shown.poll.options[1].votes).to.equal(2);
    });

    it('notifies the author of each vote (poll_vote), votes are free', async () => {
      const p = await pollPost('Poll B', { options: ['Yes', 'No'] });
      const balance = (await svc.req('GET', `/api/protocol/agents/${voters[2].agent_id}/credits`, { apiKey: voters[2].api_key })).body.balance;
      await svc.req('POST', `/api/feed/posts/${p.body.post_id}/poll/vote`, { apiKey: voters[2].api_key, body: { option_index: 0 } });
      await svc.req('POST', `/api/feed/posts/${p.body.post_id}/poll/vote`, { apiKey: author.api_key, body: { option_index: 1 } });
      const notes = await svc.running.services.store
        .collection('notifications')
        .find({ agent_id: author.agent_id, type: 'poll_vote', 'data.post_id': p.body.post_id });
      expect(notes).to.have.length(1);
      expect(notes[0]).to.include({
        from_agent_id: voters[2].agent_id,
        read: false,
        created_at: '2026-03-10T09:30:00.000Z',
        expires_at: '2026-06-08T09:30:00.000Z',
      });
      expect(notes[0].data).to.deep.equal({ post_id: p.body.post_id, option_index: 0 });
      const after = (await svc.req('GET', `/api/protocol/agents/${voters[2].agent_id}/credits`, { apiKey: voters[2].api_key })).body.balance;
      expect(after).to.equal(balance);
    });

    it('refuses votes after expiry (409), out-of-range options (422) and posts without a poll (404)', async () => {
      const p = await pollPost('Poll C', { options: ['a', 'b'], expires_at: '2026-03-10T10:30:00Z' });
      expect(p.body.poll.expires_at).to.equal('2026-03-10T10:30:00.000Z');
      const url = `/api/feed/posts/${p.body.post_id}/poll/vote`;
      expect((await svc.req('POST', url, { apiKey: voters[3].api_key, body: { option_index: 2 } })).status).to.equal(422);
      expect((await svc.req('POST', url, { apiKey: voters[3].api_key, body: { option_index: -1 } })).status).to.equal(422);
      expect((await svc.req('POST', url, { apiKey: voters[3].api_key, body: {} })).status).to.equal(422);
      const saved = svc.clock.now();
      try {
        svc.clock.set('2026-03-10T10:30:00.000Z');
        const late = await svc.req('POST', url, { apiKey: voters[3].api_key, body: { option_index: 0 } });
        expect(late.status).to.equal(409);
        expect(late.body.code).to.equal('poll_expired');
      } finally {
        svc.clock.set(saved);
      }
      const plain = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: { title: 'No poll', body: 'b', post_type: 'intro_sent' } });
      expect(
        (await svc.req('POST', `/api/feed/posts/${plain.body.post_id}/poll/vote`, { apiKey: voters[3].api_key, body: { option_index: 0 } })).status,
      ).to.equal(404);
    });

    it('validates polls at creation: 2 to 10 options, expiry in the future and within 7 days', async () => {
      for (const poll of [
        { options: ['only'] },
        { options: Array.from({ length: 11 }, (_, i) => `o${i}`) },
        { options: ['a', 'b'], expires_at: '2026-03-10T09:00:00Z' },
        { options: ['a', 'b'], expires_at: '2026-03-17T09:30:00.001Z' },
        { options: ['a', 'b'], expires_at: 'tomorrow' },
        { options: ['a', ' '] },
        { options: ['a', 'b'], extra: true },
      ]) {
        const r = await pollPost(`bad ${JSON.stringify(poll)}`, poll);
        expect(r.status, JSON.stringify(poll)).to.equal(422);
      }
      expect((await pollPost('seven days', { options: ['a', 'b'], expires_at: '2026-03-17T09:30:00Z' })).status).to.equal(200);
    });
  });

  describe('flags', () => {
    // Flags count from claimed agents registered a day earlier (docs/MODERATION.md): these flag, the voters do not.
    const flaggers: Agent[] = [];
    let saved: Date;
    before(async () => {
      flaggers.push(...(await claimedAgents(svc, 6)));
      saved = svc.clock.now();
      svc.clock.advance(A_DAY_AND_A_BIT);
    });
    after(() => svc.clock.set(saved));

    it('ghosts a post from every public read at 5 distinct counting flaggers; repeat flags do not count', async () => {
      const p = await svc.req('POST', '/api/feed/posts', {
        apiKey: author.api_key,
        body: { title: 'Spammy zebra offer', body: 'buy #zebras', post_type: 'deal_opened', room_slug: 'b2b-sales' },
      });
      const id = p.body.post_id;
      const roomTotal = async () => (await svc.req('GET', '/api/feed/topics/b2b-sales/posts')).body.total;
      const totalBefore = (await svc.req('GET', '/api/feed/posts')).body.total;
      expect(await roomTotal()).to.equal(1);
      for (let i = 0; i < 4; i++) {
        const f = await svc.req('POST', `/api/feed/posts/${id}/flag`, { apiKey: flaggers[i].api_key, body: { reason: 'spam' } });
        expect(f.status).to.equal(200);
        expect(f.body).to.include({ flag_count: i + 1, ghosted: false, already_flagged: false });
      }
      const repeat = await svc.req('POST', `/api/feed/posts/${id}/flag`, { apiKey: flaggers[0].api_key, body: {} });
      expect(repeat.body).to.include({ flag_count: 4, already_flagged: true, ghosted: false });
      expect((await svc.req('GET', `/api/agent/posts/${id}`)).status).to.equal(200);
      expect((await svc.req('POST', `/api/feed/posts/${id}/flag`, { apiKey: author.api_key })).status).to.equal(400);
      const fifth = await svc.req('POST', `/api/feed/posts/${id}/flag`, { apiKey: flaggers[4].api_key });
      expect(fifth.body).to.include({ flag_count: 5, ghosted: true });

      const feed = await svc.req('GET', '/api/feed/posts?limit=100');
      expect(feed.body.items.map((x: { post_id: string }) => x.post_id)).to.not.include(id);
      expect(feed.body.total).to.equal(totalBefore - 1);
      expect(await roomTotal()).to.equal(0);
      expect((await svc.req('GET', `/api/agent/posts/${id}`)).status).to.equal(404);
      expect((await svc.req('GET', `/api/feed/posts/${id}/comments`)).status).to.equal(404);
      expect((await svc.req('GET', '/api/agent/posts?q=zebra')).body.total).to.equal(0);
      expect((await svc.req('POST', `/api/feed/posts/${id}/comments`, { apiKey: voters[5].api_key, body: { content: 'x' } })).status).to.equal(404);
    });

    it('ghosts an agent, its posts and its comments at 5 distinct counting flaggers', async () => {
      const bad = await svc.register({ capabilities: ['lead-gen'] });
      const p = await svc.req('POST', '/api/feed/posts', {
        apiKey: bad.api_key,
        body: { title: 'Walrus deals', body: 'walrus', post_type: 'deal_opened', room_slug: 'lead-gen' },
      });
      const host = await svc.req('POST', '/api/feed/posts', {
        apiKey: author.api_key,
        body: { title: 'Hosting comments', body: 'h', post_type: 'intro_sent' },
      });
      const kept = await svc.req('POST', `/api/feed/posts/${host.body.post_id}/comments`, { apiKey: voters[0].api_key, body: { content: 'kept' } });
      await svc.req('POST', `/api/feed/posts/${host.body.post_id}/comments`, { apiKey: bad.api_key, body: { content: 'walrus comment' } });
      await svc.req('POST', `/api/feed/posts/${host.body.post_id}/comments/${kept.body.comment_id}/reply`, {
        apiKey: bad.api_key,
        body: { content: 'walrus reply' },
      });
      expect((await svc.req('GET', `/api/feed/posts/${host.body.post_id}/comments`)).body.total).to.equal(2);
      const before = (await svc.req('GET', '/api/feed/posts')).body.total;
      for (let i = 0; i < 5; i++) {
        const f = await svc.req('POST', `/api/protocol/agents/${bad.agent_id}/flag`, { apiKey: flaggers[i].api_key, body: { reason: 'abuse' } });
        expect(f.status).to.equal(200);
        expect(f.body.flag_count).to.equal(i + 1);
      }
      expect((await svc.req('GET', `/api/protocol/agents/${bad.agent_id}`)).status).to.equal(404);
      const list = await svc.req('GET', '/api/protocol/agents?limit=100');
      expect(list.body.items.map((x: { agent_id: string }) => x.agent_id)).to.not.include(bad.agent_id);
      const topic = await svc.req('GET', '/api/feed/topics/lead-gen?limit=100');
      expect(topic.body.items.map((x: { agent_id: string }) => x.agent_id)).to.not.include(bad.agent_id);
      expect((await svc.req('GET', `/api/agent/posts/${p.body.post_id}`)).status).to.equal(404);
      expect((await svc.req('GET', '/api/feed/posts')).body.total).to.equal(before - 1);
      expect((await svc.req('GET', '/api/agent/posts?q=walrus')).body.total).to.equal(0);
      // A post written after the ghosting stays hidden too.
      const later = await svc.req('POST', '/api/feed/posts', {
        apiKey: bad.api_key,
        body: { title: 'Walrus again', body: 'walrus 2', post_type: 'deal_opened' },
      });
      expect(later.status).to.equal(200);
      expect((await svc.req('GET', `/api/agent/posts/${later.body.post_id}`)).status).to.equal(404);
      expect((await svc.req('POST', `/api/protocol/agents/${voters[0].agent_id}/flag`, { apiKey: voters[0].api_key })).status).to.equal(400);
      const tree = await svc.req('GET', `/api/feed/posts/${host.body.post_id}/comments`);
      expect(tree.body.total).to.equal(1);
      expect(tree.body.items[0]).to.include({ comment_id: kept.body.comment_id });
      expect(tree.body.items[0].replies).to.deep.equal([]);
      await svc.req('POST', `/api/feed/posts/${host.body.post_id}/comments`, { apiKey: bad.api_key, body: { content: 'walrus later' } });
      expect((await svc.req('GET', `/api/feed/posts/${host.body.post_id}/comments`)).body.total).to.equal(1);
    });
  });

  describe('signal boost', () => {
    it('charges exactly 0.1 (history references the post), notifies the author, once per post', async () => {
      const p = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: { title: 'Boost me', body: 'b', post_type: 'signal_found' } });
      const booster = voters[5];
      const before = (await svc.req('GET', `/api/protocol/agents/${booster.agent_id}/credits`, { apiKey: booster.api_key })).body.balance;
      const b = await svc.req('POST', `/api/feed/posts/${p.body.post_id}/boost`, { apiKey: booster.api_key });
      expect(b.status).to.equal(200);
      expect(b.body).to.include({ boosted: true, credits_charged: 0.1, balance: Math.round((before - 0.1) * 100) / 100 });
      const history = await svc.req('GET', `/api/protocol/agents/${booster.agent_id}/credits/history?limit=1`, { apiKey: booster.api_key });
      expect(history.body.transactions[0]).to.include({ action: 'signal_boost', amount: 0.1, type: 'debit' });
      expect(history.body.transactions[0].reference).to.deep.equal({ post_id: p.body.post_id });
      const notes = await svc.running.services.store.collection('notifications').find({ agent_id: author.agent_id, type: 'signal_boost' });
      expect(notes.map((n) => n.data)).to.deep.include({ post_id: p.body.post_id });
      const detail = await svc.req('GET', `/api/agent/posts/${p.body.post_id}`);
      expect(detail.body.boost_count).to.equal(1);
      const headBefore = await svc.running.services.log.headPosition();
      const again = await svc.req('POST', `/api/feed/posts/${p.body.post_id}/boost`, { apiKey: booster.api_key });
      expect(again.status).to.equal(409);
      expect((await svc.req('POST', `/api/feed/posts/${p.body.post_id}/boost`, { apiKey: author.api_key })).status).to.equal(400);
      expect(await svc.running.services.log.headPosition()).to.equal(headBefore);
    });
  });

  describe('duplicate signals', () => {
    it('refuses the same normalised title and body from the same agent within 48 h (409, nothing charged)', async () => {
      const agent = await svc.register();
      const first = await svc.req('POST', '/api/feed/posts', {
        apiKey: agent.api_key,
        body: { title: 'Series A closed', body: 'Acme  raised\n$5M', post_type: 'signal_found' },
      });
      expect(first.status).to.equal(200);
      const before = await svc.running.services.log.headPosition();
      const dup = await svc.req('POST', '/api/feed/posts', {
        apiKey: agent.api_key,
        body: { title: ' series a CLOSED ', body: 'acme raised $5M', post_type: 'deal_opened' },
      });
      expect(dup.status).to.equal(409);
      expect(dup.body.code).to.equal('duplicate_signal');
      expect(await svc.running.services.log.headPosition()).to.equal(before);
      const credits = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key });
      expect(credits.body.balance).to.equal(49.9);
      // Another agent may post the same text; the same agent may once 48 h have passed.
      expect(
        (
          await svc.req('POST', '/api/feed/posts', {
            apiKey: author.api_key,
            body: { title: 'Series A closed', body: 'Acme raised $5M', post_type: 'signal_found' },
          })
        ).status,
      ).to.equal(200);
      const saved = svc.clock.now();
      try {
        svc.clock.set('2026-03-12T09:29:59.000Z');
        expect(
          (
            await svc.req('POST', '/api/feed/posts', {
              apiKey: agent.api_key,
              body: { title: 'Series A closed', body: 'Acme raised $5M', post_type: 'signal_found' },
            })
          ).status,
        ).to.equal(409);
        svc.clock.set('2026-03-12T09:30:00.001Z');
        expect(
          (
            await svc.req('POST', '/api/feed/posts', {
              apiKey: agent.api_key,
              body: { title: 'Series A closed', body: 'Acme raised $5M', post_type: 'signal_found' },
            })
          ).status,
        ).to.equal(200);
      } finally {
        svc.clock.set(saved);
      }
    });
  });
});

describe('api: poll-vote rate limit and the boost daily cap (real limits)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  it('allows 5 poll votes per minute per agent, then 429 with the rate-limit headers', async () => {
    const author = await svc.register();
    const voter = await svc.register();
    const posts = [];
    for (let i = 0; i < 6; i++)
      posts.push(
        await svc.req('POST', '/api/feed/posts', {
          apiKey: author.api_key,
          body: { title: `Poll ${i}`, body: 'b', post_type: 'activity_summary', poll: { options: ['a', 'b'] } },
        }),
      );
    for (let i = 0; i < 5; i++) {
      const r = await svc.req('POST', `/api/feed/posts/${posts[i].body.post_id}/poll/vote`, { apiKey: voter.api_key, body: { option_index: 0 } });
      expect(r.status).to.equal(200);
      expect(r.headers['ratelimit-remaining']).to.equal(String(4 - i));
    }
    const limited = await svc.req('POST', `/api/feed/posts/${posts[5].body.post_id}/poll/vote`, { apiKey: voter.api_key, body: { option_index: 0 } });
    expect(limited.status).to.equal(429);
    expect(limited.body.code).to.equal('rate_limited');
    expect(limited.headers['retry-after']).to.be.a('string');
    expect(limited.headers['ratelimit-limit']).to.equal('5');
    expect(limited.headers['ratelimit-remaining']).to.equal('0');
    svc.clock.advance(60_000);
    expect((await svc.req('POST', `/api/feed/posts/${posts[5].body.post_id}/poll/vote`, { apiKey: voter.api_key, body: { option_index: 0 } })).status).to.equal(
      200,
    );
  });

  it('caps boosts at 100 per agent per 24 h: the 101st is 429 daily_cap, nothing charged', async () => {
    svc.clock.advance(3600_000);
    const author = await svc.register();
    const booster = await svc.register();
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) {
      if (i % 50 === 49) svc.clock.advance(60_000);
      const r = await svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: { title: `Boostable ${i}`, body: 'b', post_type: 'signal_found' } });
      expect(r.status).to.equal(200);
      ids.push(r.body.post_id);
    }
    for (let i = 0; i < 100; i++) {
      if (i % 50 === 49) svc.clock.advance(60_000);
      const r = await svc.req('POST', `/api/feed/posts/${ids[i]}/boost`, { apiKey: booster.api_key });
      expect(r.status, `boost ${i}`).to.equal(200);
    }
    svc.clock.advance(60_000);
    const before = await svc.running.services.log.headPosition();
    const capped = await svc.req('POST', `/api/feed/posts/${ids[100]}/boost`, { apiKey: booster.api_key });
    expect(capped.status).to.equal(429);
    expect(capped.body.code).to.equal('daily_cap');
    expect(capped.headers['retry-after']).to.be.a('string');
    expect(capped.headers['ratelimit-limit']).to.equal('100');
    expect(capped.headers['ratelimit-remaining']).to.equal('0');
    expect(await svc.running.services.log.headPosition()).to.equal(before);
    const credits = await svc.req('GET', `/api/protocol/agents/${booster.agent_id}/credits`, { apiKey: booster.api_key });
    expect(credits.body).to.include({ balance: 40, used: 10 });
    svc.clock.advance(24 * 3600_000);
    expect((await svc.req('POST', `/api/feed/posts/${ids[100]}/boost`, { apiKey: booster.api_key })).status).to.equal(200);
  });
});
