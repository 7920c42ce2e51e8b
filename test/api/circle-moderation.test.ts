import { expect } from 'chai';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

describe('api: community moderation (community admins hide and restore circle posts and replies, audited)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let otherAdmin: User;
  let ada: User;
  let circle_id: string;

  const as = (u: User) => ({ headers: bearer(u.access_token) });
  const moderate = (u: User, body: Record<string, unknown>) => svc.req('POST', '/api/admin/community-admin/moderation', { ...as(u), body });

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, otherAdmin, ada] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    ({ circle_id } = await communityWith(svc, root, admin, [ada], 'Growers'));
    await communityWith(svc, root, otherAdmin, [], 'Others');
  });
  after(() => stopWithOutbox(svc, outbox));

  it('hides a post from the circle and restores it, hides a reply from the thread and restores it; each is in the audit log', async () => {
    const post = await svc.req('POST', '/api/brew-circles/posts', { ...as(ada), body: { circle_id, intent: 'ask', content: 'Anyone selling #seeds?' } });
    expect(post.status, post.text).to.equal(201);
    const postId = post.body.post_id as string;
    const reply = await svc.req('POST', '/api/brew-circles/replies', { ...as(ada), body: { post_id: postId, content: 'Buy my course' } });
    expect(reply.status, reply.text).to.be.oneOf([200, 201]);
    const replyId = reply.body.reply_id as string;
    const listed = async () =>
      ((await svc.req('GET', `/api/brew-circles/${circle_id}/posts`, as(ada))).body.posts as Array<{ post_id: string }>).map((p) => p.post_id);
    const replies = async () =>
      ((await svc.req('GET', `/api/brew-circles/posts/${postId}/replies`, as(ada))).body.replies as Array<{ reply_id: string }>).map((r) => r.reply_id);
    expect(await listed()).to.include(postId);
    expect(await replies()).to.deep.equal([replyId]);

    const hideReply = await moderate(admin, { target_type: 'reply', target_id: replyId, action: 'hide', note: 'Spam reply' });
    expect(hideReply.status, hideReply.text).to.equal(200);
    expect(hideReply.body).to.include({ hidden: true, by_user_id: admin.user_id, note: 'Spam reply' });
    expect(await replies()).to.deep.equal([]);
    expect((await moderate(admin, { target_type: 'reply', target_id: replyId, action: 'hide', note: 'again' })).body.code).to.equal('already_hidden');
    expect((await moderate(admin, { target_type: 'reply', target_id: replyId, action: 'restore', note: 'Fine after all' })).status).to.equal(200);
    expect(await replies()).to.deep.equal([replyId]);

    expect((await moderate(admin, { target_type: 'post', target_id: postId, action: 'hide', note: 'Off topic' })).status).to.equal(200);
    expect(await listed()).to.not.include(postId);
    expect((await svc.req('GET', `/api/brew-circles/posts/${postId}`, as(ada))).status).to.equal(404);
    expect((await moderate(admin, { target_type: 'post', target_id: postId, action: 'restore', note: 'Back' })).status).to.equal(200);
    expect(await listed()).to.include(postId);

    const audit = await svc.req('GET', '/api/admin/audit-log?action=CircleContentModerated', as(root));
    const entries = audit.body.entries as Array<Record<string, unknown>>;
    expect(entries.map((e) => `${e.detail} ${e.target}`)).to.deep.equal([
      `hide circle_reply:${replyId}`,
      `restore circle_reply:${replyId}`,
      `hide circle_post:${postId}`,
      `restore circle_post:${postId}`,
    ]);
    for (const e of entries) expect(e).to.include({ actor: admin.user_id, role: 'community_admin' });
  });

  it("refuses another community's admin (403) and a plain member (403) before reading the body, and answers 404 for an unknown post", async () => {
    const post = await svc.req('POST', '/api/brew-circles/posts', { ...as(ada), body: { circle_id, intent: 'offer', content: 'Seeds for sale' } });
    const postId = post.body.post_id as string;
    const other = await moderate(otherAdmin, { target_type: 'post', target_id: postId, action: 'hide', note: 'Not mine' });
    expect(other.status).to.equal(403);
    expect(other.body.code).to.equal('not_community_admin_of_item');
    const member = await moderate(ada, { junk: true });
    expect(member.status).to.equal(403);
    expect(member.body.code).to.equal('community_admin_required');
    expect((await svc.req('POST', '/api/admin/community-admin/moderation', { body: {} })).status).to.equal(401);
    expect((await moderate(admin, { target_type: 'post', target_id: 'cpo_nope', action: 'hide', note: 'x' })).status).to.equal(404);
    expect((await moderate(admin, { target_type: 'post', target_id: postId, action: 'hide', note: ' ' })).status).to.equal(422);
    // A super admin may moderate any community.
    expect((await moderate(root, { target_type: 'post', target_id: postId, action: 'hide', note: 'Spam' })).status).to.equal(200);
  });
});
