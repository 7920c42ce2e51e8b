import { expect } from 'chai';
import { HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

type Agent = { agent_id: string; api_key: string };
const UNKNOWN = 'agt_nobody00000000000000';

describe('api: follow, trust stamps and bonds', () => {
  let svc: TestService;
  const follow = (x: Agent, id: string, method = 'POST') => svc.req(method, `/api/protocol/agents/${id}/follow`, { apiKey: x.api_key });
  const endorse = (x: Agent, id: string, capability: string) => svc.req('POST', `/api/agent/endorse/${id}`, { apiKey: x.api_key, body: { capability } });
  const bond = (x: Agent, id: string, verb = '', method = 'POST') => svc.req(method, `/api/agent/bonds/${id}${verb}`, { apiKey: x.api_key });
  const notifications = async (x: Agent) =>
    (await svc.req('GET', '/api/agent/notifications', { apiKey: x.api_key })).body.notifications as Array<{
      type: string;
      from_agent_id: string;
      data: Record<string, unknown>;
    }>;
  const profile = async (x: Agent) => (await svc.req('GET', `/api/protocol/agents/${x.agent_id}`)).body;
  const many = async (n: number) => {
    const out: Agent[] = [];
    for (let i = 0; i < n; i++) out.push(await svc.register());
    return out;
  };

  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe('follow', () => {
    it('follows and unfollows idempotently, with counts on both profiles', async () => {
      const [a, b] = await many(2);
      const r = await follow(a, b.agent_id);
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ agent_id: b.agent_id, following: true, changed: true, follower_count: 1 });
      const again = await follow(a, b.agent_id);
      expect(again.body).to.include({ changed: false, follower_count: 1 });
      expect((await profile(b)).follower_count).to.equal(1);
      expect((await profile(a)).following_count).to.equal(1);
      const un = await follow(a, b.agent_id, 'DELETE');
      expect(un.body).to.include({ following: false, changed: true, follower_count: 0 });
      expect((await follow(a, b.agent_id, 'DELETE')).body).to.include({ changed: false, follower_count: 0 });
      expect((await profile(a)).following_count).to.equal(0);
    });

    it('refuses self-follow with 400 and an unknown agent with 404; needs an API key', async () => {
      const [a] = await many(1);
      const self = await follow(a, a.agent_id);
      expect(self.status).to.equal(400);
      expect(self.body.code).to.equal('cannot_follow_self');
      const unknown = await follow(a, UNKNOWN);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('agent_not_found');
      expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/follow`)).status).to.equal(401);
      expect((await svc.req('GET', `/api/protocol/agents/${UNKNOWN}/followers`)).status).to.equal(404);
    });

    it('lists followers and following publicly, newest first, cursor-paged and index-served', async () => {
      const [target, ...fans] = await many(6);
      for (const f of fans) {
        await follow(f, target.agent_id);
        svc.clock.advance(1000);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
        const page = await svc.req('GET', `/api/protocol/agents/${target.agent_id}/followers${q}`);
        expect(page.status).to.equal(200);
        expect(page.body.follower_count).to.equal(5);
        seen.push(...page.body.items.map((i: { agent_id: string }) => i.agent_id));
        expect(page.body.items[0].name).to.match(/^Agent /);
        cursor = page.body.next_cursor;
        expect(page.body.has_more).to.equal(cursor !== null);
        pages++;
      } while (cursor);
      expect(pages).to.equal(3);
      expect(seen).to.deep.equal(fans.map((f) => f.agent_id).reverse());
      const following = await svc.req('GET', `/api/protocol/agents/${fans[0]?.agent_id}/following`);
      expect(following.body.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([target.agent_id]);
      expect(following.body).to.include({ following_count: 1, has_more: false, next_cursor: null });

      const bad = await svc.req('GET', `/api/protocol/agents/${target.agent_id}/followers?cursor=not*a*cursor`);
      expect(bad.status).to.equal(400);
      expect(bad.body.code).to.equal('invalid_cursor');

      const follows = svc.running.services.store.collection('follows');
      const plan = await follows.explain({ followed_id: target.agent_id, seq: { $lt: 1_000_000 } }, { sort: { seq: -1 }, limit: 3 });
      expect(plan.index).to.equal('by_followed');
      expect(plan.examined).to.be.at.most(3);
      expect((await follows.explain({ follower_id: target.agent_id }, { sort: { seq: -1 }, limit: 3 })).index).to.equal('by_follower');
    });
  });

  describe('trust stamps', () => {
    it('stamps a capability once per endorser, notifies the target, groups stamps with names, and refuses a 6th capability with 400', async () => {
      const [a, b, c] = await many(3);
      const r = await endorse(a, b.agent_id, 'Lead Gen');
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ capability: 'lead-gen', counted: true, capabilities_stamped: 1, credits_charged: 0 });
      const repeat = await endorse(a, b.agent_id, 'lead-gen');
      expect(repeat.status).to.equal(200);
      expect(repeat.body).to.include({ counted: false, capabilities_stamped: 1 });
      await endorse(c, b.agent_id, 'lead-gen');
      for (const cap of ['b2b-sales', 'founder-matching', 'intro-drafting', 'talent-matching'])
        expect((await endorse(a, b.agent_id, cap)).status).to.equal(200);
      const sixth = await endorse(a, b.agent_id, 'investor-connect');
      expect(sixth.status).to.equal(400);
      expect(sixth.body.code).to.equal('stamp_capability_limit');
      // A capability already stamped is still fine (not a 6th).
      expect((await endorse(a, b.agent_id, 'b2b-sales')).status).to.equal(200);

      const stamps = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/trust-stamps`);
      expect(stamps.status).to.equal(200);
      expect(stamps.body.total).to.equal(6);
      const lead = stamps.body.capabilities[0];
      expect(lead).to.include({ capability: 'lead-gen', count: 2 });
      expect(lead.stampers.map((x: { agent_id: string }) => x.agent_id)).to.deep.equal([a.agent_id, c.agent_id]);
      expect(lead.stampers[0].name).to.match(/^Agent /);
      expect(stamps.body.capabilities).to.have.length(5);

      const n = (await notifications(b)).filter((x) => x.type === 'trust_stamp');
      expect(n).to.have.length(6);
      expect(n.some((x) => x.from_agent_id === c.agent_id && x.data.capability === 'lead-gen')).to.equal(true);
      expect(
        (await svc.running.services.store.collection('trust_stamps').explain({ target_agent_id: b.agent_id }, { sort: { capability: 1, seq: 1 } })).index,
      ).to.equal('by_target');
    });

    it('refuses self-endorsement (400), an unknown agent (404) and a malformed capability (422)', async () => {
      const [a] = await many(1);
      const self = await endorse(a, a.agent_id, 'lead-gen');
      expect(self.status).to.equal(400);
      expect(self.body.code).to.equal('cannot_endorse_self');
      const unknown = await endorse(a, UNKNOWN, 'lead-gen');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('agent_not_found');
      expect((await endorse(a, UNKNOWN, '!!')).status).to.equal(422);
    });
  });

  describe('bonds', () => {
    it('request then accept makes a two-way bond, notifying both ways', async () => {
      const [a, b] = await many(2);
      const req = await bond(a, b.agent_id);
      expect(req.status).to.equal(200);
      expect(req.body).to.include({ status: 'outgoing', changed: true });
      expect((await bond(a, b.agent_id)).body).to.include({ status: 'outgoing', changed: false });
      const incoming = await svc.req('GET', '/api/agent/bonds?status=incoming', { apiKey: b.api_key });
      expect(incoming.body.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([a.agent_id]);
      expect((await notifications(b)).filter((x) => x.type === 'bond_request' && x.from_agent_id === a.agent_id)).to.have.length(1);

      const acc = await bond(b, a.agent_id, '/accept');
      expect(acc.status).to.equal(200);
      expect(acc.body).to.include({ status: 'active', changed: true });
      expect((await notifications(a)).filter((x) => x.type === 'bond_accept' && x.from_agent_id === b.agent_id)).to.have.length(1);
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const) {
        const list = await svc.req('GET', '/api/agent/bonds', { apiKey: x.api_key });
        expect(list.body.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([y.agent_id]);
        expect(list.body.counts).to.deep.equal({ active: 1, incoming: 0, outgoing: 0 });
      }
      const again = await bond(a, b.agent_id);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('already_bonded');
    });

    it('declines a request; only the requested agent can accept or decline', async () => {
      const [a, b] = await many(2);
      await bond(a, b.agent_id);
      const own = await bond(a, b.agent_id, '/accept');
      expect(own.status).to.equal(404);
      expect(own.body.code).to.equal('bond_request_not_found');
      const crossed = await bond(b, a.agent_id);
      expect(crossed.status).to.equal(409);
      expect(crossed.body.code).to.equal('bond_request_incoming');
      expect((await bond(b, a.agent_id, '/decline')).body).to.include({ status: 'declined' });
      expect((await svc.req('GET', '/api/agent/bonds?status=incoming', { apiKey: b.api_key })).body.items).to.deep.equal([]);
      expect((await bond(b, a.agent_id, '/decline')).status).to.equal(404);
    });

    it('removal is soft and starts a 24 h cooldown for the pair (injected clock)', async () => {
      const [a, b] = await many(2);
      await bond(a, b.agent_id);
      await bond(b, a.agent_id, '/accept');
      const removed = await bond(b, a.agent_id, '', 'DELETE');
      expect(removed.status).to.equal(200);
      expect(removed.body.status).to.equal('removed');
      expect((await svc.req('GET', `/api/agent/bonds/${b.agent_id}`, { apiKey: a.api_key })).body.status).to.equal('removed');
      expect((await svc.req('GET', '/api/agent/bonds', { apiKey: a.api_key })).body.items).to.deep.equal([]);
      svc.clock.advance(24 * HOUR - MINUTE);
      for (const [x, y] of [
        [a, b],
        [b, a],
      ] as const) {
        const early = await bond(x, y.agent_id);
        expect(early.status).to.equal(409);
        expect(early.body.code).to.equal('bond_cooldown');
        expect(early.body.retry_after).to.equal(60);
      }
      svc.clock.advance(MINUTE);
      expect((await bond(a, b.agent_id)).status).to.equal(200);
      expect((await bond(b, a.agent_id, '/accept')).body.status).to.equal('active');
      expect((await bond(a, b.agent_id, '', 'DELETE')).status).to.equal(200);
      expect((await bond(a, b.agent_id, '', 'DELETE')).status).to.equal(404);
    });

    it('refuses self-bonds (400) and unknown agents (404)', async () => {
      const [a] = await many(1);
      const self = await bond(a, a.agent_id);
      expect(self.status).to.equal(400);
      expect(self.body.code).to.equal('cannot_bond_self');
      const unknown = await bond(a, UNKNOWN);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('agent_not_found');
    });

    it('caps pending outgoing requests at 20 (409 bond_request_limit); an accepted one frees a slot', async () => {
      const [a, ...others] = await many(22);
      for (const o of others.slice(0, 20)) expect((await bond(a, o.agent_id)).status).to.equal(200);
      const last = others[20] as Agent;
      const over = await bond(a, last.agent_id);
      expect(over.status).to.equal(409);
      expect(over.body.code).to.equal('bond_request_limit');
      await bond(others[0] as Agent, a.agent_id, '/accept');
      expect((await bond(a, last.agent_id)).status).to.equal(200);
      const plan = await svc.running.services.store.collection('bonds').explain({ agent_id: a.agent_id, state: 'outgoing' });
      expect(plan.index).to.equal('by_agent_state');
    });

    it('holds the cap of 20 pending requests under 30 concurrent requests to 30 agents: 20 pending, 10 refused with 409 bond_request_limit', async () => {
      const [a, ...others] = await many(31);
      const answers = await Promise.all(others.map((o) => bond(a, o.agent_id)));
      const statuses = answers.map((r) => r.status);
      expect(
        statuses.filter((st) => st === 200),
        JSON.stringify(statuses),
      ).to.have.length(20);
      const refused = answers.filter((r) => r.status !== 200);
      expect(refused).to.have.length(10);
      for (const r of refused) expect(r.body).to.include({ code: 'bond_request_limit', limit: 20 });
      const outgoing = await svc.req('GET', '/api/agent/bonds?status=outgoing&limit=100', { apiKey: a.api_key });
      expect(outgoing.body.items, outgoing.text).to.have.length(20);
      expect(outgoing.body.counts.outgoing).to.equal(20);
      expect(await svc.running.services.store.collection('bonds').count({ agent_id: a.agent_id, state: 'outgoing' })).to.equal(20);
    });

    it('caps bonds at 500 per agent (409 bond_limit), for the requester and for the accepter', async function () {
      this.timeout(120_000);
      const [hub, ...others] = await many(503);
      for (const o of others.slice(0, 500)) {
        await bond(o, hub.agent_id);
        expect((await bond(hub, o.agent_id, '/accept')).status).to.equal(200);
      }
      expect((await svc.req('GET', '/api/agent/bonds?limit=1', { apiKey: hub.api_key })).body.counts.active).to.equal(500);
      const [x, y] = others.slice(500) as [Agent, Agent];
      const asked = await bond(hub, x.agent_id);
      expect(asked.status).to.equal(409);
      expect(asked.body.code).to.equal('bond_limit');
      const toFull = await bond(y, hub.agent_id);
      expect(toFull.status).to.equal(409);
      expect(toFull.body.code).to.equal('bond_limit');
    });
  });
});

describe('api: endorse rate limit (RATE_LIMIT_SCALE=1)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  it('allows 20 endorsements per minute, the 21st is 429 until the window moves on', async () => {
    const a = await svc.register();
    const b = await svc.register();
    for (let i = 0; i < 20; i++)
      expect((await svc.req('POST', `/api/agent/endorse/${b.agent_id}`, { apiKey: a.api_key, body: { capability: 'lead-gen' } })).status).to.equal(200);
    const over = await svc.req('POST', `/api/agent/endorse/${b.agent_id}`, { apiKey: a.api_key, body: { capability: 'lead-gen' } });
    expect(over.status).to.equal(429);
    expect(over.body.code).to.equal('rate_limited');
    svc.clock.advance(MINUTE);
    expect((await svc.req('POST', `/api/agent/endorse/${b.agent_id}`, { apiKey: a.api_key, body: { capability: 'lead-gen' } })).status).to.equal(200);
    const stamps = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/trust-stamps`);
    expect(stamps.body.total).to.equal(1);
  });
});
