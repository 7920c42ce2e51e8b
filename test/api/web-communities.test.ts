import { expect } from 'chai';
import { communityPageOperations } from '../../api/routes/web/communities.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

/** A browser over HTTP: the site's cookies, and each form's CSRF token read from its page. */
class WebClient {
  private cookies = new Map<string, string>();
  constructor(private svc: TestService) {}

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private keep(res: TestResponse) {
    const set = res.headers['set-cookie'] ?? [];
    for (const line of set) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
  async get(path: string) {
    return this.keep(await this.svc.req('GET', path, { headers: { cookie: this.cookieHeader() } }));
  }
  async post(path: string, form: Record<string, string>) {
    return this.keep(
      await this.svc.req('POST', path, {
        rawBody: new URLSearchParams(form).toString(),
        headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }
  /** The CSRF token of a page's forms. */
  async token(path = '/app') {
    const page = await this.get(path);
    const m = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!m) throw new Error(`no form token on ${path} (${page.status})`);
    return m[1];
  }
  async signIn(user: User) {
    const _csrf = await this.token('/signin');
    const res = await this.post('/signin', { _csrf, email: user.email, password: user.password, next: '/app' });
    expect(res.status, res.text).to.equal(303);
    return this;
  }
}

describe('web: the communities pages over HTTP (sign-in, CSRF, admin role, escaping)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let member: User;
  let outsider: User;
  let otherAdmin: User;
  let ids: { community_id: string; circle_id: string; code: string };
  let other: { community_id: string; circle_id: string; code: string };
  let code_id: string;
  let request_id: string;
  let privateCircle: string;
  let publicCircle: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, member, outsider, otherAdmin] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    ids = await communityWith(svc, root, admin, [member], 'Founders');
    other = await communityWith(svc, root, otherAdmin, [], 'Elsewhere');
    const codes = await svc.req('GET', `/api/admin/community-admin/invite-analytics/${ids.community_id}`, { headers: bearer(admin.access_token) });
    code_id = codes.body.codes[0].code_id;
    const mk = async (name: string, visibility: string) => {
      const c = await svc.req('POST', '/api/admin/community-admin/circles', {
        headers: bearer(admin.access_token),
        body: { community_id: ids.community_id, name, visibility },
      });
      expect(c.status, c.text).to.equal(201);
      return c.body.circle_id as string;
    };
    privateCircle = await mk('Board room', 'private');
    publicCircle = await mk('Open door', 'public');
    const asked = await svc.req('POST', `/api/brew-circles/${publicCircle}/join`, { headers: bearer(outsider.access_token) });
    expect(asked.body.status).to.equal('pending');
    request_id = asked.body.request_id;
  });
  after(() => stopWithOutbox(svc, outbox));

  const adminPages = () => [`/app/communities/${ids.community_id}/admin`];
  const adminPosts = (): Array<[string, Record<string, string>]> => [
    [`/app/communities/${ids.community_id}/admin/members/${member.user_id}/remove`, {}],
    [`/app/communities/${ids.community_id}/admin/codes`, { label: 'x' }],
    [`/app/communities/${ids.community_id}/admin/codes/${code_id}/status`, { status: 'paused' }],
    [`/app/communities/${ids.community_id}/admin/circles/${ids.circle_id}/visibility`, { visibility: 'public' }],
    [`/app/communities/${ids.community_id}/admin/requests/${request_id}/decide`, { decision: 'approve', admin_note: 'hi' }],
  ];
  const memberPages = () => ['/app/communities', `/app/communities/${ids.community_id}`, `/app/circles/${ids.circle_id}`, ...adminPages()];

  it('sends a signed-out browser to sign-in (302) from every page, and back after', async () => {
    const web = new WebClient(svc);
    for (const path of memberPages()) {
      const res = await web.get(path);
      expect(res.status, path).to.equal(302);
      expect(res.headers.location, path).to.equal(`/signin?next=${encodeURIComponent(path)}`);
    }
  });

