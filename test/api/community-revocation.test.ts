import { expect } from 'chai';
import { bearer, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

type Route = [method: string, path: string, body?: unknown];

/**
 * A community admin removed from the community (CommunityMemberRemoved) loses every admin read
 * and write at once, and every circle the membership or the admin role opened, over real HTTP.
 */
describe('api: a removed community admin keeps no access', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let gone: User;
  let stays: User;
  let member: User;
  let asker: User;

  const as = (u: User) => ({ headers: bearer(u.access_token) });

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL, PUBLIC_BASE_URL: 'https://net.example.com' }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [gone, stays, member, asker] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
  });
  after(() => stopWithOutbox(svc, outbox));

  it('after a super admin removes them: 403 on every community admin route, 404 on every circle they saw, is_admin false, no code to rejoin with', async () => {
    const ok = async (method: string, path: string, u: User, body?: unknown, status = 200) => {
      const r = await svc.req(method, path, { ...as(u), body });
      expect(r.status, `${method} ${path}: ${r.text}`).to.equal(status);
      return r.body;
    };
    // A closed community with two admins, a member, a private circle with a post, and a public one with a pending request.
    const created = await ok('POST', '/api/admin/communities', root, { name: 'Closed club', description: 'Members only', open: false }, 201);
    const community_id = created.community_id as string;
    const first = created.circles[0].circle_id as string;
    await ok('POST', `/api/admin/communities/${community_id}/admins`, root, { user_id: gone.user_id });
    await ok('POST', `/api/admin/communities/${community_id}/admins`, root, { user_id: stays.user_id });
    const code = await ok('POST', '/api/admin/community-admin/codes', gone, { community_id, label: 'first' }, 201);
    await ok('POST', '/api/communities/join', member, { code: code.code });
    await ok('POST', `/api/brew-circles/${first}/join`, gone);
    const priv = (await ok('POST', '/api/admin/community-admin/circles', gone, { community_id, name: 'Board room', visibility: 'private' }, 201))
      .circle_id as string;
    await ok('POST', `/api/admin/community-admin/circles/${priv}/members`, gone, { user_id: member.user_id });
    const pub = (await ok('POST', '/api/admin/community-admin/circles', stays, { community_id, name: 'Open table', visibility: 'public' }, 201))
      .circle_id as string;
    const post = await ok('POST', '/api/brew-circles/posts', member, { circle_id: priv, content: 'Board notes #q3', intent: 'update' }, 201);
    const reply = await ok('POST', '/api/brew-circles/replies', member, { post_id: post.post_id, content: 'Agreed' }, 201);
    const asked = await ok('POST', `/api/brew-circles/${pub}/join`, asker);
    expect(asked.status).to.equal('pending');

    const adminRoutes = (codeId: string, codeValue: string): Route[] => [
      ['GET', '/api/admin/community-admin/dashboard'],
      ['GET', `/api/admin/community-admin/dashboard?community_id=${community_id}`],
      ['GET', '/api/admin/community-admin/members'],
      ['GET', `/api/admin/community-admin/members?community_id=${community_id}`],
      ['GET', `/api/admin/community-admin/members?community_id=${community_id}&circle_filter=${priv}`],
      ['GET', `/api/admin/community-admin/invite-analytics/${community_id}`],
      ['GET', `/api/admin/community-admin/code-qr/${codeValue}`],
      ['GET', `/api/admin/community-admin/code-qr/${codeValue}?format=svg`],
      ['GET', '/api/admin/community-admin/circle-requests'],
      ['GET', `/api/admin/community-admin/circle-requests?community_id=${community_id}&status=pending`],
      ['POST', '/api/admin/community-admin/codes', { community_id, label: 'mine' }],
      ['PUT', `/api/admin/community-admin/codes/${codeId}`, { status: 'paused' }],
      ['POST', '/api/admin/community-admin/circles', { community_id, name: 'Annex' }],
      ['PUT', `/api/admin/community-admin/circles/${priv}/visibility?visibility=public`],
      ['PUT', `/api/admin/community-admin/circles/${first}/visibility?visibility=private&community_id=${community_id}`],
      ['POST', `/api/admin/community-admin/circles/${priv}/members`, { user_id: gone.user_id }],
      ['POST', `/api/admin/community-admin/circles/${priv}/members?community_id=${community_id}`, { user_id: member.user_id }],
      ['DELETE', `/api/admin/community-admin/members/${member.user_id}?community_id=${community_id}`],
      ['DELETE', `/api/admin/community-admin/members/${member.user_id}`],
      ['POST', `/api/admin/community-admin/circle-requests/${asked.request_id}/approve`],
      ['POST', `/api/admin/community-admin/circle-requests/${asked.request_id}/reject?admin_note=no`],
    ];
    // Before: the admin reads the dashboard, the members, the codes and the private circle (is_admin).
    for (const [method, path] of adminRoutes(code.code_id, code.code).filter(([m]) => m === 'GET')) await ok(method, path, gone);
    expect((await ok('GET', `/api/brew-circles/${priv}`, gone)).is_admin).to.equal(true);
    expect((await ok('GET', `/api/brew-circles/${priv}/posts`, gone)).posts).to.have.length(1);

    // The super admin removes them.
    const removed = await ok('DELETE', `/api/admin/community-admin/members/${gone.user_id}?community_id=${community_id}`, root);
    expect(removed).to.deep.equal({ removed: true, user_id: gone.user_id, community_id });

    // A code made after the removal: the one a removed admin would need to rejoin the closed community.
    const fresh = await ok('POST', '/api/admin/community-admin/codes', stays, { community_id, label: 'after' }, 201);
    for (const [method, path, body] of [...adminRoutes(code.code_id, code.code), ...adminRoutes(fresh.code_id, fresh.code)]) {
      const r = await svc.req(method, path, { ...as(gone), body });
      expect(r.status, `${method} ${path} by the removed admin: ${r.text}`).to.equal(403);
      expect(r.body.code, `${method} ${path}`).to.equal('community_admin_required');
    }
    // The super-admin-only routes stay closed to them too.
    for (const [method, path, body] of [
      ['POST', '/api/admin/communities', { name: 'Mine now' }],
      ['POST', `/api/admin/communities/${community_id}/admins`, { user_id: gone.user_id }],
    ] as Route[]) {
      const r = await svc.req(method, path, { ...as(gone), body });
      expect(r.status, `${method} ${path}`).to.equal(403);
      expect(r.body.code).to.equal('admin_required');
    }

    // Every circle of the community but the public one is as if it did not exist, its posts and replies too.
    for (const circle of [priv, first]) {
      const probes: Route[] = [
        ['GET', `/api/brew-circles/${circle}`],
        ['GET', `/api/brew-circles/${circle}/posts`],
        ['GET', `/api/brew-circles/${circle}/members`],
        ['GET', `/api/brew-circles/circles/${circle}/members/search?q=a`],
        ['GET', `/api/brew-circles/${circle}/trending-tags`],
        ['GET', `/api/brew-circles/${circle}/posts/check-new?since=2026-01-01T00:00:00Z`],
        ['POST', '/api/brew-circles/posts', { circle_id: circle, content: 'Still here?', intent: 'ask' }],
        ['POST', `/api/brew-circles/${circle}/join`],
        ['DELETE', `/api/brew-circles/${circle}`],
      ];
      for (const [method, path, body] of probes) {
        const r = await svc.req(method, path, { ...as(gone), body });
        expect(r.status, `${method} ${path} by the removed admin: ${r.text}`).to.equal(404);
        expect(r.body.code).to.equal('circle_not_found');
      }
    }
    const postProbes: Array<[...Route, string]> = [
      ['GET', `/api/brew-circles/posts/${post.post_id}`, undefined, 'circle_post_not_found'],
      ['GET', `/api/brew-circles/posts/${post.post_id}/replies`, undefined, 'circle_post_not_found'],
      ['PUT', `/api/brew-circles/posts/${post.post_id}`, { content: 'edited' }, 'circle_post_not_found'],
      ['DELETE', `/api/brew-circles/posts/${post.post_id}`, undefined, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/replies', { post_id: post.post_id, content: 'me too' }, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/reactions', { target_type: 'post', target_id: post.post_id, reaction: 'like' }, 'circle_post_not_found'],
      ['POST', '/api/brew-circles/reactions', { target_type: 'reply', target_id: reply.reply_id, reaction: 'like' }, 'circle_reply_not_found'],
    ];
    for (const [method, path, body, errorCode] of postProbes) {
      const r = await svc.req(method, path, { ...as(gone), body });
      expect(r.status, `${method} ${path} by the removed admin: ${r.text}`).to.equal(404);
      expect(r.body.code).to.equal(errorCode);
    }
    // The public circle: visible to anyone signed in, but not as its admin, nor as a member.
    const seen = await ok('GET', `/api/brew-circles/${pub}`, gone);
    expect(seen).to.include({ is_admin: false, is_member: false });
    expect((await ok('GET', `/api/brew-circles/community/${community_id}`, gone)).circles.map((c: { circle_id: string }) => c.circle_id)).to.deep.equal([pub]);
    expect((await ok('GET', '/api/brew-circles/user/circles', gone)).circles).to.deep.equal([]);
    // The community no longer names them admin; the remaining admin's lists leave them out.
    const dash = await ok('GET', `/api/admin/community-admin/dashboard?community_id=${community_id}`, stays);
    expect(dash.communities[0].admins).to.deep.equal([stays.user_id]);
    const members = await ok('GET', `/api/admin/community-admin/members?community_id=${community_id}`, stays);
    expect(members.members.map((m: { user_id: string }) => m.user_id)).to.have.members([stays.user_id, member.user_id]);
    // Nothing they tried changed anything: the first code is active, the request still pending, the private circle private.
    const analytics = await ok('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, stays);
    expect(analytics.codes.map((c: { status: string }) => c.status)).to.deep.equal(['active', 'active']);
    const pending = await ok('GET', `/api/admin/community-admin/circle-requests?community_id=${community_id}&status=pending`, stays);
    expect(pending.requests.map((r: { request_id: string }) => r.request_id)).to.deep.equal([asked.request_id]);
    expect((await ok('GET', `/api/brew-circles/${priv}`, stays)).visibility).to.equal('private');

    // Named again by the super admin, they are an admin again (the role follows the latest event).
    await ok('POST', `/api/admin/communities/${community_id}/admins`, root, { user_id: gone.user_id });
    expect((await ok('GET', `/api/brew-circles/${priv}`, gone)).is_admin).to.equal(true);
    await ok('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, gone);
  });

  it('a community admin removed by a fellow admin (without community_id) loses the role the same way', async () => {
    const created = await svc.req('POST', '/api/admin/communities', { ...as(root), body: { name: 'Peers', open: false } });
    const community_id = created.body.community_id as string;
    const a = await signUp(svc, outbox);
    const b = await signUp(svc, outbox);
    for (const u of [a, b]) await svc.req('POST', `/api/admin/communities/${community_id}/admins`, { ...as(root), body: { user_id: u.user_id } });
    const removed = await svc.req('DELETE', `/api/admin/community-admin/members/${b.user_id}`, as(a));
    expect(removed.status, removed.text).to.equal(200);
    for (const path of ['/api/admin/community-admin/dashboard', `/api/admin/community-admin/invite-analytics/${community_id}`]) {
      const r = await svc.req('GET', path, as(b));
      expect(r.status, `${path}: ${r.text}`).to.equal(403);
    }
    // and cannot remove the one who removed them
    expect((await svc.req('DELETE', `/api/admin/community-admin/members/${a.user_id}?community_id=${community_id}`, as(b))).status).to.equal(403);
  });
});
