import { expect } from 'chai';
import { DAY } from '../../events/kernel/clock.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { MemoryReadStore } from '../../projections/store/memory.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { checksumsOf } from '../helpers/checksums.ts';

const MINE = [
  'communities',
  'circles',
  'invite_codes',
  'invite_days',
  'member_codes',
  'community_members',
  'circle_members',
  'circle_join_requests',
  'circle_posts',
  'circle_replies',
  'circle_activity',
  'circle_tag_days',
  'circle_notifications',
  'circle_notification_settings',
  'circle_community_admins',
];
const checksums = (store: ReadStore) => checksumsOf(store, MINE);

describe('api: circles (/api/brew-circles)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let ada: User;
  let bob: User;
  let outsider: User;
  let community_id: string;
  let circle_id: string;

  const as = (u: User) => ({ headers: bearer(u.access_token) });
  const post = async (u: User, body: Record<string, unknown>) =>
    svc.req('POST', '/api/brew-circles/posts', { ...as(u), body: { circle_id, intent: 'ask', ...body } });

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, ada, bob, outsider] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    await svc.req('PATCH', '/api/auth/me', { ...as(bob), body: { full_name: 'Bob Kahn' } });
    ({ community_id, circle_id } = await communityWith(svc, root, admin, [ada, bob], 'Builders'));
  });
  after(() => stopWithOutbox(svc, outbox));

  it('serves the value lists without a token', async () => {
    expect((await svc.req('GET', '/api/brew-circles/intents')).body.intents).to.deep.equal(['ask', 'offer', 'intro', 'update', 'question', 'event']);
    expect((await svc.req('GET', '/api/brew-circles/reactions')).body.reactions).to.deep.equal(['like', 'insightful', 'celebrate', 'support', 'curious']);
    expect((await svc.req('GET', '/api/brew-circles/flag-reasons')).body.flag_reasons).to.deep.equal([
      'spam',
      'harassment',
      'misinformation',
      'off-topic',
      'inappropriate',
      'other',
    ]);
  });

  it('posts with an intent, lists by tag, edits and deletes by the author only; outsiders get 404 for a community circle', async () => {
    expect((await svc.req('GET', `/api/brew-circles/${circle_id}/posts`)).status).to.equal(401);
    const created = await post(ada, { content: 'Who knows a #fintech lawyer? #legal' });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ intent: 'ask', author_id: ada.user_id });
    expect(created.body.hashtags).to.deep.equal(['fintech', 'legal']);
    await post(bob, { content: 'Shipping our #fintech beta', intent: 'update' });
    expect((await post(ada, { content: 'x', intent: 'rant' })).status).to.equal(422);
    expect((await post(ada, { content: '' })).status).to.equal(422);
    expect((await post(ada, { content: 'x'.repeat(5001) })).status).to.equal(422);

    const list = await svc.req('GET', `/api/brew-circles/${circle_id}/posts?limit=10`, as(bob));
    expect(list.status, list.text).to.equal(200);
    expect(list.body.posts.map((p: { content: string }) => p.content)).to.deep.equal(['Shipping our #fintech beta', 'Who knows a #fintech lawyer? #legal']);
    const legal = await svc.req('GET', `/api/brew-circles/${circle_id}/posts?tag=legal`, as(bob));
    expect(legal.body.posts.map((p: { post_id: string }) => p.post_id)).to.deep.equal([created.body.post_id]);

    const hidden = await svc.req('GET', `/api/brew-circles/${circle_id}/posts`, as(outsider));
    expect(hidden.status).to.equal(404);
    expect(hidden.body.code).to.equal('circle_not_found');
    expect((await svc.req('GET', `/api/brew-circles/posts/${created.body.post_id}`, as(outsider))).status).to.equal(404);

    const foreign = await svc.req('PUT', `/api/brew-circles/posts/${created.body.post_id}`, { ...as(bob), body: { content: 'hijacked' } });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('not_post_author');
    const edited = await svc.req('PUT', `/api/brew-circles/posts/${created.body.post_id}`, {
      ...as(ada),
      body: { content: 'Who knows a #payments lawyer?', intent: 'question' },
    });
    expect(edited.status, edited.text).to.equal(200);
    expect(edited.body).to.include({ intent: 'question', content: 'Who knows a #payments lawyer?' });
    expect(edited.body.edited_at).to.be.a('string');
    expect((await svc.req('GET', `/api/brew-circles/${circle_id}/posts?tag=legal`, as(bob))).body.posts).to.deep.equal([]);
    expect((await svc.req('DELETE', `/api/brew-circles/posts/${created.body.post_id}`, as(bob))).status).to.equal(403);
    expect((await svc.req('DELETE', `/api/brew-circles/posts/${created.body.post_id}`, as(ada))).status).to.equal(200);
    expect((await svc.req('GET', `/api/brew-circles/posts/${created.body.post_id}`, as(ada))).status).to.equal(404);
  });

  it('answers 404, not 403, for a private circle to a non-member, and lets admins add members', async () => {
    const made = await svc.req('POST', '/api/admin/community-admin/circles', {
      ...as(admin),
      body: { community_id, name: 'Board room', visibility: 'private' },
    });
    const priv = made.body.circle_id;
    for (const path of [
      `/api/brew-circles/${priv}`,
      `/api/brew-circles/${priv}/posts`,
      `/api/brew-circles/${priv}/members`,
      `/api/brew-circles/${priv}/trending-tags`,
    ]) {
      const r = await svc.req('GET', path, as(ada));
      expect(r.status, path).to.equal(404);
      expect(r.body.code).to.equal('circle_not_found');
    }
    const join = await svc.req('POST', `/api/brew-circles/${priv}/join`, as(ada));
    expect(join.status).to.equal(404);
    const postThere = await svc.req('POST', '/api/brew-circles/posts', { ...as(ada), body: { circle_id: priv, content: 'hi', intent: 'ask' } });
    expect(postThere.status).to.equal(404);
    const added = await svc.req('POST', `/api/admin/community-admin/circles/${priv}/members`, { ...as(admin), body: { user_id: ada.user_id } });
    expect(added.status, added.text).to.equal(200);
    const seen = await svc.req('GET', `/api/brew-circles/${priv}`, as(ada));
    expect(seen.status).to.equal(200);
    expect(seen.body).to.include({ visibility: 'private', is_member: true, member_count: 1 });
    // A community circle: members join at once; the circle lists them.
    const open = await svc.req('POST', '/api/admin/community-admin/circles', { ...as(admin), body: { community_id, name: 'Hiring', visibility: 'community' } });
    const joined = await svc.req('POST', `/api/brew-circles/${open.body.circle_id}/join`, as(bob));
    expect(joined.body).to.include({ status: 'joined' });
    const notMember = await svc.req('POST', '/api/brew-circles/posts', { ...as(ada), body: { circle_id: open.body.circle_id, content: 'hi', intent: 'ask' } });
    expect(notMember.status).to.equal(403);
    expect(notMember.body.code).to.equal('not_circle_member');
    const members = await svc.req('GET', `/api/brew-circles/${open.body.circle_id}/members`, as(ada));
    expect(members.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([bob.user_id]);
    // Deleting: admin only; the last circle of a community is refused.
    expect((await svc.req('DELETE', `/api/brew-circles/${open.body.circle_id}`, as(bob))).status).to.equal(403);
    expect((await svc.req('DELETE', `/api/brew-circles/${open.body.circle_id}`, as(admin))).status).to.equal(200);
    expect((await svc.req('GET', `/api/brew-circles/${open.body.circle_id}`, as(bob))).status).to.equal(404);
    const solo = await communityWith(svc, root, admin, [], 'Solo');
    const last = await svc.req('DELETE', `/api/brew-circles/${solo.circle_id}`, as(admin));
    expect(last.status).to.equal(409);
    expect(last.body.code).to.equal('last_circle');
  });

  it('replies (two levels), toggles reactions, notifies the author, the parent and the mentioned; settings are honoured', async () => {
    await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(ada), body: { reactions: false } });
    const settings = await svc.req('GET', '/api/brew-circles/settings/notifications', as(ada));
    expect(settings.body).to.deep.equal({ mentions: true, replies: true, reactions: false, join_requests: true, digest: 'daily' });
    expect((await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(ada), body: { digest: 'hourly' } })).status).to.equal(422);

    const p = await post(ada, { content: 'Demo day next week, @bob please review' });
    expect(p.body.mentions).to.deep.equal([bob.user_id]);
    const r1 = await svc.req('POST', '/api/brew-circles/replies', { ...as(bob), body: { post_id: p.body.post_id, content: 'Happy to' } });
    expect((await svc.req('POST', `/api/brew-circles/${circle_id}/join`, as(admin))).body.status).to.equal('joined');
    expect(r1.status, r1.text).to.equal(201);
    const r2 = await svc.req('POST', '/api/brew-circles/replies', {
      ...as(admin),
      body: { post_id: p.body.post_id, content: 'Me too', parent_reply_id: r1.body.reply_id },
    });
    expect(r2.body.parent_reply_id).to.equal(r1.body.reply_id);
    const r3 = await svc.req('POST', '/api/brew-circles/replies', {
      ...as(ada),
      body: { post_id: p.body.post_id, content: 'Deep', parent_reply_id: r2.body.reply_id },
    });
    expect(r3.body.parent_reply_id).to.equal(r1.body.reply_id);
    const missing = await svc.req('POST', '/api/brew-circles/replies', {
      ...as(ada),
      body: { post_id: p.body.post_id, content: 'x', parent_reply_id: 'crp_none' },
    });
    expect(missing.status).to.equal(404);
    const replies = await svc.req('GET', `/api/brew-circles/posts/${p.body.post_id}/replies`, as(ada));
    expect(replies.body.replies.map((x: { content: string }) => x.content)).to.deep.equal(['Happy to', 'Me too', 'Deep']);

    const like = await svc.req('POST', '/api/brew-circles/reactions', {
      ...as(bob),
      body: { target_type: 'post', target_id: p.body.post_id, reaction: 'like' },
    });
    expect(like.status, like.text).to.equal(200);
    expect(like.body).to.include({ active: true });
    expect(like.body.reactions.like).to.equal(1);
    const unlike = await svc.req('POST', '/api/brew-circles/reactions', {
      ...as(bob),
      body: { target_type: 'post', target_id: p.body.post_id, reaction: 'like' },
    });
    expect(unlike.body).to.include({ active: false });
    expect(unlike.body.reactions.like).to.equal(0);
    const onReply = await svc.req('POST', '/api/brew-circles/reactions', {
      ...as(ada),
      body: { target_type: 'reply', target_id: r1.body.reply_id, reaction: 'celebrate' },
    });
    expect(onReply.body.reactions.celebrate).to.equal(1);
    expect(
      (await svc.req('POST', '/api/brew-circles/reactions', { ...as(ada), body: { target_type: 'post', target_id: p.body.post_id, reaction: 'angry' } }))
        .status,
    ).to.equal(422);

    // Bob: mentioned, then reacted to (ada's celebrate on his reply) and replied to (admin under his reply).
    const bobs = await svc.req('GET', '/api/brew-circles/notifications', as(bob));
    expect(bobs.body.notifications.map((n: { kind: string }) => n.kind)).to.deep.equal(['reaction', 'reply', 'mention']);
    // Ada: replies to her post, but no reaction notice (she turned them off).
    const adas = await svc.req('GET', '/api/brew-circles/notifications', as(ada));
    const kinds = adas.body.notifications.map((n: { kind: string }) => n.kind);
    expect(kinds).to.include('reply');
    expect(kinds).to.not.include('reaction');
    const count = await svc.req('GET', '/api/brew-circles/notifications/count', as(bob));
    expect(count.body.unread_count).to.equal(3);
    const first = bobs.body.notifications[0].notification_id;
    const one = await svc.req('POST', '/api/brew-circles/notifications/read', { ...as(bob), body: { notification_ids: [first] } });
    expect(one.body.unread_count).to.equal(2);
    const all = await svc.req('POST', '/api/brew-circles/notifications/read', as(bob));
    expect(all.status, all.text).to.equal(200);
    expect(all.body.unread_count).to.equal(0);
    const plan = await svc.running.services.store
      .collection('circle_notifications')
      .explain({ user_id: bob.user_id }, { sort: { user_id: 1, seq: -1 }, hint: 'by_user' });
    expect(plan.index).to.equal('by_user');
  });

  it('notifies the member when a join request is approved or rejected (with the admin note)', async () => {
    const pub = await svc.req('POST', '/api/admin/community-admin/circles', { ...as(admin), body: { community_id, name: 'Open table', visibility: 'public' } });
    const asked = await svc.req('POST', `/api/brew-circles/${pub.body.circle_id}/join`, as(outsider));
    expect(asked.body.status).to.equal('pending');
    const adminSees = await svc.req('GET', '/api/brew-circles/notifications', as(admin));
    expect(adminSees.body.notifications[0]).to.include({ kind: 'join_request', request_id: asked.body.request_id });
    await svc.req('POST', `/api/admin/community-admin/circle-requests/${asked.body.request_id}/approve?admin_note=Welcome%20aboard`, as(admin));
    const n = await svc.req('GET', '/api/brew-circles/notifications', as(outsider));
    expect(n.body.notifications[0]).to.include({ kind: 'join_request_approved', admin_note: 'Welcome aboard' });
    expect(n.body.notifications[0].text).to.include('Welcome aboard');
    const mine = await svc.req('GET', '/api/brew-circles/user/circles', as(outsider));
    expect(mine.body.circles.map((c: { circle_id: string }) => c.circle_id)).to.include(pub.body.circle_id);
    // A rejection notifies too, with its note; the member stays out.
    const late = await signUp(svc, outbox);
    const again = await svc.req('POST', `/api/brew-circles/${pub.body.circle_id}/join`, as(late));
    expect(again.body.status).to.equal('pending');
    const no = await svc.req('POST', `/api/admin/community-admin/circle-requests/${again.body.request_id}/reject?admin_note=Full%20for%20now`, as(admin));
    expect(no.status, no.text).to.equal(200);
    const told = await svc.req('GET', '/api/brew-circles/notifications', as(late));
    expect(told.body.notifications[0]).to.include({ kind: 'join_request_rejected', admin_note: 'Full for now', request_id: again.body.request_id });
    expect(told.body.notifications[0].text).to.include('rejected');
    expect((await svc.req('GET', '/api/brew-circles/user/circles', as(late))).body.circles).to.deep.equal([]);
  });

  it('answers 401 without a token on every bearer circle route', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/api/brew-circles/reactions', { target_type: 'post', target_id: 'cps_x', reaction: 'like' }],
      ['GET', '/api/brew-circles/notifications'],
      ['POST', '/api/brew-circles/notifications/read', {}],
      ['GET', '/api/brew-circles/notifications/count'],
      ['GET', '/api/brew-circles/settings/notifications'],
      ['PUT', '/api/brew-circles/settings/notifications', { mentions: false }],
      ['GET', '/api/brew-circles/user/circles'],
      ['GET', `/api/brew-circles/community/${community_id}`],
      ['GET', `/api/brew-circles/${circle_id}`],
      ['DELETE', `/api/brew-circles/${circle_id}`],
      ['POST', `/api/brew-circles/${circle_id}/join`],
      ['GET', `/api/brew-circles/${circle_id}/members`],
      ['GET', `/api/brew-circles/circles/${circle_id}/members/search?q=a`],
      ['POST', '/api/brew-circles/link-preview', { url: 'https://example.com/' }],
      ['POST', '/api/brew-circles/posts', { circle_id, content: 'x', intent: 'ask' }],
      ['GET', `/api/brew-circles/${circle_id}/posts`],
      ['GET', `/api/brew-circles/${circle_id}/trending-tags`],
      ['GET', `/api/brew-circles/${circle_id}/posts/check-new?since=2026-01-01T00:00:00Z`],
      ['GET', '/api/brew-circles/posts/cps_x'],
      ['PUT', '/api/brew-circles/posts/cps_x', { content: 'x' }],
      ['DELETE', '/api/brew-circles/posts/cps_x'],
      ['POST', '/api/brew-circles/replies', { post_id: 'cps_x', content: 'x' }],
      ['GET', '/api/brew-circles/posts/cps_x/replies'],
    ];
    for (const [method, path, body] of routes) {
      const r = await svc.req(method, path, { body });
      expect(r.status, `${method} ${path}`).to.equal(401);
      expect(r.body).to.have.keys('detail', 'code', 'request_id');
    }
    // The circle is untouched.
    expect((await svc.req('GET', `/api/brew-circles/${circle_id}`, as(ada))).status).to.equal(200);
  });

  it('hides a private circle behind 404 on every route that reaches it (posts, replies, reactions, search, check-new, delete), its posts answering as missing ones, and leaves it out of the community listing', async () => {
    const made = await svc.req('POST', '/api/admin/community-admin/circles', { ...as(admin), body: { community_id, name: 'War room', visibility: 'private' } });
    const priv = made.body.circle_id as string;
    await svc.req('POST', `/api/admin/community-admin/circles/${priv}/members`, { ...as(admin), body: { user_id: ada.user_id } });
    const secret = await svc.req('POST', '/api/brew-circles/posts', {
      ...as(ada),
      body: { circle_id: priv, content: 'Acquisition talks #secret', intent: 'update' },
    });
    expect(secret.status, secret.text).to.equal(201);
    const reply = await svc.req('POST', '/api/brew-circles/replies', { ...as(ada), body: { post_id: secret.body.post_id, content: 'Notes' } });
    expect(reply.status, reply.text).to.equal(201);
    // By the circle's id: circle_not_found, as for a circle that does not exist.
    const probes: Array<[string, string, unknown?]> = [
      ['GET', `/api/brew-circles/${priv}/posts/check-new?since=2026-01-01T00:00:00Z`],
      ['GET', `/api/brew-circles/circles/${priv}/members/search?q=a`],
      ['DELETE', `/api/brew-circles/${priv}`],
    ];
    for (const [method, path, body] of probes) {
      const r = await svc.req(method, path, { ...as(bob), body });
      expect(r.status, `${method} ${path}: ${r.text}`).to.equal(404);
      expect(r.body.code).to.equal('circle_not_found');
    }
    // By a post's or reply's id: the same answer as for a post or reply that does not exist.
    const unknownIds = (text: string) =>
      text.replace(secret.body.post_id, 'cpo_nosuchpost00000000000').replace(reply.body.reply_id, 'crp_nosuchreply0000000000');
    const byId: Array<[string, string, unknown, string]> = [
      ['GET', `/api/brew-circles/posts/${secret.body.post_id}`, undefined, 'circle_post_not_found'],
      ['PUT', `/api/brew-circles/posts/${secret.body.post_id}`, { content: 'x' }, 'circle_post_not_found'],
      ['DELETE', `/api/brew-circles/posts/${secret.body.post_id}`, undefined, 'circle_post_not_found'],
      ['GET', `/api/brew-circles/posts/${secret.body.post_id}/replies`, undefined, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/replies', { post_id: secret.body.post_id, content: 'peek' }, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/reactions', { target_type: 'post', target_id: secret.body.post_id, reaction: 'like' }, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/reactions', { target_type: 'reply', target_id: reply.body.reply_id, reaction: 'like' }, 'circle_reply_not_found'],
    ];
    for (const [method, path, body, code] of byId) {
      const hidden = await svc.req(method, path, { ...as(bob), body });
      expect(hidden.status, `${method} ${path}: ${hidden.text}`).to.equal(404);
      expect(hidden.body.code).to.equal(code);
      const missing = await svc.req(method, unknownIds(path), {
        ...as(bob),
        body: body === undefined ? undefined : JSON.parse(unknownIds(JSON.stringify(body))),
      });
      expect({ status: missing.status, code: missing.body.code, detail: missing.body.detail }).to.deep.equal({
        status: hidden.status,
        code: hidden.body.code,
        detail: hidden.body.detail,
      });
    }
    const listing = await svc.req('GET', `/api/brew-circles/community/${community_id}`, as(bob));
    expect(listing.body.circles.map((c: { circle_id: string }) => c.circle_id)).to.not.include(priv);
    const seen = await svc.req('GET', `/api/brew-circles/community/${community_id}`, as(ada));
    expect(seen.body.circles.map((c: { circle_id: string }) => c.circle_id)).to.include(priv);
    // Still there for its member.
    expect((await svc.req('GET', `/api/brew-circles/posts/${secret.body.post_id}`, as(ada))).body.content).to.equal('Acquisition talks #secret');
  });

  it('pages with skip and limit (posts, replies, members, notifications); a bad skip or limit is 422 in the error envelope', async () => {
    const made = await svc.req('POST', '/api/admin/community-admin/circles', { ...as(admin), body: { community_id, name: 'Paging', visibility: 'community' } });
    const id = made.body.circle_id as string;
    for (const u of [ada, bob]) await svc.req('POST', `/api/brew-circles/${id}/join`, as(u));
    const ids: string[] = [];
    for (const content of ['one', 'two', 'three']) {
      const r = await svc.req('POST', '/api/brew-circles/posts', { ...as(ada), body: { circle_id: id, content, intent: 'update' } });
      ids.push(r.body.post_id);
    }
    const page = await svc.req('GET', `/api/brew-circles/${id}/posts?skip=1&limit=1`, as(bob));
    expect(page.body).to.include({ skip: 1, limit: 1 });
    expect(page.body.posts.map((p: { content: string }) => p.content)).to.deep.equal(['two']);
    for (const content of ['r1', 'r2', 'r3']) await svc.req('POST', '/api/brew-circles/replies', { ...as(bob), body: { post_id: ids[0], content } });
    const replies = await svc.req('GET', `/api/brew-circles/posts/${ids[0]}/replies?skip=2&limit=5`, as(ada));
    expect(replies.body.replies.map((r: { content: string }) => r.content)).to.deep.equal(['r3']);
    const members = await svc.req('GET', `/api/brew-circles/${id}/members?skip=1&limit=1`, as(ada));
    expect(members.body).to.include({ total: 2, skip: 1, limit: 1 });
    expect(members.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([bob.user_id]);
    const all = await svc.req('GET', '/api/brew-circles/notifications?limit=100', as(ada));
    const second = await svc.req('GET', '/api/brew-circles/notifications?skip=1&limit=1', as(ada));
    expect(second.body.notifications.map((n: { notification_id: string }) => n.notification_id)).to.deep.equal([all.body.notifications[1].notification_id]);
    for (const path of [
      `/api/brew-circles/${id}/posts?skip=-1`,
      `/api/brew-circles/${id}/posts?limit=0`,
      `/api/brew-circles/${id}/members?limit=101`,
      '/api/brew-circles/notifications?skip=x',
    ]) {
      const bad = await svc.req('GET', path, as(ada));
      expect(bad.status, path).to.equal(422);
      expect(bad.body.code).to.equal('validation_failed');
      expect(bad.body.detail[0].loc[0]).to.equal('query');
    }
  });

  it('does not notify a member who turned mentions off; the others mentioned are notified', async () => {
    const count = async (u: User) => (await svc.req('GET', '/api/brew-circles/notifications/count', as(u))).body.unread_count as number;
    await svc.req('POST', '/api/brew-circles/notifications/read', as(bob));
    await svc.req('POST', '/api/brew-circles/notifications/read', as(ada));
    await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(bob), body: { mentions: false } });
    const p = await post(admin, { content: 'Thanks @bob and @ada for the intro', intent: 'update' });
    expect(p.status, p.text).to.equal(201);
    expect(p.body.mentions).to.include.members([bob.user_id, ada.user_id]);
    const adas = await svc.req('GET', '/api/brew-circles/notifications?limit=1', as(ada));
    expect(adas.body.notifications[0]).to.include({ kind: 'mention', post_id: p.body.post_id, actor_id: admin.user_id });
    expect(await count(ada)).to.equal(1);
    expect(await count(bob)).to.equal(0);
    // Turned back on, the next mention reaches him.
    await svc.req('PUT', '/api/brew-circles/settings/notifications', { ...as(bob), body: { mentions: true } });
    await post(admin, { content: 'And again, @bob', intent: 'update' });
    const bobs = await svc.req('GET', '/api/brew-circles/notifications?limit=1', as(bob));
    expect(bobs.body.notifications[0]).to.include({ kind: 'mention', actor_id: admin.user_id });
    expect(await count(bob)).to.equal(1);
  });

  it('lists own circles with unread counts and last activity; a community’s circle; members search; check-new; trending tags over 30 days', async () => {
    const before = svc.clock.now().toISOString();
    svc.clock.advance(60_000);
    const p = await post(bob, { content: 'Ping @ada about #growth', intent: 'intro' });
    expect(p.status).to.equal(201);
    const mine = await svc.req('GET', '/api/brew-circles/user/circles', as(ada));
    const c = mine.body.circles.find((x: { circle_id: string }) => x.circle_id === circle_id);
    expect(c.last_activity_at).to.equal(p.body.published_at);
    expect(c.unread_count).to.be.greaterThan(0);
    const ofCommunity = await svc.req('GET', `/api/brew-circles/community/${community_id}`, as(ada));
    expect(ofCommunity.body.circle.circle_id).to.equal(circle_id);
    const search = await svc.req('GET', `/api/brew-circles/circles/${circle_id}/members/search?q=bo`, as(ada));
    expect(search.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([bob.user_id]);
    // The mention search is one top list: `skip` is not among its parameters, so it is not read (nor refused).
    const skipped = await svc.req('GET', `/api/brew-circles/circles/${circle_id}/members/search?q=bo&skip=99999999`, as(ada));
    expect(skipped.status).to.equal(200);
    expect(skipped.body).to.deep.equal(search.body);
    const fresh = await svc.req('GET', `/api/brew-circles/${circle_id}/posts/check-new?since=${encodeURIComponent(before)}`, as(ada));
    expect(fresh.body).to.include({ has_new: true, count: 1, latest_post_id: p.body.post_id });
    expect((await svc.req('GET', `/api/brew-circles/${circle_id}/posts/check-new`, as(ada))).status).to.equal(422);
    const trending = await svc.req('GET', `/api/brew-circles/${circle_id}/trending-tags`, as(ada));
    expect(trending.body.tags.map((t: { tag: string }) => t.tag)).to.include.members(['growth', 'fintech']);
    svc.clock.advance(31 * DAY);
    const login = await svc.req('POST', '/api/auth/login', { body: { email: ada.email, password: ada.password } });
    const later = await svc.req('GET', `/api/brew-circles/${circle_id}/trending-tags`, { headers: bearer(login.body.access_token) });
    expect(later.body.tags).to.deep.equal([]);
    const plan = await svc.running.services.store
      .collection('circle_posts')
      .explain({ live_circle: circle_id }, { sort: { live_circle: 1, seq: -1 }, limit: 20, hint: 'by_circle' });
    expect(plan.index).to.equal('by_circle');
  });

  it('replays the log into the same community and circle read models (checksums), and applying every event twice changes nothing', async () => {
    const live = await checksums(svc.running.services.store);
    expect(Object.values(live).every((c) => !c.startsWith('0:'))).to.equal(true);
    const build = async () => {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(svc.running.services.log, store, allProjections);
      await runner.start();
      await runner.stop();
      return store;
    };
    const first = await build();
    expect(await checksums(first)).to.deep.equal(live);
    const events = await svc.running.services.log.readAll({ after: 0, maxCount: 1_000_000 });
    const ctx = { collection: <N extends string>(n: N) => first.collection(n) };
    for (const e of events) for (const p of allProjections) if (p.handles.has(e.type)) await p.apply(e, ctx);
    expect(await checksums(first)).to.deep.equal(live);
  });
});
