import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { DomainEvent } from '../../events/catalogue.ts';
import { schemaVersionOf } from '../../events/upcasters.ts';
import { afterFilter, CURSOR_ORDER, decodeCursor } from '../../queries/cursor.ts';
import {
  directMessageSent,
  matchingRunCompleted,
  meshThreadCreated,
  meshThreadMessagePosted,
  monthlyCreditsGranted,
  webhookDeliveryAttempted,
} from '../fixtures/events.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

/**
 * The one cursor (docs/DECISIONS.md "One cursor"): a poller that follows `next_cursor` sees every
 * item exactly once, however many share a millisecond or an event. The events are appended to the
 * log directly (10,000 through the API would take minutes); every read goes through HTTP.
 */
describe('api: cursor paging (inbox, notifications, credit history)', function () {
  this.timeout(600_000);
  let svc: TestService;
  let target: { agent_id: string; api_key: string };

  before(async () => {
    svc = await startTestService();
    target = await svc.register();
  });
  after(() => svc.stop());

  let tick = Date.parse('2026-03-11T00:00:00.000Z');
  /** Appends `events` (one stream each), all at the same millisecond, and waits for the read models. */
  async function burst(events: DomainEvent[], occurredAt: string): Promise<void> {
    const { log, runner } = svc.running.services;
    let position = 0;
    for (const e of events) {
      const r = await log.append(
        `test-${randomUUID()}`,
        [
          {
            id: randomUUID(),
            type: e.type,
            data: e.data,
            metadata: {
              actor: null,
              request_id: null,
              correlation_id: null,
              causation_id: null,
              occurred_at: occurredAt,
              schema_version: schemaVersionOf(e.type),
            },
          },
        ],
        'no_stream',
      );
      position = r.position;
    }
    await runner.waitFor(position, 60_000);
  }

  /**
   * Writes `total` inbox entries for the target in bursts of up to 50 per millisecond: DMs (one
   * entry per event) and matching runs whose several `new_match` entries share one event.
   */
  let written = 0;
  async function writeInbox(total: number): Promise<void> {
    let burstNo = 0;
    while (total > 0) {
      const at = new Date(tick++).toISOString();
      const size = Math.min(total, [50, 1, 17, 50, 3, 49][burstNo++ % 6]);
      const events: DomainEvent[] = [];
      let inBurst = 0;
      while (inBurst < size) {
        const n = written + inBurst;
        if (n % 7 === 0 && size - inBurst >= 5) {
          const matches = [1, 2, 3, 4, 5].map((i) => ({ agent_id: `agt_m${n}_${i}`, name: `M${i}`, they_give: ['a'], they_ask: ['b'], score: 1 }));
          events.push(matchingRunCompleted({ run_id: `run_${n}`, agent_id: target.agent_id, matches, completed_at: at }));
          inBurst += 5;
        } else {
          events.push(directMessageSent({ dm_id: `dm_${n}`, to_agent_id: target.agent_id, message: `m${n}`, sent_at: at }));
          inBurst += 1;
        }
      }
      written += size;
      total -= size;
      await burst(events, at);
    }
  }

  const inbox = (query: string) => svc.req('GET', `/api/protocol/agents/${target.agent_id}/inbox${query}`, { apiKey: target.api_key });

  it('a poller following next_cursor over 10,000 inbox entries in bursts of up to 50 per millisecond sees each exactly once', async () => {
    const seen = new Map<string, number>();
    let cursor = '0';
    const drain = async (limit: number) => {
      for (;;) {
        const r = await inbox(`?after=${cursor}&limit=${limit}`);
        expect(r.status).to.equal(200);
        for (const e of r.body.events as Array<{ id: string; cursor: string }>) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
        expect(r.body.events.length).to.be.at.most(limit);
        if (r.body.events.length) expect(r.body.next_cursor).to.equal(r.body.events.at(-1).cursor);
        cursor = r.body.next_cursor;
        if (!r.body.has_more) return;
      }
    };
    // Polls catch up between writes, then again after the last burst, with page sizes that cut bursts.
    for (const [chunk, limit] of [
      [2_500, 50],
      [2_500, 7],
      [2_500, 100],
      [2_500, 33],
    ] as const) {
      await writeInbox(chunk);
      await drain(limit);
    }
    expect(written).to.equal(10_000);
    expect(seen.size).to.equal(10_000);
    expect([...seen.values()].every((n) => n === 1)).to.equal(true);
    // At the head: an empty page that keeps the cursor.
    const idle = await inbox(`?after=${cursor}`);
    expect(idle.body.events).to.deep.equal([]);
    expect(idle.body.next_cursor).to.equal(cursor);
    expect(idle.body.has_more).to.equal(false);
  });

  it('serves the cursor and since pages from the read-model indexes, examining little more than the page', async () => {
    const coll = svc.running.services.store.collection('inbox_events');
    const middle = (await inbox('?limit=100')).body.events.at(-1) as { cursor: string; created_at: string };
    const cursor = decodeCursor(middle.cursor);
    if (!cursor) throw new Error('no cursor');
    const after = await coll.explain(afterFilter({ agent_id: target.agent_id }, cursor), { sort: CURSOR_ORDER, limit: 51 });
    expect(after.index).to.equal('by_agent');
    expect(after.examined).to.be.at.most(51 + 50);
    const byEvent = await coll.explain(afterFilter({ agent_id: target.agent_id, event: 'new_match' }, cursor), { sort: CURSOR_ORDER, limit: 51 });
    expect(byEvent.index).to.equal('by_agent_event');
    expect(byEvent.examined).to.be.at.most(51 + 50);
    const since = await coll.explain(
      { agent_id: target.agent_id, created_at: { $gt: middle.created_at } },
      { sort: { created_at: 1, seq: 1, _id: 1 }, limit: 41 },
    );
    expect(since.index).to.equal('by_agent_time');
    expect(since.examined).to.be.at.most(41);
  });

  it('since (the last created_at seen) never skips entries of the same millisecond (regression: limit=1 lost the 2nd and 3rd new_match)', async () => {
    const other = await svc.register();
    const at = new Date(tick++).toISOString();
    const matches = [1, 2, 3].map((i) => ({ agent_id: `agt_tie_${i}`, name: `T${i}`, they_give: ['a'], they_ask: ['b'], score: 1 }));
    await burst([matchingRunCompleted({ run_id: 'run_tie', agent_id: other.agent_id, matches, completed_at: at })], at);
    const got: string[] = [];
    let since = '2026-01-01T00:00:00.000Z';
    for (let i = 0; i < 5; i++) {
      const r = await svc.req('GET', `/api/protocol/agents/${other.agent_id}/inbox?since=${encodeURIComponent(since)}&limit=1`, { apiKey: other.api_key });
      expect(r.status).to.equal(200);
      for (const e of r.body.events as Array<{ id: string; created_at: string }>) {
        got.push(e.id);
        since = e.created_at;
      }
    }
    expect(got).to.have.length(3);
    expect(new Set(got).size).to.equal(3);
  });

  it('a since poller over the 10,000 entries sees each exactly once too', async () => {
    const seen = new Set<string>();
    let since = '2026-01-01T00:00:00.000Z';
    let dup = 0;
    for (;;) {
      const r = await inbox(`?since=${encodeURIComponent(since)}&limit=40`);
      expect(r.status).to.equal(200);
      for (const e of r.body.events as Array<{ id: string; created_at: string }>) {
        if (seen.has(e.id)) dup++;
        seen.add(e.id);
        since = e.created_at;
      }
      if (!r.body.has_more) break;
    }
    expect(dup).to.equal(0);
    expect(seen.size).to.equal(10_000);
  });

  it('answers 400 invalid_cursor for a malformed cursor, on every cursor-paged list', async () => {
    for (const bad of ['not-a-cursor!', 'abc', Buffer.from('[1]').toString('base64url'), Buffer.from('[-1,"x"]').toString('base64url')]) {
      const r = await inbox(`?after=${encodeURIComponent(bad)}`);
      expect(r.status).to.equal(400);
      expect(r.body.code).to.equal('invalid_cursor');
    }
    const paths = [
      `/api/protocol/agents/${target.agent_id}/credits/history`,
      '/api/agent/notifications',
      '/api/agent/a2a/inbox',
      '/api/feed/posts',
      '/api/agent/posts',
      `/api/protocol/agents/${target.agent_id}/matches`,
    ];
    for (const p of paths) {
      const r = await svc.req('GET', `${p}?after=zz`, { apiKey: target.api_key });
      expect(r.status, p).to.equal(400);
      expect(r.body.code, p).to.equal('invalid_cursor');
    }
  });

  it('the newest page names the cursor to poll on from (poll_cursor): nothing is missed after it; its next_cursor leads to older entries', async () => {
    const head = await inbox('?limit=5');
    expect(head.body.events).to.have.length(5);
    expect(head.body.poll_cursor).to.equal(head.body.events[0].cursor);
    expect(head.body.has_more).to.equal(true);
    await writeInbox(3);
    const next = await inbox(`?after=${head.body.poll_cursor}`);
    expect(next.body.events).to.have.length(3);
    expect(next.body.has_more).to.equal(false);
    // next_cursor continues newest first, before the page's last entry, unaffected by the 3 new ones.
    const older = await inbox(`?after=${head.body.next_cursor}&limit=5`);
    expect(older.body.events).to.have.length(5);
    expect(older.body.events[0].id).to.not.be.oneOf(head.body.events.map((e: { id: string }) => e.id));
    expect(older.body.events[0].cursor < head.body.events[4].cursor || older.body.events[0].created_at <= head.body.events[4].created_at).to.equal(true);
  });

  it('notifications: a poller following next_cursor over 2,000 notifications in bursts sees each exactly once', async () => {
    const reader = await svc.register();
    let n = 0;
    const thread = 'thr_cursor';
    for (let b = 0; n < 2_000; b++) {
      const at = new Date(tick++).toISOString();
      const size = Math.min(2_000 - n, [50, 13, 1, 36][b % 4]);
      const events: DomainEvent[] = [];
      for (let i = 0; i < size; i++, n++) {
        events.push(
          meshThreadMessagePosted({
            thread_id: thread,
            message_id: `msg_c${n}`,
            agent_id: target.agent_id,
            participant_agent_ids: [target.agent_id, reader.agent_id],
            message: `n${n}`,
            posted_at: at,
          }),
        );
      }
      await burst(events, at);
    }
    const seen = new Map<string, number>();
    let cursor = '0';
    for (;;) {
      const r = await svc.req('GET', `/api/agent/notifications?after=${cursor}&limit=37`, { apiKey: reader.api_key });
      expect(r.status).to.equal(200);
      for (const x of r.body.notifications as Array<{ notification_id: string }>) seen.set(x.notification_id, (seen.get(x.notification_id) ?? 0) + 1);
      cursor = r.body.next_cursor;
      if (!r.body.has_more) break;
    }
    expect(seen.size).to.equal(2_000);
    expect([...seen.values()].every((c) => c === 1)).to.equal(true);
    // since, tie-safe as well (regression: limit=1 with since skipped the rest of the millisecond, newest first lost older ones).
    const bySince = new Set<string>();
    let since = '2026-01-01T00:00:00.000Z';
    for (;;) {
      const r = await svc.req('GET', `/api/agent/notifications?since=${encodeURIComponent(since)}&limit=20`, { apiKey: reader.api_key });
      for (const x of r.body.notifications as Array<{ notification_id: string; created_at: string }>) {
        expect(bySince.has(x.notification_id)).to.equal(false);
        bySince.add(x.notification_id);
        since = x.created_at;
      }
      if (!r.body.has_more) break;
    }
    expect(bySince.size).to.equal(2_000);
  });

  it('credit history: every transaction is reachable past 50, by next_cursor (oldest first) and by page (newest first)', async () => {
    const payer = await svc.register();
    const { log } = svc.running.services;
    // 300 charges and grants on the payer's own stream (the ledger), 20 per millisecond.
    const stream = `agent-${payer.agent_id}`;
    const existing = await log.readStream(stream, { direction: 'backwards', maxCount: 1 });
    let revision = existing[0]?.revision ?? -1;
    let position = 0;
    for (let i = 0; i < 300; i += 20) {
      const at = new Date(tick++).toISOString();
      const batch = [];
      for (let j = i; j < i + 20; j++) {
        const e =
          j % 50 === 0
            ? monthlyCreditsGranted({ agent_id: payer.agent_id, cycle: j, cycle_start: at })
            : directMessageSent({ agent_id: payer.agent_id, from_agent_id: payer.agent_id, dm_id: `dm_pay${j}`, to_agent_id: target.agent_id, sent_at: at });
        batch.push({
          id: randomUUID(),
          type: e.type,
          data: e.data,
          metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at, schema_version: schemaVersionOf(e.type) },
        });
      }
      const r = await log.append(stream, batch, revision);
      revision += batch.length;
      position = r.position;
    }
    await svc.running.services.runner.waitFor(position, 60_000);
    const history = (q: string) => svc.req('GET', `/api/protocol/agents/${payer.agent_id}/credits/history${q}`, { apiKey: payer.api_key });

    const newest = await history('?limit=50');
    expect(newest.status).to.equal(200);
    expect(newest.body.transactions).to.have.length(50);

    const viaPages: string[] = [];
    for (let page = 0; page < 20; page++) {
      const r = await history(`?limit=50&page=${page}`);
      if (r.body.transactions.length === 0) break;
      viaPages.push(...r.body.transactions.map((t: { transaction_id: string }) => t.transaction_id));
    }
    expect(viaPages.length).to.be.at.least(300);
    expect(new Set(viaPages).size).to.equal(viaPages.length);

    const viaCursor: string[] = [];
    let cursor = '0';
    for (;;) {
      const r = await history(`?after=${cursor}&limit=50`);
      expect(r.status).to.equal(200);
      expect(r.body.transactions.length).to.be.at.most(50);
      viaCursor.push(...r.body.transactions.map((t: { transaction_id: string }) => t.transaction_id));
      cursor = r.body.next_cursor;
      if (!r.body.has_more) break;
    }
    expect(viaCursor).to.deep.equal([...viaPages].reverse());
    // The newest page's poll_cursor resumes after the newest transaction.
    const tail = await history(`?after=${newest.body.poll_cursor}`);
    expect(tail.body.transactions).to.deep.equal([]);
    expect(tail.body.has_more).to.equal(false);
    // Its next_cursor continues newest first: the same walk as the pages.
    const back: string[] = [...newest.body.transactions.map((t: { transaction_id: string }) => t.transaction_id)];
    let older = newest.body;
    while (older.has_more) {
      older = (await history(`?after=${older.next_cursor}&limit=50`)).body;
      back.push(...older.transactions.map((t: { transaction_id: string }) => t.transaction_id));
    }
    expect(back).to.deep.equal(viaPages);
  });

  it('group-DM messages, the A2A inbox and the feed page forward by the same cursor', async () => {
    const reader = await svc.register();
    const feed = await svc.req('GET', '/api/feed/posts?limit=2');
    expect(feed.status).to.equal(200);
    expect(feed.body).to.include.keys('items', 'total', 'next_cursor', 'has_more');
    const a2a = await svc.req('GET', '/api/agent/a2a/inbox?after=0', { apiKey: reader.api_key });
    expect(a2a.status).to.equal(200);
    expect(a2a.body).to.include({ has_more: false });
    expect(a2a.body.items).to.deep.equal([]);
  });

  /** Follows `next_cursor` from the list's beginning with `limit`, collecting `key` of each item of `itemsOf`. */
  async function followCursor(
    path: string,
    apiKey: string,
    limit: number,
    itemsOf: (body: Record<string, unknown>) => Array<Record<string, unknown>>,
    key: string,
  ) {
    const seen: string[] = [];
    let after = '0';
    for (let guard = 0; guard < 1000; guard++) {
      const res = await svc.req('GET', `${path}${path.includes('?') ? '&' : '?'}after=${after}&limit=${limit}`, { apiKey });
      expect(res.status, res.text).to.equal(200);
      for (const item of itemsOf(res.body)) seen.push(String(item[key]));
      after = res.body.next_cursor;
      if (!res.body.has_more) return seen;
    }
    throw new Error('the cursor never reached the end');
  }

  it('group-DM messages: a participant following next_cursor over 300 messages in bursts sees each exactly once', async () => {
    const other = await svc.register();
    const thread = 'thr_cursor_paging';
    const participants = [target.agent_id, other.agent_id];
    await burst(
      [meshThreadCreated({ thread_id: thread, agent_id: other.agent_id, agent_name: 'Other', participant_agent_ids: participants })],
      new Date(tick++).toISOString(),
    );
    const ids: string[] = [];
    for (let b = 0; b < 10; b++) {
      const at = new Date(tick++).toISOString();
      const events: DomainEvent[] = [];
      for (let i = 0; i < 30; i++) {
        const id = `msg_cursor_${b}_${i}`;
        ids.push(id);
        events.push(
          meshThreadMessagePosted({
            thread_id: thread,
            message_id: id,
            agent_id: other.agent_id,
            agent_name: 'Other',
            participant_agent_ids: participants,
            posted_at: at,
          }),
        );
      }
      await burst(events, at);
    }
    const seen = await followCursor(`/api/agent/group-dm/${thread}`, target.api_key, 7, (b) => b.messages as Array<Record<string, unknown>>, 'message_id');
    const replies = seen.filter((id) => id.startsWith('msg_cursor_'));
    expect(replies).to.deep.equal(ids);
    expect(new Set(seen).size).to.equal(seen.length);
  });

  it('webhook delivery log: following next_cursor over 250 attempts in bursts sees each exactly once', async () => {
    const expected: string[] = [];
    for (let b = 0; b < 10; b++) {
      const at = new Date(tick++).toISOString();
      const events: DomainEvent[] = [];
      for (let i = 0; i < 25; i++) {
        const delivery = `dlv_cursor_${b}_${i}`;
        expected.push(`${delivery}:1`);
        events.push(webhookDeliveryAttempted({ delivery_id: delivery, agent_id: target.agent_id, attempted_at: at }));
      }
      await burst(events, at);
    }
    const seen = await followCursor('/api/agent/webhooks/deliveries', target.api_key, 9, (b) => b.attempts as Array<Record<string, unknown>>, 'delivery_id');
    expect(seen.map((d) => `${d}:1`)).to.deep.equal(expected);
    const other = await svc.register();
    const foreign = await svc.req('GET', '/api/agent/webhooks/deliveries?after=0', { apiKey: other.api_key });
    expect(foreign.body.attempts).to.deep.equal([]);
    expect((await svc.req('GET', '/api/agent/webhooks/deliveries?after=nope', { apiKey: target.api_key })).body.code).to.equal('invalid_cursor');
  });
});
