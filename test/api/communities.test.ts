import { expect } from 'chai';
import QRCode from 'qrcode';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

describe('api: communities, roles and the community admin routes', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let otherAdmin: User;
  let plain: User;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL, PUBLIC_BASE_URL: 'https://net.example.com' }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, otherAdmin, plain] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
  });
  after(() => stopWithOutbox(svc, outbox));

  it('super admins create communities (each with one circle) and name community admins; others get 401 / 403', async () => {
    const body = { name: 'Climate founders', description: 'Builders in climate' };
    expect((await svc.req('POST', '/api/admin/communities', { body })).status).to.equal(401);
    const refused = await svc.req('POST', '/api/admin/communities', { headers: bearer(plain.access_token), body });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('admin_required');
    const created = await svc.req('POST', '/api/admin/communities', { headers: bearer(root.access_token), body });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ name: 'Climate founders', open: true });
    expect(created.body.circles).to.have.length(1);
    expect(created.body.circles[0]).to.include({ name: 'Climate founders', visibility: 'community' });
    const id = created.body.community_id;
    expect(
      (await svc.req('POST', `/api/admin/communities/${id}/admins`, { headers: bearer(plain.access_token), body: { user_id: plain.user_id } })).status,
    ).to.equal(403);
    const unknown = await svc.req('POST', `/api/admin/communities/${id}/admins`, { headers: bearer(root.access_token), body: { user_id: 'usr_nobody' } });
    expect(unknown.status).to.equal(404);
    const named = await svc.req('POST', `/api/admin/communities/${id}/admins`, { headers: bearer(root.access_token), body: { user_id: admin.user_id } });
    expect(named.status, named.text).to.equal(200);
    expect(named.body.admins).to.deep.equal([admin.user_id]);
    expect((await svc.req('POST', '/api/admin/communities', { headers: bearer(root.access_token), body: { name: '' } })).status).to.equal(422);
  });

  it('invite codes: create, QR of the join link (PNG and SVG), join, pause, exhaust, analytics', async () => {
    const member1 = await signUp(svc, outbox);
    const member2 = await signUp(svc, outbox);
    const { community_id, circle_id } = await communityWith(svc, root, admin, [], 'Invites');
    const code = await svc.req('POST', '/api/admin/community-admin/codes', {
      headers: bearer(admin.access_token),
      body: { community_id, label: 'Launch', max_uses: 1 },
    });
    expect(code.status, code.text).to.equal(201);
    expect(code.body.code).to.match(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{10}$/);
    expect(code.body).to.include({ status: 'active', uses: 0, max_uses: 1, label: 'Launch', join_url: `https://net.example.com/join/${code.body.code}` });
    const png = await svc.req('GET', `/api/admin/community-admin/code-qr/${code.body.code}`, { headers: bearer(admin.access_token) });
    expect(png.status).to.equal(200);
    expect(png.headers['content-type']).to.equal('image/png');
    expect(Buffer.from(png.text, 'latin1').subarray(1, 4).toString()).to.equal('PNG');
    const svg = await svc.req('GET', `/api/admin/community-admin/code-qr/${code.body.code}?format=svg`, { headers: bearer(admin.access_token) });
    expect(svg.headers['content-type']).to.include('image/svg+xml');
    expect(svg.text).to.include('<svg');
    // The QR code is the join URL's (the qrcode package, error correction M, margin 2).
    expect(svg.text).to.equal(await QRCode.toString(code.body.join_url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }));
    expect(svg.text).to.not.equal(await QRCode.toString(`${code.body.join_url}X`, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }));
    expect((await svc.req('GET', `/api/admin/community-admin/code-qr/NOSUCHCODE`, { headers: bearer(admin.access_token) })).status).to.equal(404);

    const joined = await svc.req('POST', '/api/communities/join', { headers: bearer(member1.access_token), body: { code: code.body.code.toLowerCase() } });
    expect(joined.status, joined.text).to.equal(200);
    expect(joined.body).to.deep.include({ joined: true });
    expect(joined.body.community.community_id).to.equal(community_id);
    const exhausted = await svc.req('POST', '/api/communities/join', { headers: bearer(member2.access_token), body: { code: code.body.code } });
    expect(exhausted.status).to.equal(409);
    expect(exhausted.body.code).to.equal('invite_code_exhausted');
    const unknown = await svc.req('POST', '/api/communities/join', { headers: bearer(member2.access_token), body: { code: 'ZZZZZZZZZZ' } });
    expect(unknown.status).to.equal(404);

    const open = await svc.req('POST', '/api/admin/community-admin/codes', { headers: bearer(admin.access_token), body: { community_id } });
    const paused = await svc.req('PUT', `/api/admin/community-admin/codes/${open.body.code_id}`, {
      headers: bearer(admin.access_token),
      body: { status: 'paused' },
    });
    expect(paused.status, paused.text).to.equal(200);
    expect(paused.body.status).to.equal('paused');
    const refused = await svc.req('POST', '/api/communities/join', { headers: bearer(member2.access_token), body: { code: open.body.code } });
    expect(refused.status).to.equal(409);
    expect(refused.body.code).to.equal('invite_code_inactive');
    expect(
      (await svc.req('PUT', `/api/admin/community-admin/codes/${open.body.code_id}`, { headers: bearer(admin.access_token), body: { status: 'gone' } })).status,
    ).to.equal(422);

    const stats = await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) });
    expect(stats.status).to.equal(200);
    expect(stats.body.total_uses).to.equal(1);
    expect(stats.body.codes.find((c: { code_id: string }) => c.code_id === code.body.code_id)).to.include({ uses: 1, active_members: 1 });
    expect(stats.body.joins_per_day).to.deep.equal([{ date: '2026-03-10', joins: 2 }]); // the admin (named) and member1

    // The member is in the community's first circle.
    const members = await svc.req('GET', `/api/admin/community-admin/members?community_id=${community_id}&circle_filter=${circle_id}`, {
      headers: bearer(admin.access_token),
    });
    expect(members.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([member1.user_id]);
  });

  it('members: page, limit, search, community_id and circle filter; removal by the admin of that community only', async () => {
    const a = await signUp(svc, outbox);
    const b = await signUp(svc, outbox);
    const { community_id } = await communityWith(svc, root, admin, [a, b], 'Members');
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(b.access_token), body: { full_name: 'Barbara Liskov' } });
    const page = await svc.req('GET', `/api/admin/community-admin/members?community_id=${community_id}&limit=2&page=0`, {
      headers: bearer(admin.access_token),
    });
    expect(page.status, page.text).to.equal(200);
    expect(page.body.total).to.equal(3);
    expect(page.body.members).to.have.length(2);
    expect(page.body.has_more).to.equal(true);
    const searched = await svc.req('GET', `/api/admin/community-admin/members?community_id=${community_id}&search=ada`, {
      headers: bearer(admin.access_token),
    });
    expect(searched.body.members.length).to.be.greaterThan(0);
    const plan = await svc.running.services.store
      .collection('community_members')
      .explain({ live_community: { $in: [community_id] } }, { hint: 'by_community' });
    expect(plan.index).to.equal('by_community');

    const other = await communityWith(svc, root, otherAdmin, [], 'Elsewhere');
    const foreign = await svc.req('DELETE', `/api/admin/community-admin/members/${a.user_id}?community_id=${community_id}`, {
      headers: bearer(otherAdmin.access_token),
    });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('community_admin_required');
    expect(
      (await svc.req('GET', `/api/admin/community-admin/dashboard?community_id=${other.community_id}`, { headers: bearer(admin.access_token) })).status,
    ).to.equal(403);
    const removed = await svc.req('DELETE', `/api/admin/community-admin/members/${a.user_id}`, { headers: bearer(admin.access_token) });
    expect(removed.status, removed.text).to.equal(200);
    const after = await svc.req('GET', `/api/admin/community-admin/members?community_id=${community_id}`, { headers: bearer(admin.access_token) });
    expect(after.body.members.map((m: { user_id: string }) => m.user_id)).to.not.include(a.user_id);
    expect(
      (await svc.req('DELETE', `/api/admin/community-admin/members/${a.user_id}?community_id=${community_id}`, { headers: bearer(admin.access_token) })).status,
    ).to.equal(404);
    // Super admins act on any community.
    const bySuper = await svc.req('DELETE', `/api/admin/community-admin/members/${b.user_id}?community_id=${community_id}`, {
      headers: bearer(root.access_token),
    });
    expect(bySuper.status).to.equal(200);
  });

  it('dashboard: the caller’s communities with counts; a super admin sees every community', async () => {
    const { community_id } = await communityWith(svc, root, admin, [await signUp(svc, outbox)], 'Dash');
    const mine = await svc.req('GET', '/api/admin/community-admin/dashboard', { headers: bearer(admin.access_token) });
    expect(mine.status).to.equal(200);
    const dash = mine.body.communities.find((c: { community_id: string }) => c.community_id === community_id);
    expect(dash.stats).to.include({ members: 2, circles: 1, invite_codes: 1, code_uses: 1 });
    const all = await svc.req('GET', '/api/admin/community-admin/dashboard', { headers: bearer(root.access_token) });
    expect(all.body.super_admin).to.equal(true);
    expect(all.body.communities.length).to.be.greaterThan(mine.body.communities.length - 1);
  });

  it('circle visibility and join requests: approve or reject with admin_note', async () => {
    const outsider = await signUp(svc, outbox);
    const rejected = await signUp(svc, outbox);
    const { community_id } = await communityWith(svc, root, admin, [], 'Requests');
    const circle = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: 'Open office hours', visibility: 'community' },
    });
    expect(circle.status, circle.text).to.equal(201);
    const id = circle.body.circle_id;
    const missing = await svc.req('PUT', `/api/admin/community-admin/circles/${id}/visibility`, { headers: bearer(admin.access_token) });
    expect(missing.status).to.equal(422);
    const bad = await svc.req('PUT', `/api/admin/community-admin/circles/${id}/visibility?visibility=secret`, { headers: bearer(admin.access_token) });
    expect(bad.status).to.equal(422);
    const pub = await svc.req('PUT', `/api/admin/community-admin/circles/${id}/visibility?visibility=public`, { headers: bearer(admin.access_token) });
    expect(pub.status, pub.text).to.equal(200);
    expect(pub.body.visibility).to.equal('public');

    const asked = await svc.req('POST', `/api/brew-circles/${id}/join`, { headers: bearer(outsider.access_token) });
    expect(asked.status, asked.text).to.equal(200);
    expect(asked.body.status).to.equal('pending');
    await svc.req('POST', `/api/brew-circles/${id}/join`, { headers: bearer(rejected.access_token) });
    const pending = await svc.req('GET', `/api/admin/community-admin/circle-requests?status=pending`, { headers: bearer(admin.access_token) });
    expect(pending.status).to.equal(200);
    const mine = pending.body.requests.filter((r: { circle_id: string }) => r.circle_id === id);
    expect(mine).to.have.length(2);
    const reqOf = (u: User) => mine.find((r: { user_id: string }) => r.user_id === u.user_id).request_id;
    const approved = await svc.req('POST', `/api/admin/community-admin/circle-requests/${reqOf(outsider)}/approve?admin_note=Welcome`, {
      headers: bearer(admin.access_token),
    });
    expect(approved.status, approved.text).to.equal(200);
    expect(approved.body).to.include({ status: 'approved', admin_note: 'Welcome' });
    const again = await svc.req('POST', `/api/admin/community-admin/circle-requests/${reqOf(outsider)}/reject`, { headers: bearer(admin.access_token) });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('join_request_decided');
    const no = await svc.req('POST', `/api/admin/community-admin/circle-requests/${reqOf(rejected)}/reject`, { headers: bearer(admin.access_token) });
    expect(no.body).to.include({ status: 'rejected', admin_note: '' });
    const decided = await svc.req('GET', `/api/admin/community-admin/circle-requests?status=approved&community_id=${community_id}`, {
      headers: bearer(admin.access_token),
    });
    expect(decided.body.requests.map((r: { user_id: string }) => r.user_id)).to.deep.equal([outsider.user_id]);
    // The approved member is now in the circle (and the community); the notifications are checked in the circles tests.
    const members = await svc.req('GET', `/api/admin/community-admin/members?community_id=${community_id}&circle_filter=${id}`, {
      headers: bearer(admin.access_token),
    });
    expect(members.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([outsider.user_id]);
  });

  it('every community admin route answers 401 without a token and 403 to a plain member', async () => {
    const { community_id, circle_id, code } = await communityWith(svc, root, admin, [await signUp(svc, outbox)], 'Guarded');
    const codes = await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) });
    const codeId = codes.body.codes[0].code_id;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `/api/admin/community-admin/invite-analytics/${community_id}`],
      ['GET', '/api/admin/community-admin/dashboard'],
      ['GET', `/api/admin/community-admin/dashboard?community_id=${community_id}`],
      ['GET', '/api/admin/community-admin/members'],
      ['GET', `/api/admin/community-admin/members?community_id=${community_id}`],
      ['DELETE', `/api/admin/community-admin/members/${admin.user_id}?community_id=${community_id}`],
      ['DELETE', `/api/admin/community-admin/members/${admin.user_id}`],
      ['POST', '/api/admin/community-admin/codes', { community_id }],
      ['PUT', `/api/admin/community-admin/codes/${codeId}`, { status: 'revoked' }],
      ['GET', `/api/admin/community-admin/code-qr/${code}`],
      ['PUT', `/api/admin/community-admin/circles/${circle_id}/visibility?visibility=private`],
      ['POST', `/api/admin/community-admin/circles`, { community_id, name: 'x' }],
      ['POST', `/api/admin/community-admin/circles/${circle_id}/members`, { user_id: plain.user_id }],
      ['GET', '/api/admin/community-admin/circle-requests'],
      ['POST', '/api/admin/community-admin/circle-requests/cjr_none/approve'],
      ['POST', '/api/admin/community-admin/circle-requests/cjr_none/reject'],
      ['POST', '/api/admin/communities', { name: 'x' }],
      ['POST', `/api/admin/communities/${community_id}/admins`, { user_id: plain.user_id }],
    ];
    for (const [method, path, body] of routes) {
      const anon = await svc.req(method, path, { body });
      expect(anon.status, `${method} ${path} without a token`).to.equal(401);
      const member = await svc.req(method, path, { body, headers: bearer(plain.access_token) });
      expect(member.status, `${method} ${path} as a plain member: ${member.text}`).to.equal(403);
      expect(member.body.code).to.be.oneOf(['community_admin_required', 'admin_required']);
    }
    // Nothing changed: the code is still active, the admin still a member.
    const after = await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) });
    expect(after.body.codes[0].status).to.equal('active');
  });

  it('the admin of another community gets 403 on every route that names this community (its id, a code, a circle, a request); a super admin acts on it', async () => {
    const member = await signUp(svc, outbox);
    const asker = await signUp(svc, outbox);
    const { community_id, circle_id, code } = await communityWith(svc, root, admin, [member], 'Fenced');
    await communityWith(svc, root, otherAdmin, [], 'Next door');
    const pub = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: 'Fenced open table', visibility: 'public' },
    });
    const asked = await svc.req('POST', `/api/brew-circles/${pub.body.circle_id}/join`, { headers: bearer(asker.access_token) });
    expect(asked.body.status).to.equal('pending');
    const codeId = (await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) })).body.codes[0]
      .code_id;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `/api/admin/community-admin/invite-analytics/${community_id}`],
      ['GET', `/api/admin/community-admin/dashboard?community_id=${community_id}`],
      ['GET', `/api/admin/community-admin/members?community_id=${community_id}`],
      ['DELETE', `/api/admin/community-admin/members/${member.user_id}?community_id=${community_id}`],
      ['POST', '/api/admin/community-admin/codes', { community_id }],
      ['PUT', `/api/admin/community-admin/codes/${codeId}`, { status: 'revoked' }],
      ['GET', `/api/admin/community-admin/code-qr/${code}`],
      ['POST', '/api/admin/community-admin/circles', { community_id, name: 'Annex' }],
      ['PUT', `/api/admin/community-admin/circles/${circle_id}/visibility?visibility=private`],
      ['POST', `/api/admin/community-admin/circles/${circle_id}/members`, { user_id: member.user_id }],
      ['GET', `/api/admin/community-admin/circle-requests?community_id=${community_id}`],
      ['POST', `/api/admin/community-admin/circle-requests/${asked.body.request_id}/approve`],
      ['POST', `/api/admin/community-admin/circle-requests/${asked.body.request_id}/reject`],
    ];
    for (const [method, path, body] of routes) {
      const r = await svc.req(method, path, { body, headers: bearer(otherAdmin.access_token) });
      expect(r.status, `${method} ${path} as another community's admin: ${r.text}`).to.equal(403);
      expect(r.body.code).to.equal('community_admin_required');
    }
    // Their own lists leave this community out.
    const theirs = await svc.req('GET', '/api/admin/community-admin/circle-requests', { headers: bearer(otherAdmin.access_token) });
    expect(theirs.body.requests.map((r: { request_id: string }) => r.request_id)).to.not.include(asked.body.request_id);
    // Nothing changed; the super admin decides the request.
    expect(
      (await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) })).body.codes[0].status,
    ).to.equal('active');
    const decided = await svc.req('POST', `/api/admin/community-admin/circle-requests/${asked.body.request_id}/approve`, {
      headers: bearer(root.access_token),
    });
    expect(decided.status, decided.text).to.equal(200);
    expect(decided.body.status).to.equal('approved');
  });
});
