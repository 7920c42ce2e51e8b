import { expect } from 'chai';
import { Ajv } from 'ajv';
import { eventSchemas } from '../../events/catalogue.ts';
import { HOUR } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

type Agent = { agent_id: string; api_key: string };

describe('api: direct messages, blocks and the inbox (exact caps, RATE_LIMIT_SCALE=1)', () => {
  let svc: TestService;
  const agents: Agent[] = [];

  /** Registrations are limited to 5 per hour per address: move the clock on between batches. */
  async function registerMany(n: number): Promise<Agent[]> {
    const out: Agent[] = [];
    for (let i = 0; i < n; i++) {
      if (agents.length > 0 && agents.length % 5 === 0) svc.clock.advance(HOUR + 1000);
      const a = await svc.register();
      agents.push(a);
      out.push(a);
    }
    return out;
  }
  const dm = (from: Agent, body: Record<string, unknown>, path = from.agent_id) =>
    svc.req('POST', `/api/protocol/agents/${path}/dm`, { apiKey: from.api_key, body });
  const balance = async (a: Agent) => (await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key })).body.balance;
  const streamTypes = async (a: Agent) => (await svc.running.services.log.readStream(`agent-${a.agent_id}`)).map((e) => e.type);

  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
  });
  after(async () => {
    await svc.stop();
  });

  it('locks DMs of an unclaimed agent for 1 hour after registration, charging nothing', async () => {
    svc.clock.advance(2 * HOUR);
    const [a, b] = await registerMany(2);
    const locked = await dm(a, { to_agent_id: b.agent_id, message: 'hello' });
    expect(locked.status).to.equal(403);
    expect(locked.body.code).to.equal('dm_locked');
    expect(locked.body.retry_after).to.be.within(3500, 3600);
    expect(await balance(a)).to.equal(50);
    svc.clock.advance(HOUR - 60_000);
    expect((await dm(a, { to_agent_id: b.agent_id, message: 'hello' })).status).to.equal(403);
    svc.clock.advance(60_000);
    const ok = await dm(a, { to_agent_id: b.agent_id, message: 'hello' });
    expect(ok.status).to.equal(200);
  });

  it('charges exactly 0.25 per DM and delivers new_dm to the recipient inbox with the documented payload', async () => {
    const [a, b] = await registerMany(2);
    svc.clock.advance(HOUR);
    const r = await dm(a, { to_agent_id: b.agent_id, message: 'Intro: we both do lead-gen' });
    expect(r.status).to.equal(200);
    expect(r.body.dm_id).to.match(/^dm_/);
    expect(r.body).to.include({ from_agent_id: a.agent_id, to_agent_id: b.agent_id, credits_charged: 0.25, balance: 49.75, status: 'delivered' });
    expect(await balance(a)).to.equal(49.75);
    expect(await balance(b)).to.equal(50);
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    expect(history.body.transactions[0]).to.include({ type: 'debit', action: 'dm', amount: 0.25, balance_after: 49.75 });
    expect(history.body.transactions[0].reference).to.deep.equal({ dm_id: r.body.dm_id });

    const inbox = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
    expect(inbox.status).to.equal(200);
    expect(inbox.body.events).to.have.length(1);
    const [e] = inbox.body.events;
    expect(e).to.include({ event: 'new_dm', created_at: r.body.created_at, delivered_via: 'inbox' });
    expect(e.payload).to.deep.equal({
      from_agent_id: a.agent_id,
      from_agent_name: r.body.from_agent_name,
      message: 'Intro: we both do lead-gen',
      dm_id: r.body.dm_id,
    });
    const matches = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/matches`, { apiKey: b.api_key });
    expect(matches.status).to.equal(200);
    expect(matches.body.events).to.deep.equal([]);

    const since = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox?since=${encodeURIComponent(r.body.created_at)}`, { apiKey: b.api_key });
    expect(since.body.events).to.deep.equal([]);
    const bad = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox?since=yesterday`, { apiKey: b.api_key });
    expect(bad.status).to.equal(422);
  });

  it('refuses the 4th DM to the same recipient within 24 h with 429 pair_limit, charging and delivering nothing', async () => {
    const [a, b] = await registerMany(2);
    svc.clock.advance(HOUR);
    for (let i = 0; i < 3; i++) expect((await dm(a, { to_agent_id: b.agent_id, message: `m${i}` })).status).to.equal(200);
    const before = await streamTypes(a);
    const fourth = await dm(a, { to_agent_id: b.agent_id, message: 'm3' });
    expect(fourth.status).to.equal(429);
    expect(fourth.body.code).to.equal('pair_limit');
    expect(fourth.headers['retry-after']).to.equal(String(24 * 3600));
    expect(fourth.headers['ratelimit-limit']).to.equal('3');
    expect(fourth.headers['ratelimit-remaining']).to.equal('0');
    expect(await balance(a)).to.equal(49.25);
    expect(await streamTypes(a)).to.deep.equal(before);
    const inbox = await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key });
    expect(inbox.body.events).to.have.length(3);
    // Another recipient is not affected; the window rolls: 24 h after the first DM the pair may talk again.
    const [c] = await registerMany(1);
    expect((await dm(a, { to_agent_id: c.agent_id, message: 'other' })).status).to.equal(200);
    svc.clock.advance(24 * HOUR);
    expect((await dm(a, { to_agent_id: b.agent_id, message: 'next day' })).status).to.equal(200);
  });

  it('refuses the 51st DM in 24 h with 429 daily_cap, after exactly 50 x 0.25 = 12.5 credits', async () => {
    const [sender] = await registerMany(1);
    const recipients = await registerMany(17);
    svc.clock.advance(HOUR);
    const start = await balance(sender);
    let sent = 0;
    for (const r of recipients) {
      for (let i = 0; i < 3 && sent < 50; i++, sent++) {
        const res = await dm(sender, { to_agent_id: r.agent_id, message: `n${sent}` });
        expect(res.status, res.text).to.equal(200);
      }
    }
    expect(await balance(sender)).to.equal(start - 12.5);
    const over = await dm(sender, { to_agent_id: recipients[16].agent_id, message: 'one too many' });
    expect(over.status).to.equal(429);
    expect(over.body.code).to.equal('daily_cap');
    expect(over.headers['ratelimit-limit']).to.equal('50');
    expect(await balance(sender)).to.equal(start - 12.5);
  });

  it('gives a blocked sender 403 "Message not delivered", appends and charges nothing; unblocking restores delivery', async () => {
    const [a, b] = await registerMany(2);
    svc.clock.advance(HOUR);
    const blocked = await svc.req('POST', `/api/agent/blocks/${a.agent_id}`, { apiKey: b.api_key });
    expect(blocked.status).to.equal(200);
    const list = await svc.req('GET', '/api/agent/blocks', { apiKey: b.api_key });
    expect(list.body.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([a.agent_id]);
    const before = await streamTypes(a);
    const r = await dm(a, { to_agent_id: b.agent_id, message: 'let me in' });
    expect(r.status).to.equal(403);
    expect(r.body).to.include({ detail: 'Message not delivered', code: 'message_not_delivered' });
    expect(await balance(a)).to.equal(50);
    expect(await streamTypes(a)).to.deep.equal(before);
    expect((await svc.req('GET', `/api/protocol/agents/${b.agent_id}/inbox`, { apiKey: b.api_key })).body.events).to.deep.equal([]);
    expect((await svc.req('DELETE', `/api/agent/blocks/${a.agent_id}`, { apiKey: b.api_key })).status).to.equal(200);
    expect((await svc.req('GET', '/api/agent/blocks', { apiKey: b.api_key })).body.items).to.deep.equal([]);
    expect((await dm(a, { to_agent_id: b.agent_id, message: 'thanks' })).status).to.equal(200);
    expect(await balance(a)).to.equal(49.75);
  });

  it('keeps a DM to an e-mail address that is no member yet (charged), and 404s an unknown user id without charging', async () => {
    const [a] = await registerMany(1);
    svc.clock.advance(HOUR);
    const r = await dm(a, { to_email: 'New.Person+x@Example.com', message: 'Welcome aboard' });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ to_email: 'new.person@example.com', to_agent_id: null, status: 'stored_for_member', balance: 49.75 });
    const stored = await svc.running.services.store.collection('member_dms').find({ to_email: 'new.person@example.com' });
    expect(stored.map((d) => d._id)).to.deep.equal([r.body.dm_id]);
    const unknown = await dm(a, { to_user_id: 'usr_nobody', message: 'hi' });
    expect(unknown.status).to.equal(404);
    expect(await balance(a)).to.equal(49.75);
  });

  it('validates the body: exactly one target, message 1-1000 chars, not to oneself', async () => {
    const [a, b] = await registerMany(2);
    svc.clock.advance(HOUR);
    expect((await dm(a, { message: 'x' })).status).to.equal(422);
    expect((await dm(a, { message: 'x', to_agent_id: b.agent_id, to_email: 'x@example.com' })).status).to.equal(422);
    expect((await dm(a, { message: 'x'.repeat(1001), to_agent_id: b.agent_id })).status).to.equal(422);
    expect((await dm(a, { message: 'x', to_agent_id: b.agent_id, extra: 1 })).status).to.equal(422);
    expect((await dm(a, { message: 'x', to_agent_id: a.agent_id })).status).to.equal(400);
    expect((await dm(a, { message: 'x', to_agent_id: 'agt_missing' })).status).to.equal(404);
    expect(await balance(a)).to.equal(50);
  });

  it('lets only the agent itself send from its id and read its inbox and matches (403 otherwise, 401 without a key)', async () => {
    const [a, b] = await registerMany(2);
    svc.clock.advance(HOUR);
    expect((await dm(a, { to_agent_id: b.agent_id, message: 'x' }, b.agent_id)).status).to.equal(403);
    for (const path of ['inbox', 'matches']) {
      expect((await svc.req('GET', `/api/protocol/agents/${b.agent_id}/${path}`, { apiKey: a.api_key })).status).to.equal(403);
      expect((await svc.req('GET', `/api/protocol/agents/${b.agent_id}/${path}`)).status).to.equal(401);
    }
    expect((await svc.req('GET', '/api/agent/blocks')).status).to.equal(401);
  });

  it('writes only messaging events that match their JSON Schema', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 });
    const types = new Set(events.map((e) => e.type));
    expect(types).to.include.members(['DirectMessageSent', 'AgentBlocked', 'AgentUnblocked']);
    for (const e of events) {
      expect(ajv.validate(eventSchemas[e.type], e.data), `${e.type}: ${ajv.errorsText()}`).to.equal(true);
    }
  });
});
