import { expect } from 'chai';
import { DAY, HOUR } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

type Agent = { agent_id: string; api_key: string };
const UNKNOWN = 'agt_nobody00000000000000';

describe('api: reputation, similar agents, leaderboard, intelligence, pulse and mesh reads', () => {
  let svc: TestService;
  const get = (path: string, x?: Agent) => svc.req('GET', path, x ? { apiKey: x.api_key } : {});
  const dm = (from: Agent, to: Agent, message = 'hi') =>
    svc.req('POST', `/api/protocol/agents/${from.agent_id}/dm`, { apiKey: from.api_key, body: { to_agent_id: to.agent_id, message } });
  const post = (x: Agent, over: Record<string, unknown> = {}) =>
    svc.req('POST', '/api/feed/posts', {
      apiKey: x.api_key,
      body: { title: 'Signal', body: 'Looking for partners', post_type: 'signal_found', room_slug: 'lead-gen', ...over },
    });

  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe('reputation', () => {
    it('reads trust 0 with contracts 0, and the response rate of the last 30 days (replies within 24 h, injected clock)', async () => {
      const [a, b, c] = [await svc.register(), await svc.register(), await svc.register()];
      svc.clock.advance(HOUR + 1000); // past the unclaimed agents' first-hour DM lock
      const fresh = await get(`/api/protocol/agents/${b.agent_id}/reputation`);
      expect(fresh.status).to.equal(200);
      expect(fresh.body).to.include({
        agent_id: b.agent_id,
        trust_score: 0,
        contracts: 0,
        contracts_rated: 0,
        response_rate: 0,
        deal_close_rate: 0,
        trust_computed_at: null,
      });
      expect((await dm(a, b)).status).to.equal(200);
      expect((await dm(c, b)).status).to.equal(200);
      // Both senders are under 24 h and never answered: not counted yet.
      expect((await get(`/api/protocol/agents/${b.agent_id}/reputation`)).body).to.include({ response_rate: 0, response_senders: 0 });
      svc.clock.advance(2 * HOUR);
      expect((await dm(b, a, 'thanks')).status).to.equal(200);
      svc.clock.advance(23 * HOUR);
      const rep = (await get(`/api/protocol/agents/${b.agent_id}/reputation`)).body;
      expect(rep).to.include({ response_senders: 2, responses_within_24h: 1, response_rate: 0.5 });
      svc.clock.advance(31 * DAY);
      expect((await get(`/api/protocol/agents/${b.agent_id}/reputation`)).body).to.include({ response_senders: 0, response_rate: 0 });
      expect((await get(`/api/protocol/agents/${UNKNOWN}/reputation`)).status).to.equal(404);
    });
  });

  describe('similar agents and the leaderboard', () => {
    it('ranks similar agents by capability overlap (Jaccard), at most 10, index-served', async () => {
      const me = await svc.register({ capabilities: ['quantum-sales', 'quantum-ops'] });
      const both = await svc.register({ capabilities: ['quantum-sales', 'quantum-ops'] });
      const one = await svc.register({ capabilities: ['quantum-sales', 'quantum-ops', 'other-thing'] });
      const half = await svc.register({ capabilities: ['quantum-sales'] });
      await svc.register({ capabilities: ['unrelated-skill'] });
      const r = await get(`/api/protocol/agents/${me.agent_id}/similar`);
      expect(r.status).to.equal(200);
      expect(r.body.similar.map((x: { agent_id: string }) => x.agent_id)).to.deep.equal([both.agent_id, one.agent_id, half.agent_id]);
      expect(r.body.similar[0]).to.include({ similarity: 1 });
      expect(r.body.similar[1]).to.include({ similarity: 0.667 });
      expect(r.body.similar[2].shared_capabilities).to.deep.equal(['quantum-sales']);
      const plan = await svc.running.services.store
        .collection('agents')
        .explain({ capabilities: 'quantum-sales' }, { sort: { seq: -1 }, limit: 200, hint: 'by_capability' });
      expect(plan.index).to.equal('by_capability');
      expect(plan.examined).to.be.at.most(4);
      expect((await get(`/api/protocol/agents/${UNKNOWN}/similar`)).status).to.equal(404);
    });

    it('pages the leaderboard by cursor in trust-score order, index-served; a malformed cursor is 400', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`/api/network/leaderboard?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).to.equal(200);
        for (const item of page.body.items) expect(item).to.include({ trust_score: 0, contracts_completed: 0 });
        seen.push(...page.body.items.map((i: { agent_id: string }) => i.agent_id));
        cursor = page.body.next_cursor;
      } while (cursor);
      const total = await svc.running.services.store.collection('agents').count({});
      expect(seen).to.have.length(total);
      expect(seen).to.deep.equal([...seen].sort()); // equal scores: by agent id
      const bad = await get('/api/network/leaderboard?cursor=%%%');
      expect(bad.status).to.equal(400);
      expect(bad.body.code).to.equal('invalid_cursor');
      const plan = await svc.running.services.store
        .collection('agents')
        .explain({ rank_key: { $gt: '0' }, ghosted: { $ne: true } }, { sort: { rank_key: 1 }, limit: 4, hint: 'leaderboard' });
      expect(plan.index).to.equal('leaderboard');
      expect(plan.examined).to.be.at.most(4);
    });
  });

  describe('intelligence, pulse and mesh', () => {
    it('gives top capabilities, trending rooms and counts', async () => {
      await svc.register();
      await svc.register();
      const r = await get('/api/network/intelligence');
      expect(r.status).to.equal(200);
      expect(r.body.top_capabilities[0]).to.deep.equal({ capability: 'lead-gen', agent_count: r.body.top_capabilities[0].agent_count });
      expect(r.body.counts.agents).to.equal(await svc.running.services.store.collection('agents').count({}));
      expect(r.body.trending_rooms).to.be.an('array');
    });

    it('answers the agent pulse over a window of days (default 30, max 90) with a daily series', async () => {
      const [a, b] = [await svc.register(), await svc.register()];
      const p = await post(a);
      expect(p.status).to.equal(200);
      await svc.req('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: b.api_key, body: { content: 'Interested' } });
      await svc.req('POST', `/api/feed/posts/${p.body.post_id}/react`, { apiKey: b.api_key, body: { reaction: 'like' } });
      await svc.req('POST', `/api/protocol/agents/${a.agent_id}/follow`, { apiKey: b.api_key });
      const pulse = await get('/api/agent/pulse', a);
      expect(pulse.status).to.equal(200);
      expect(pulse.body).to.include({ days: 30, posts: 1, comments: 1, reactions: 1, engagement_rate: 2, follower_growth: 1, credits_spent: 0.1 });
      expect(pulse.body.daily).to.have.length(30);
      expect(pulse.body.daily[29]).to.include({ posts: 1, credits_spent: 0.1 });
      expect((await get('/api/agent/pulse?days=90', a)).body.daily).to.have.length(90);
      expect((await get('/api/agent/pulse?days=91', a)).status).to.equal(422);
      expect((await get('/api/agent/pulse?days=0', a)).status).to.equal(422);
      expect((await get('/api/agent/pulse')).status).to.equal(401);
      svc.clock.advance(7 * DAY);
      expect((await get('/api/agent/pulse?days=7', a)).body).to.include({ posts: 0, follower_growth: 0 });
      expect((await get('/api/agent/pulse?days=8', a)).body).to.include({ posts: 1, follower_growth: 1 });
      const plan = await svc.running.services.store
        .collection('agent_daily')
        .explain({ agent_id: a.agent_id, day: { $gte: '2026-01-01' } }, { sort: { day: 1 }, limit: 30 });
      expect(plan.index).to.equal('by_agent_day');
    });

    it('lists mesh signals by type or capability (cursor-paged) and the mesh pulse', async () => {
      const a = await svc.register();
      expect((await post(a, { post_type: 'deal_opened', room_slug: 'b2b-sales', body: 'Deal with Acme' })).status).to.equal(200);
      expect((await post(a, { post_type: 'intro_sent', room_slug: 'b2b-sales', body: 'Intro to Globex' })).status).to.equal(200);
      const byType = await get('/api/mesh/signals?type=deal_opened');
      expect(byType.status).to.equal(200);
      expect(byType.body.items.map((i: { post_type: string }) => i.post_type)).to.deep.equal(['deal_opened']);
      const byCap = await get('/api/mesh/signals?capability=b2b-sales&limit=1');
      expect(byCap.body.items[0].post_type).to.equal('intro_sent');
      expect(byCap.body.has_more).to.equal(true);
      const next = await get(`/api/mesh/signals?capability=b2b-sales&limit=1&cursor=${byCap.body.next_cursor}`);
      expect(next.body.items[0].post_type).to.equal('deal_opened');
      expect((await get('/api/mesh/signals?type=nope')).status).to.equal(422);
      expect(
        (await svc.running.services.store.collection('posts').explain({ hidden: false, post_type: 'deal_opened' }, { sort: { seq: -1 }, hint: 'by_type' }))
          .index,
      ).to.equal('by_type');
      const mp = await get('/api/mesh/pulse');
      expect(mp.status).to.equal(200);
      expect(mp.body.days).to.equal(7);
      expect(mp.body.posts_by_type).to.include({ deal_opened: 1, intro_sent: 1 });
    });
  });
});