  it('refuses a signed-out form post (401) and a post without its page token (403 csrf_failed), changing nothing', async () => {
    const anon = new WebClient(svc);
    const r = await anon.post(`/app/circles/${ids.circle_id}/posts`, { _csrf: 'x', content: 'hello', intent: 'update' });
    expect(r.status).to.equal(401);
    const web = await new WebClient(svc).signIn(admin);
    const posts = [
      ['/app/communities/join', { code: ids.code }],
      [`/app/circles/${ids.circle_id}/posts`, { content: 'forged', intent: 'update' }],
      [`/app/circles/${ids.circle_id}/join`, {}],
      ...adminPosts(),
    ] as Array<[string, Record<string, string>]>;
    for (const [path, form] of posts) {
      for (const token of [undefined, 'forged-token']) {
        const res = await web.post(path, token ? { ...form, _csrf: token } : form);
        expect(res.status, path).to.equal(403);
        expect(res.text, path).to.include('This form has expired or did not come from this site');
      }
    }
    const feed = await svc.req('GET', `/api/brew-circles/${ids.circle_id}/posts`, { headers: bearer(admin.access_token) });
    expect(feed.body.posts).to.have.length(0);
    const req = await svc.req('GET', `/api/admin/community-admin/circle-requests?community_id=${ids.community_id}`, { headers: bearer(admin.access_token) });
    expect(req.body.requests[0].status).to.equal('pending');
  });

  it('refuses a member who is not its admin (and the admin of another community) on every admin page and post: 403, nothing changes', async () => {
    for (const who of [member, otherAdmin]) {
      const web = await new WebClient(svc).signIn(who);
      for (const path of adminPages()) {
        const res = await web.get(path);
        expect(res.status, path).to.equal(403);
        expect(res.headers['content-type']).to.include('text/html');
        expect(res.text).to.not.include('Invite codes');
      }
      const _csrf = await web.token('/app/communities');
      for (const [path, form] of adminPosts()) {
        const res = await web.post(path, { ...form, _csrf });
        expect(res.status, path).to.equal(403);
      }
    }
    // A community that does not exist is 404 to an admin.
    const web = await new WebClient(svc).signIn(admin);
    expect((await web.get('/app/communities/cmt_nope/admin')).status).to.equal(404);
    // An admin naming another community's object under their own community's pages: 404.
    const _csrf = await web.token('/app/communities');
    const foreign = await web.post(`/app/communities/${ids.community_id}/admin/circles/${other.circle_id}/visibility`, { _csrf, visibility: 'private' });
    expect(foreign.status).to.equal(404);
    const dashboard = await svc.req('GET', '/api/admin/community-admin/circle-requests', { headers: bearer(admin.access_token) });
    expect(dashboard.body.requests[0].status).to.equal('pending');
    const still = await svc.req('GET', `/api/brew-circles/${other.circle_id}`, { headers: bearer(otherAdmin.access_token) });
    expect(still.body.visibility).to.not.equal('private');
    const inCommunity = await svc.req('GET', `/api/admin/community-admin/members?community_id=${ids.community_id}`, { headers: bearer(admin.access_token) });
    expect(inCommunity.body.members.map((m: { user_id: string }) => m.user_id)).to.include(member.user_id);
  });

