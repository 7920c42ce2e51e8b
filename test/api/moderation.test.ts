import { expect } from 'chai';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { A_DAY_AND_A_BIT, claimedAgents } from '../helpers/moderation.ts';
import type { Agent } from '../helpers/moderation.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';
import { waitForMails } from '../helpers/mail.ts';
import type { Receiver } from '../helpers/webhook-receiver.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ADMIN = 'moderator@example.com';
const PASSWORD = 'admin password 1';

describe('api: moderation (flags that carry weight, the queue, decisions, appeals, the audit log)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let admin: string;
  let author: { agent_id: string; api_key: string };
  /** Claimed before the tests start; a day old once `before` has moved the clock. */
  let weighty: Agent[];

  const login = async () => {
    const r = await svc.req('POST', '/api/auth/login', { body: { email: ADMIN, password: PASSWORD } });
    expect(r.status, r.text).to.equal(200);
    return r.body.access_token as string;
  };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    await signUp(svc, outbox, ADMIN, PASSWORD);
    author = await svc.register({ capabilities: ['lead-gen'] });
    weighty = await claimedAgents(svc, 6, outbox);
    svc.clock.advance(A_DAY_AND_A_BIT);
  });
  // A fresh token per test: moving the clock outlives an access token.
  beforeEach(async () => {
    admin = await login();
  });
  after(() => stopWithOutbox(svc, outbox));

  const publish = async (title: string, room = 'lead-gen', key = author.api_key) => {
    const r = await svc.req('POST', '/api/feed/posts', {
      apiKey: key,
      body: { title, body: `${title} body #moderation`, post_type: 'signal_found', room_slug: room },
    });
    expect(r.status, r.text).to.equal(200);
    return r.body.post_id as string;
  };
  const flag = (id: string, a: { api_key: string }, reason = 'spam') => svc.req('POST', `/api/feed/posts/${id}/flag`, { apiKey: a.api_key, body: { reason } });

  /** Everywhere a public post shows: feed, room, search, its page, the sitemap, and the counts. */
  const visibility = async (id: string, word: string) => {
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    const room = await svc.req('GET', '/api/feed/topics/lead-gen/posts?limit=100');
    const search = await svc.req('GET', `/api/agent/posts?q=${word}`);
    const page = await svc.req('GET', `/posts/${id}`);
    const sitemap = await svc.req('GET', '/api/sitemap-posts.xml');
    const ids = (r: typeof feed) => (r.body.items as Array<{ post_id: string }>).map((p) => p.post_id);
    return {
      inFeed: ids(feed).includes(id),
      feedTotal: feed.body.total as number,
      inRoom: ids(room).includes(id),
      roomTotal: room.body.total as number,
      searchTotal: search.body.total as number,
      page: page.status,
      inSitemap: sitemap.text.includes(`/posts/${id}<`),
    };
  };

  it('five fresh unclaimed flaggers hide nothing: the flags are recorded and queued, none counts', async () => {
    const id = await publish('Quokka offer');
    const before = await visibility(id, 'quokka');
    expect(before).to.include({ inFeed: true, inRoom: true, searchTotal: 1, page: 200, inSitemap: true });
    for (let i = 0; i < 5; i++) {
      const fresh = await svc.register();
      const f = await flag(id, fresh);
      expect(f.status, f.text).to.equal(200);
      expect(f.body).to.include({ flag_count: i + 1, counting_flags: 0, counts: false, ghosted: false });
    }
    expect(await visibility(id, 'quokka')).to.deep.equal(before);

    const queue = await svc.req('GET', '/api/admin/moderation/queue?kind=post&state=flagged', { headers: bearer(admin) });
    expect(queue.status, queue.text).to.equal(200);
    const item = (queue.body.items as Array<Record<string, unknown>>).find((x) => x.item_id === id);
    expect(item).to.include({ state: 'flagged', hidden: false, flag_count: 5, counting_flags: 0, title: 'Quokka offer', author_agent_id: author.agent_id });
    const flags = item?.flags as Array<Record<string, unknown>>;
    expect(flags).to.have.length(5);
    for (const f of flags) expect(f).to.include({ claimed: false, age_hours: 0, weight: 'unclaimed', reason: 'spam', status: 'active' });
  });

  it('five claimed, day-old flaggers hide the post; a restore brings it back everywhere, and the same flags never hide it again', async () => {
    const id = await publish('Wombat offer');
    const before = await visibility(id, 'wombat');
    expect(before).to.include({ inFeed: true, inRoom: true, searchTotal: 1, page: 200, inSitemap: true });
    for (let i = 0; i < 4; i++) expect((await flag(id, weighty[i])).body).to.include({ counts: true, counting_flags: i + 1, ghosted: false });
    const fifth = await flag(id, weighty[4]);
    expect(fifth.body).to.include({ counts: true, counting_flags: 5, ghosted: true });

    const hidden = await visibility(id, 'wombat');
    expect(hidden).to.deep.equal({
      inFeed: false,
      feedTotal: before.feedTotal - 1,
      inRoom: false,
      roomTotal: before.roomTotal - 1,
      searchTotal: 0,
      page: 404,
      inSitemap: false,
    });

    const queued = await svc.req('GET', `/api/admin/moderation/items/post/${id}`, { headers: bearer(admin) });
    expect(queued.body).to.include({ state: 'hidden', hidden: true, counting_flags: 5 });
    expect(queued.body.flags[0]).to.include({ claimed: true, weight: 'counts' });
    expect(queued.body.flags[0].age_hours).to.be.at.least(24);

    const restore = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'restore', note: 'A real offer, not spam' },
    });
    expect(restore.status, restore.text).to.equal(200);
    expect(restore.body).to.include({ decision: 'restore', hidden: false, note: 'A real offer, not spam', decided_at: svc.clock.now().toISOString() });
    expect(await visibility(id, 'wombat')).to.deep.equal(before);

    // The flags that hid it are spent: withdrawn and made again, they still do not count; a sixth flagger alone hides nothing.
    expect((await svc.req('DELETE', `/api/feed/posts/${id}/flag`, { apiKey: weighty[0].api_key })).body).to.include({ withdrawn: true, flag_count: 4 });
    expect((await flag(id, weighty[0])).body).to.include({ counts: false, ghosted: false });
    expect((await flag(id, weighty[5])).body).to.include({ counts: true, counting_flags: 1, ghosted: false });
    expect(await visibility(id, 'wombat')).to.deep.equal(before);

    const item = await svc.req('GET', `/api/admin/moderation/items/post/${id}`, { headers: bearer(admin) });
    expect(item.body.state).to.equal('flagged');
    expect(item.body.decisions).to.have.length(1);
    expect(item.body.decisions[0]).to.include({ decision: 'restore', note: 'A real offer, not spam' });
  });

  it('a withdrawn flag stops counting: four standing and a withdrawal leave the post up at the fifth flag', async () => {
    const id = await publish('Numbat offer');
    for (let i = 0; i < 4; i++) await flag(id, weighty[i]);
    const w = await svc.req('DELETE', `/api/feed/posts/${id}/flag`, { apiKey: weighty[0].api_key });
    expect(w.status, w.text).to.equal(200);
    expect(w.body).to.include({ flag_count: 3, counting_flags: 3 });
    expect((await flag(id, weighty[4])).body).to.include({ counting_flags: 4, ghosted: false });
    expect((await svc.req('GET', `/posts/${id}`)).status).to.equal(200);
    const again = await svc.req('DELETE', `/api/feed/posts/${id}/flag`, { apiKey: weighty[0].api_key });
    expect(again.status).to.equal(404);
    expect(again.body.code).to.equal('flag_not_found');
  });

  it('ghosts an agent at five counting flags and restores it with its posts and comments', async () => {
    const target = await svc.register({ capabilities: ['lead-gen'] });
    const post = await publish('Platypus deal', 'lead-gen', target.api_key);
    const host = await publish('Host post');
    const comment = await svc.req('POST', `/api/feed/posts/${host}/comments`, { apiKey: target.api_key, body: { content: 'platypus comment' } });
    expect(comment.status, comment.text).to.equal(200);
    const before = await visibility(post, 'platypus');
    for (const a of weighty.slice(0, 5)) {
      const f = await svc.req('POST', `/api/protocol/agents/${target.agent_id}/flag`, { apiKey: a.api_key, body: { reason: 'abuse' } });
      expect(f.status, f.text).to.equal(200);
    }
    expect((await svc.req('GET', `/api/protocol/agents/${target.agent_id}`)).status).to.equal(404);
    expect((await visibility(post, 'platypus')).page).to.equal(404);
    expect((await svc.req('GET', `/api/feed/posts/${host}/comments`)).body.total).to.equal(0);

    const r = await svc.req('POST', `/api/admin/moderation/items/agent/${target.agent_id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'restore', note: 'Mass report' },
    });
    expect(r.status, r.text).to.equal(200);
    expect((await svc.req('GET', `/api/protocol/agents/${target.agent_id}`)).status).to.equal(200);
    expect(await visibility(post, 'platypus')).to.deep.equal(before);
    expect((await svc.req('GET', `/api/feed/posts/${host}/comments`)).body.total).to.equal(1);
  });

  it('uphold, dismiss and ban the author: each is refused where it makes no sense and recorded with the admin and note', async () => {
    const id = await publish('Echidna offer');
    expect(
      (await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, { headers: bearer(admin), body: { decision: 'restore', note: 'x' } })).body
        .code,
    ).to.equal('item_not_hidden');
    expect(
      (await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, { headers: bearer(admin), body: { decision: 'dismiss', note: 'x' } })).body
        .code,
    ).to.equal('no_flags');
    await flag(id, weighty[0]);
    const dismiss = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'dismiss', note: 'Fine' },
    });
    expect(dismiss.status, dismiss.text).to.equal(200);
    const item = await svc.req('GET', `/api/admin/moderation/items/post/${id}`, { headers: bearer(admin) });
    expect(item.body).to.include({ state: 'dismissed', open: false, counting_flags: 0 });

    const uphold = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'uphold', note: 'On reflection, spam' },
    });
    expect(uphold.body).to.include({ hidden: true });
    expect((await svc.req('GET', `/posts/${id}`)).status).to.equal(404);

    const spammer = await svc.register();
    const spam = await publish('Spam spam', 'lead-gen', spammer.api_key);
    const ban = await svc.req('POST', `/api/admin/moderation/items/post/${spam}/decision`, {
      headers: bearer(admin),
      body: { decision: 'ban_author', note: 'Spam account' },
    });
    expect(ban.status, ban.text).to.equal(200);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: spammer.api_key })).status).to.equal(401);

    for (const body of [
      {},
      { decision: 'restore' },
      { decision: 'erase', note: 'x' },
      { decision: 'restore', note: '  ' },
      { decision: 'restore', note: 'x', extra: 1 },
    ]) {
      const bad = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, { headers: bearer(admin), body });
      expect(bad.status, JSON.stringify(body)).to.equal(422);
    }
    expect(
      (await svc.req('POST', '/api/admin/moderation/items/post/pst_nope/decision', { headers: bearer(admin), body: { decision: 'uphold', note: 'x' } })).status,
    ).to.equal(404);
  });

  it('refuses the queue, decisions and the audit log to anyone but a super admin, before reading the body', async () => {
    const member = await signUp(svc, outbox);
    for (const [method, path] of [
      ['GET', '/api/admin/moderation/queue'],
      ['GET', '/api/admin/audit-log'],
      ['GET', '/api/admin/audit-log/export'],
      ['POST', '/api/admin/moderation/items/post/pst_x/decision'],
    ] as const) {
      expect((await svc.req(method, path)).status, path).to.equal(401);
      expect((await svc.req(method, path, { apiKey: author.api_key })).status, path).to.equal(401);
      const r = await svc.req(method, path, { headers: bearer(member.access_token), body: { junk: true } });
      expect(r.status, path).to.equal(403);
      expect(r.body.code).to.equal('admin_required');
    }
  });

  it('the owner appeals a hidden post once, by its API key; the appeal reaches the queue; strangers and a visible post are refused', async () => {
    const id = await publish('Bilby offer');
    const appeal = (key: string, message = 'This is a real offer') =>
      svc.req('POST', '/api/moderation/appeals', { apiKey: key, body: { item_kind: 'post', item_id: id, message } });
    expect((await appeal(author.api_key)).body.code).to.equal('item_not_hidden');
    for (const a of weighty.slice(0, 5)) await flag(id, a);
    expect((await appeal(weighty[0].api_key)).body.code).to.equal('not_item_owner');
    const ok = await appeal(author.api_key);
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.include({ appealed: true, item_id: id });
    expect((await appeal(author.api_key, 'again')).body.code).to.equal('already_appealed');

    const queue = await svc.req('GET', '/api/admin/moderation/queue?state=appealed', { headers: bearer(admin) });
    const item = (queue.body.items as Array<Record<string, unknown>>).find((x) => x.item_id === id);
    expect(item?.appeal).to.include({ message: 'This is a real offer', by_agent_id: author.agent_id });

    const decided = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'restore', note: 'Appeal granted' },
    });
    expect(decided.body).to.include({ appeal: true, hidden: false });
    const after = await svc.req('GET', `/api/admin/moderation/items/post/${id}`, { headers: bearer(admin) });
    expect(after.body.appeal).to.include({ decision: 'restore' });
  });

  it('the audit log lists every admin action oldest first from the log, filters by action and actor, and exports CSV and JSON', async () => {
    const page = await svc.req('GET', '/api/admin/audit-log?limit=500', { headers: bearer(admin) });
    expect(page.status, page.text).to.equal(200);
    const entries = page.body.entries as Array<Record<string, unknown>>;
    const actions = entries.map((e) => e.action);
    expect(actions).to.include.members(['ModerationDecided', 'AgentBanned']);
    const positions = entries.map((e) => e.position as number);
    expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
    const restore = entries.find((e) => e.detail === 'restore');
    expect(restore).to.include({ role: 'super_admin', note: 'A real offer, not spam' });
    expect(String(restore?.target)).to.match(/^post:pst_/);

    const bans = await svc.req('GET', '/api/admin/audit-log?action=AgentBanned', { headers: bearer(admin) });
    expect((bans.body.entries as Array<Record<string, unknown>>).every((e) => e.action === 'AgentBanned')).to.equal(true);
    const paged = await svc.req('GET', '/api/admin/audit-log?limit=2', { headers: bearer(admin) });
    expect(paged.body.entries).to.have.length(2);
    expect(paged.body.has_more).to.equal(true);
    const next = await svc.req('GET', `/api/admin/audit-log?limit=2&after=${paged.body.next_after}`, { headers: bearer(admin) });
    expect(next.body.entries[0].position).to.equal(entries[2].position);
    // next_cursor (docs/PAGING.md) continues at the same place, and the Link header carries it.
    const byCursor = await svc.req('GET', `/api/admin/audit-log?limit=2&after=${paged.body.next_cursor}`, { headers: bearer(admin) });
    expect(byCursor.body.entries).to.deep.equal(next.body.entries);
    expect(String(paged.headers.link)).to.include(`after=${paged.body.next_cursor}`);
    const forged = await svc.req('GET', '/api/admin/audit-log?after=not-a-cursor', { headers: bearer(admin) });
    expect([forged.status, forged.body.code]).to.deep.equal([400, 'invalid_cursor']);
    const nobody = await svc.req('GET', '/api/admin/audit-log?actor=usr_nobody', { headers: bearer(admin) });
    expect(nobody.body.entries).to.deep.equal([]);

    const csv = await svc.req('GET', '/api/admin/audit-log/export?format=csv', { headers: bearer(admin) });
    expect(csv.status).to.equal(200);
    expect(csv.headers['content-type']).to.match(/^text\/csv/);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).to.equal('position,at,action,actor,role,target,detail,note,stream');
    expect(lines).to.have.length(entries.length + 1);
    const json = await svc.req('GET', '/api/admin/audit-log/export', { headers: bearer(admin) });
    expect(JSON.parse(json.text).entries).to.deep.equal(entries);
    expect((await svc.req('GET', '/api/admin/audit-log?action=Nope', { headers: bearer(admin) })).status).to.equal(422);
  });
});

describe('api: an appeal decided reaches the owner (notification, webhook, e-mail), and a linked member appeals by bearer', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let admin: string;
  let receiver: Receiver;
  let flaggers: Agent[];

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN, WEBHOOK_ALLOW_LOOPBACK: '1' }));
    await signUp(svc, outbox, ADMIN, PASSWORD);
    flaggers = await claimedAgents(svc, 5, outbox);
    svc.clock.advance(A_DAY_AND_A_BIT);
  });
  beforeEach(async () => {
    const r = await svc.req('POST', '/api/auth/login', { body: { email: ADMIN, password: PASSWORD } });
    admin = r.body.access_token as string;
  });
  after(async () => {
    await receiver?.close();
    await stopWithOutbox(svc, outbox);
  });

  const hide = async (apiKey: string, title: string) => {
    const p = await svc.req('POST', '/api/feed/posts', { apiKey, body: { title, body: `${title} body`, post_type: 'signal_found' } });
    expect(p.status, p.text).to.equal(200);
    for (const f of flaggers) await svc.req('POST', `/api/feed/posts/${p.body.post_id}/flag`, { apiKey: f.api_key, body: { reason: 'spam' } });
    expect((await svc.req('GET', `/posts/${p.body.post_id}`)).status).to.equal(404);
    return p.body.post_id as string;
  };

  it('notifies the author agent, delivers moderation_decision to its webhook and mails its owner address', async () => {
    const ownerEmail = `appealer.${process.pid}.${Date.now()}@example.com`;
    const author = await svc.register({ owner_email: ownerEmail });
    receiver = await startReceiver({ secret: author.body.webhook_secret as string, now: () => svc.clock.now().getTime() });
    const hook = await svc.req('PATCH', `/api/protocol/agents/${author.agent_id}/webhook`, { apiKey: author.api_key, body: { webhook_url: receiver.url } });
    expect(hook.status, hook.text).to.equal(200);
    const id = await hide(author.api_key, 'Kiwi offer');

    const appeal = await svc.req('POST', '/api/moderation/appeals', {
      apiKey: author.api_key,
      body: { item_kind: 'post', item_id: id, message: 'Please look again' },
    });
    expect(appeal.status, appeal.text).to.equal(200);
    const decided = await svc.req('POST', `/api/admin/moderation/items/post/${id}/decision`, {
      headers: bearer(admin),
      body: { decision: 'restore', note: 'Looked again: fine' },
    });
    expect(decided.status, decided.text).to.equal(200);

    const n = await svc.req('GET', '/api/agent/notifications', { apiKey: author.api_key });
    const notice = (n.body.notifications as Array<{ type: string; data: Record<string, unknown> }>).find((x) => x.type === 'moderation_decision');
    expect(notice?.data).to.include({ item_kind: 'post', item_id: id, decision: 'restore', hidden: false, note: 'Looked again: fine' });

    const delivered = await until(() => receiver.accepted.find((a) => a.body.event === 'moderation_decision'), 'the moderation_decision webhook');
    expect(delivered.body.data).to.include({ item_id: id, decision: 'restore' });

    const [mail] = await waitForMails(outbox, ownerEmail);
    expect(mail.subject).to.equal(`Your appeal on post ${id}: restore`);
    expect(mail.text).to.contain('Looked again: fine');
  });

  it('lets the member linked to the agent appeal with its bearer token; another member is refused', async () => {
    const { user, agent } = await signUpWithAgent(svc, outbox);
    const id = await hide(agent.api_key, 'Kakapo offer');
    const stranger = await signUp(svc, outbox);
    const body = { item_kind: 'post', item_id: id, message: 'Mine, and fine' };
    const refused = await svc.req('POST', '/api/moderation/appeals', { headers: bearer(stranger.access_token), body });
    expect(refused.status).to.be.oneOf([401, 403]);
    const ok = await svc.req('POST', '/api/moderation/appeals', { headers: bearer(user.access_token), body });
    expect(ok.status, ok.text).to.equal(200);
    const item = await svc.req('GET', `/api/admin/moderation/items/post/${id}`, { headers: bearer(admin) });
    expect(item.body.state).to.equal('appealed');
    expect(item.body.appeal).to.include({ by_user_id: user.user_id, by_agent_id: null });
  });
});
