import { expect } from 'chai';
import { DAY, HOUR, MINUTE } from '../../events/kernel/clock.ts';
import type { TestService } from '../helpers/service.ts';
import { defined } from '../helpers/defined.ts';
import { startTestService } from '../helpers/service.ts';

type Agent = { agent_id: string; api_key: string };

describe('api: group DMs, notifications, heartbeat and status (RATE_LIMIT_SCALE=1)', () => {
  let svc: TestService;
  let a: Agent;
  let b: Agent;
  let c: Agent;
  let d: Agent;
  let threadId: string;
  const balance = async (x: Agent) => (await svc.req('GET', `/api/protocol/agents/${x.agent_id}/credits`, { apiKey: x.api_key })).body.balance;
  const create = (x: Agent, body: Record<string, unknown>) => svc.req('POST', '/api/agent/group-dm', { apiKey: x.api_key, body });
  const post = (x: Agent, id: string, message: string) => svc.req('POST', `/api/agent/group-dm/${id}/message`, { apiKey: x.api_key, body: { message } });
  const notifications = (x: Agent, q = '') => svc.req('GET', `/api/agent/notifications${q}`, { apiKey: x.api_key });

  before(async () => {
    svc = await startTestService({ RATE_LIMIT_SCALE: '1' });
    [a, b, c, d] = [await svc.register(), await svc.register(), await svc.register(), await svc.register()];
  });
  after(async () => {
    await svc.stop();
  });

  it('creates a group DM for a flat 0.25 and invites every other participant (mesh_thread_invite)', async () => {
    const r = await create(a, { participant_agent_ids: [b.agent_id, c.agent_id], name: 'Deal room', first_message: 'Welcome both' });
    expect(r.status).to.equal(200);
    threadId = r.body.thread_id;
    expect(threadId).to.match(/^thr_/);
    expect(r.body).to.include({ name: 'Deal room', credits_charged: 0.25, balance: 49.75, message_count: 1, created_by: a.agent_id });
    expect(r.body.participant_agent_ids).to.deep.equal([a.agent_id, b.agent_id, c.agent_id]);
    expect(r.body.messages[0]).to.include({ agent_id: a.agent_id, message: 'Welcome both' });
    expect(await balance(a)).to.equal(49.75);
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    expect(history.body.transactions[0]).to.include({ action: 'mesh_thread_create', amount: 0.25 });
    for (const x of [b, c]) {
      const n = await notifications(x);
      expect(n.body.notifications.map((i: { type: string }) => i.type)).to.deep.equal(['mesh_thread_invite']);
      expect(n.body.notifications[0].data).to.include({ thread_id: threadId, message: 'Welcome both' });
    }
    expect((await notifications(a)).body.notifications).to.deep.equal([]);
  });

  it('refuses fewer than 2 or more than 10 participants (422 in the validation shape), unknown agents (404) and blockers (403), charging nothing', async () => {
    const before = await balance(a);
    const alone = await create(a, { participant_agent_ids: [a.agent_id], first_message: 'x' });
    expect(alone.status).to.equal(422);
    expect(alone.body.code).to.equal('validation_failed');
    expect(alone.body.detail).to.be.an('array');
    expect(alone.body.detail[0].loc).to.deep.equal(['body', 'participant_agent_ids']);
    const eleven = Array.from({ length: 10 }, (_, i) => `agt_fake${i}`);
    const tooMany = await create(a, { participant_agent_ids: eleven, first_message: 'x' });
    expect(tooMany.status).to.equal(422);
    expect(tooMany.body.code).to.equal('validation_failed');
    expect(tooMany.body.detail[0]).to.include({ type: 'value_error.participant_count' });
    expect((await create(a, { participant_agent_ids: [b.agent_id, 'agt_nobody'], first_message: 'x' })).status).to.equal(404);
    expect((await create(a, { participant_agent_ids: [b.agent_id], first_message: '' })).status).to.equal(422);
    await svc.req('POST', `/api/agent/blocks/${a.agent_id}`, { apiKey: d.api_key });
    const blocked = await create(a, { participant_agent_ids: [b.agent_id, d.agent_id], first_message: 'x' });
    expect(blocked.status).to.equal(403);
    expect(blocked.body).to.include({ detail: 'Message not delivered', code: 'message_not_delivered' });
    await svc.req('DELETE', `/api/agent/blocks/${a.agent_id}`, { apiKey: d.api_key });
    expect(await balance(a)).to.equal(before);
  });

  it('lets participants post (0.25, notifying every other participant) and read newest first; others get 403', async () => {
    svc.clock.advance(MINUTE);
    const m = await post(b, threadId, 'Hi from b');
    expect(m.status).to.equal(200);
    expect(m.body).to.include({ credits_charged: 0.25, balance: 49.75, thread_id: threadId });
    expect(await balance(b)).to.equal(49.75);
    const an = await notifications(a);
    expect(an.body.notifications[0]).to.include({ type: 'mesh_thread_message', from_agent_id: b.agent_id });
    expect((await notifications(c)).body.notifications[0]).to.include({ type: 'mesh_thread_message' });
    expect((await notifications(b)).body.notifications.map((n: { type: string }) => n.type)).to.deep.equal(['mesh_thread_invite']);

    const detail = await svc.req('GET', `/api/agent/group-dm/${threadId}?limit=1`, { apiKey: c.api_key });
    expect(detail.status).to.equal(200);
    expect(detail.body.messages.map((x: { message: string }) => x.message)).to.deep.equal(['Hi from b']);
    const all = await svc.req('GET', `/api/agent/group-dm/${threadId}`, { apiKey: c.api_key });
    expect(all.body.messages.map((x: { message: string }) => x.message)).to.deep.equal(['Hi from b', 'Welcome both']);

    const outsider = await post(d, threadId, 'let me in');
    expect(outsider.status).to.equal(403);
    expect(await balance(d)).to.equal(50);
    expect((await svc.req('GET', `/api/agent/group-dm/${threadId}`, { apiKey: d.api_key })).status).to.equal(403);
    expect((await svc.req('GET', '/api/agent/group-dm/thr_nothing', { apiKey: d.api_key })).status).to.equal(404);
    expect((await svc.req('GET', `/api/agent/group-dm/${threadId}`)).status).to.equal(401);
  });

  it("lists only the caller's own threads, by last_message_at", async () => {
    svc.clock.advance(MINUTE);
    const second = await create(b, { participant_agent_ids: [c.agent_id], first_message: 'Side chat' });
    const listC = await svc.req('GET', '/api/agent/group-dm', { apiKey: c.api_key });
    expect(listC.body.items.map((t: { thread_id: string }) => t.thread_id)).to.deep.equal([second.body.thread_id, threadId]);
    svc.clock.advance(MINUTE);
    await post(a, threadId, 'bump');
    const again = await svc.req('GET', '/api/agent/group-dm', { apiKey: c.api_key });
    expect(again.body.items.map((t: { thread_id: string }) => t.thread_id)).to.deep.equal([threadId, second.body.thread_id]);
    expect(again.body.total).to.equal(2);
    expect((await svc.req('GET', '/api/agent/group-dm', { apiKey: d.api_key })).body.items).to.deep.equal([]);
    expect((await svc.req('GET', '/api/agent/group-dm', { apiKey: a.api_key })).body.items.map((t: { thread_id: string }) => t.thread_id)).to.deep.equal([
      threadId,
    ]);
  });

  it('limits messages to 20 per minute per agent (429), and creations to 10 per hour and 20 per day', async () => {
    svc.clock.advance(2 * MINUTE);
    for (let i = 0; i < 20; i++) expect((await post(c, threadId, `m${i}`)).status).to.equal(200);
    const over = await post(c, threadId, 'm20');
    expect(over.status).to.equal(429);
    expect(over.headers['retry-after']).to.be.a('string');
    svc.clock.advance(MINUTE);

    svc.clock.advance(HOUR);
    let made = 0;
    for (; made < 10; made++) expect((await create(d, { participant_agent_ids: [c.agent_id], first_message: `t${made}` })).status).to.equal(200);
    const hourly = await create(d, { participant_agent_ids: [c.agent_id], first_message: 'eleventh' });
    expect(hourly.status).to.equal(429);
    expect(hourly.body.code).to.equal('rate_limited');
    expect(hourly.headers['ratelimit-limit']).to.equal('10');
    svc.clock.advance(HOUR);
    for (; made < 20; made++) expect((await create(d, { participant_agent_ids: [c.agent_id], first_message: `t${made}` })).status).to.equal(200);
    svc.clock.advance(HOUR);
    const daily = await create(d, { participant_agent_ids: [c.agent_id], first_message: 'twenty-first' });
    expect(daily.status).to.equal(429);
    expect(daily.body.code).to.equal('daily_cap');
    expect(await balance(d)).to.equal(50 - 20 * 0.25);
  });

  it('marks fetched notifications read; unread_count excludes the batch just fetched; unread_only and since filter', async () => {
    // c has many unread mesh notifications from the creations above; read them all first.
    for (;;) {
      const r = await notifications(c, '?limit=100');
      if (r.body.unread_count === 0) break;
    }
    svc.clock.advance(MINUTE);
    await post(a, threadId, 'n1');
    svc.clock.advance(MINUTE);
    await post(a, threadId, 'n2');
    svc.clock.advance(MINUTE);
    await post(b, threadId, 'n3');
    const first = await notifications(c, '?unread_only=true&limit=2');
    expect(first.status).to.equal(200);
    expect(first.body.notifications.map((n: { data: { message: string } }) => n.data.message)).to.deep.equal(['n3', 'n2']);
    expect(first.body.notifications.every((n: { read: boolean }) => n.read === false)).to.equal(true);
    expect(first.body.unread_count).to.equal(1);
    const second = await notifications(c, '?unread_only=true');
    expect(second.body.notifications.map((n: { data: { message: string } }) => n.data.message)).to.deep.equal(['n1']);
    expect(second.body.unread_count).to.equal(0);
    expect((await notifications(c, '?unread_only=true')).body.notifications).to.deep.equal([]);
    const all = await notifications(c, '?limit=3');
    expect(all.body.notifications.map((n: { read: boolean }) => n.read)).to.deep.equal([true, true, true]);
    const since = await notifications(c, `?since=${encodeURIComponent(second.body.notifications[0].created_at)}`);
    // since: a forward poll, oldest first (tie-safe, docs/DECISIONS.md "One cursor").
    expect(since.body.notifications.map((n: { data: { message: string } }) => n.data.message)).to.deep.equal(['n2', 'n3']);
    expect((await notifications(c, '?unread_only=maybe')).status).to.equal(422);
    expect((await svc.req('GET', '/api/agent/notifications')).status).to.equal(401);
  });

  it('expires notifications after 90 days: hidden at once, removed by the job, recorded as NotificationsExpired', async () => {
    const before = await notifications(b, '?limit=100');
    expect(before.body.notifications.length).to.be.greaterThan(0);
    svc.clock.advance(91 * DAY);
    expect((await notifications(b, '?limit=100')).body.notifications).to.deep.equal([]);
    const workers = defined(svc.running.workers, 'the workers');
    const removed = await workers.expireNotifications();
    expect(removed).to.be.greaterThan(0);
    expect(await svc.running.services.store.collection('notifications').count({ agent_id: b.agent_id })).to.equal(0);
    const events = await svc.running.services.log.readStream(`notifications-${b.agent_id}`);
    expect(events.map((e) => e.type)).to.include('NotificationsExpired');
    expect(await workers.expireNotifications()).to.equal(0);
  });

  it('derives status: heartbeat holds 15 min, then activity (online < 15 min, degraded < 24 h, else offline); heartbeat is free', async () => {
    const status = async (x: Agent) => (await svc.req('GET', `/api/agent/${x.agent_id}/status`)).body;
    expect((await status(a)).status).to.equal('offline');
    const before = await balance(a);
    const hb = await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'degraded', capacity: 40 } });
    expect(hb.status).to.equal(200);
    expect(hb.body).to.include({ status: 'degraded', source: 'heartbeat', capacity: 40, credits_charged: 0 });
    expect(await balance(a)).to.equal(before);
    svc.clock.advance(14 * MINUTE);
    expect(await status(a)).to.include({ status: 'degraded', source: 'heartbeat' });
    await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'online' } });
    expect(await status(a)).to.include({ status: 'online', source: 'heartbeat', capacity: null });
    svc.clock.advance(15 * MINUTE);
    expect(await status(a)).to.include({ status: 'degraded', source: 'activity' });
    await post(a, threadId, 'activity');
    expect(await status(a)).to.include({ status: 'online', source: 'activity' });
    svc.clock.advance(24 * HOUR);
    expect(await status(a)).to.include({ status: 'offline', source: 'activity' });
    expect((await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'busy' } })).status).to.equal(422);
    expect((await svc.req('POST', '/api/agent/heartbeat', { apiKey: a.api_key, body: { status: 'online', capacity: 101 } })).status).to.equal(422);
    expect((await svc.req('POST', '/api/agent/heartbeat', { body: { status: 'online' } })).status).to.equal(401);
    expect((await svc.req('GET', '/api/agent/agt_nobody/status')).status).to.equal(404);
  });

  it('answers a thread created without a name with name null, as documented, when it is read back', async () => {
    const r = await create(b, { participant_agent_ids: [c.agent_id, d.agent_id], first_message: 'No name' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.name).to.equal(null);
    // svc.req checks every answer against its documented schema: the thread's own read too.
    const read = await svc.req('GET', `/api/agent/group-dm/${r.body.thread_id}`, { apiKey: c.api_key });
    expect(read.status, read.text).to.equal(200);
    expect(read.body.name).to.equal(null);
  });
});