  it('does not show circles a member may not see: a private circle is 404, its community page leaves it out', async () => {
    const web = await new WebClient(svc).signIn(member);
    expect((await web.get(`/app/circles/${privateCircle}`)).status).to.equal(404);
    const page = await web.get(`/app/communities/${ids.community_id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('Open door').and.not.include('Board room');
    // Someone outside the community sees only its public circle.
    const out = await (await new WebClient(svc).signIn(outsider)).get(`/app/communities/${ids.community_id}`);
    expect(out.text).to.include('Open door').and.include('Your request to join is waiting');
    expect(out.text).to.not.include(`/app/circles/${ids.circle_id}"`);
    // Someone with no tie to a community that has no public circle: 404, as if it did not exist.
    const none = await (await new WebClient(svc).signIn(outsider)).get(`/app/communities/${other.community_id}`);
    expect(none.status).to.equal(404);
  });

  it('escapes what people write: a circle post with <script> is text on the page', async () => {
    const web = await new WebClient(svc).signIn(member);
    const _csrf = await web.token(`/app/circles/${ids.circle_id}`);
    const evil = '<script>alert("x")</script> & <img src=x onerror=alert(1)>';
    const res = await web.post(`/app/circles/${ids.circle_id}/posts`, {
      _csrf,
      content: evil,
      intent: 'ask',
      link_url: 'https://example.com/"><script>x</script>',
    });
    expect(res.status, res.text).to.equal(303);
    const page = await web.get(`/app/circles/${ids.circle_id}`);
    expect(page.text).to.not.include('<script>alert').and.not.include('<img src=x');
    expect(page.text).to.include('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).to.include('https://example.com/&quot;&gt;&lt;script&gt;x&lt;/script&gt;');
    expect(page.headers['content-security-policy']).to.include("script-src 'self'").and.include("frame-ancestors 'none'");
    // A blank post is the form again with the problem, keeping nothing unescaped either.
    const blank = await web.post(`/app/circles/${ids.circle_id}/posts`, { _csrf, content: '   ', intent: 'ask' });
    expect(blank.status).to.equal(422);
    expect(blank.text).to.include('role="alert"');
    // A link the SSRF guard refuses is 422 on the form, with no fetch.
    const refused = await web.post(`/app/circles/${ids.circle_id}/link-preview`, { _csrf, link_url: 'http://169.254.169.254/latest', content: 'draft <b>' });
    expect(refused.status).to.equal(422);
    expect(refused.text).to.include('draft &lt;b&gt;');
  });

  it('joins by code from the form, and the public /join/:code page leads there', async () => {
    const joinPage = await svc.req('GET', `/join/${ids.code}`);
    expect(joinPage.text).to.include(`/app/communities?code=${ids.code}`);
    const web = await new WebClient(svc).signIn(outsider);
    const form = await web.get(`/app/communities?code=${ids.code}`);
    expect(form.text).to.include(`value="${ids.code}"`);
    const _csrf = await web.token('/app/communities');
    const bad = await web.post('/app/communities/join', { _csrf, code: 'NOPE<b>' });
    expect(bad.status).to.equal(404);
    expect(bad.text).to.include('does not match any community').and.include('NOPE&lt;b&gt;');
    const ok = await web.post('/app/communities/join', { _csrf, code: ids.code });
    expect(ok.status).to.equal(303);
    expect(ok.headers.location).to.equal(`/app/communities/${ids.community_id}`);
    const list = await web.get('/app/communities');
    expect(list.text).to.include('Founders');
  });

  it('answers every communities page and form (its page, or the form again with a problem) with a page no other site may frame', async () => {
    const web = await new WebClient(svc).signIn(admin);
    const _csrf = await web.token('/app/communities');
    const post = (
      await svc.req('POST', '/api/brew-circles/posts', {
        headers: bearer(admin.access_token),
        body: { circle_id: ids.circle_id, content: 'framed', intent: 'update', link_url: 'http://10.0.0.1/x' },
      })
    ).body.post_id as string;
    const paths: Record<string, string> = {
      ':community_id': ids.community_id,
      ':circle_id': ids.circle_id,
      ':post_id': post,
      ':user_id': 'usr_nobody',
      ':code_id': code_id,
      ':request_id': 'cjr_nobody',
    };
    const seen = new Set<string>();
    for (const o of Object.values(communityPageOperations)) {
      const path = o.path.replace(/:[a-z_]+/g, (p) => paths[p] ?? p);
      const res = o.method === 'GET' ? await web.get(path) : await web.post(path, { _csrf });
      if (res.status === 303) continue;
      expect(res.headers['content-type'], `${o.method} ${path}: ${res.status}`).to.match(/^text\/html/);
      expect(res.headers['x-frame-options'], path).to.equal('DENY');
      expect(res.headers['content-security-policy'], path).to.include("frame-ancestors 'none'").and.not.include('unsafe-inline');
      expect(res.headers['cache-control'], path).to.equal('no-store');
      seen.add(`${o.method} ${o.path}`);
    }
    // Every GET page rendered, and most forms answered with a page (the rest redirected).
    for (const o of Object.values(communityPageOperations)) if (o.method === 'GET') expect(seen.has(`GET ${o.path}`), o.path).to.equal(true);
  });
});
