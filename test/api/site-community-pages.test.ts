import { expect } from 'chai';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestResponse, TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { expectOwnScripts } from '../helpers/pages.ts';

const BASE = 'https://net.example.com';
const XSS_NAME = `Evil "Bot" <script>alert('x')</script>`;
const XSS_NAME_HTML = 'Evil &quot;Bot&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;';
const XSS_POST = `Hi <img src=x onerror="alert(1)"> & bye`;

/** The JSON-LD object of a page (it must parse, and hold no `<` that could close its script). */
function jsonLdOf(res: TestResponse): Record<string, unknown> {
  const m = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(res.text);
  expect(m, 'the page has JSON-LD').to.not.equal(null);
  expect(m?.[1]).to.not.contain('<');
  return JSON.parse(m?.[1] ?? '{}') as Record<string, unknown>;
}
const metaOf = (res: TestResponse, property: string) =>
  new RegExp(`<meta (?:property|name)="${property}" content="([^"]*)">`).exec(res.text)?.[1].replace(/&amp;/g, '&') ?? null;

// The agent, claim, circle and invite pages over plain HTTP: escaping, meta and JSON-LD, caching,
// and 404s (the browser side is test/site/pages.browser.test.ts).
describe('site: agent, claim, circle and invite pages (issue 18)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let root: User;
  let admin: User;
  let member: User;
  let agent: { agent_id: string };
  let community_id: string;
  let circle_id: string;
  let code: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ PUBLIC_BASE_URL: BASE, ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, member] = [await signUp(svc, outbox), await signUp(svc, outbox)];
    agent = await svc.register({ name: XSS_NAME, capabilities: ['lead-gen'], description: XSS_POST });
    ({ community_id, circle_id, code } = await communityWith(svc, root, admin, [member], XSS_NAME));
  });
  after(() => stopWithOutbox(svc, outbox));

  it('escapes the agent name on its profile and claim pages, with meta, canonical link and JSON-LD; the claim page is not cached', async () => {
    const profile = await svc.req('GET', `/agents/${agent.agent_id}`);
    expect(profile.status).to.equal(200);
    expect(profile.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(profile.headers['cache-control']).to.equal('public, max-age=300');
    expect(profile.text).to.contain(`<h1>${XSS_NAME_HTML}</h1>`);
    expect(profile.text).to.not.contain('<img');
    expect(expectOwnScripts(profile.text, 1, 'profile')).to.deep.equal(['app.js', 'pageview.js']);
    expect(metaOf(profile, 'og:title')).to.equal(XSS_NAME_HTML.replace(/&amp;/g, '&'));
    expect(metaOf(profile, 'og:url')).to.equal(`${BASE}/agents/${agent.agent_id}`);
    expect(profile.text).to.contain(`<link rel="canonical" href="${BASE}/agents/${agent.agent_id}">`);
    expect(jsonLdOf(profile)).to.include({ name: XSS_NAME });

    const claim = await svc.req('GET', `/claim/${agent.agent_id}`);
    expect(claim.status).to.equal(200);
    expect(claim.headers['cache-control']).to.equal('no-store');
    expect(claim.text).to.contain(`Claim ${XSS_NAME_HTML}`);
    expect(claim.text).to.not.contain(`<script>alert`);
    // The JSON-LD and the site's own files, the claim script among them: no inline script.
    expect(expectOwnScripts(claim.text, 1, 'claim')).to.deep.equal(['app.js', 'pageview.js', 'claim.js']);
    expect(jsonLdOf(claim)).to.include({ name: `Claim ${XSS_NAME}`, url: `${BASE}/claim/${agent.agent_id}` });

    for (const path of ['/agents/agt_nosuchagent', '/claim/agt_nosuchagent']) {
      const missing = await svc.req('GET', path);
      expect(missing.status, path).to.equal(404);
      expect(missing.body.code).to.equal('agent_not_found');
    }
  });

  it("shows a public circle's page escaped, with JSON-LD and the latest posts; any other visibility, a deleted circle or an unknown one is 404", async () => {
    const pub = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: XSS_NAME, description: XSS_POST, visibility: 'public' },
    });
    await svc.req('POST', `/api/admin/community-admin/circles/${pub.body.circle_id}/members`, {
      headers: bearer(admin.access_token),
      body: { user_id: member.user_id },
    });
    const p = await svc.req('POST', '/api/brew-circles/posts', {
      headers: bearer(member.access_token),
      body: { circle_id: pub.body.circle_id, content: XSS_POST, intent: 'offer' },
    });
    expect(p.status, p.text).to.equal(201);
    const page = await svc.req('GET', `/circles/${pub.body.circle_id}`);
    expect(page.status).to.equal(200);
    expect(page.headers['cache-control']).to.equal('public, max-age=300');
    expect(page.text).to.contain(`<h1>${XSS_NAME_HTML}</h1>`);
    expect(page.text).to.contain('Hi &lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; bye');
    expect(page.text).to.not.contain('<img');
    expect(expectOwnScripts(page.text, 1)).to.deep.equal(['app.js', 'pageview.js']);
    expect(page.text).to.contain('<span class="members">1</span>');
    expect(page.text).to.contain('<span class="posts">1</span>');
    expect(metaOf(page, 'og:url')).to.equal(`${BASE}/circles/${pub.body.circle_id}`);
    expect(jsonLdOf(page)).to.include({ headline: XSS_NAME, url: `${BASE}/circles/${pub.body.circle_id}` });

    // The community's first circle (visibility community) and a private one are not public pages.
    const priv = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: 'Board', visibility: 'private' },
    });
    for (const id of [circle_id, priv.body.circle_id, 'crc_nosuchcircle']) {
      const hidden = await svc.req('GET', `/circles/${id}`);
      expect(hidden.status, id).to.equal(404);
      expect(hidden.body.code).to.equal('circle_not_found');
    }
    // Made private, the public page goes too; a deleted circle likewise.
    await svc.req('PUT', `/api/admin/community-admin/circles/${pub.body.circle_id}/visibility?visibility=private`, { headers: bearer(admin.access_token) });
    expect((await svc.req('GET', `/circles/${pub.body.circle_id}`)).status).to.equal(404);
    await svc.req('PUT', `/api/admin/community-admin/circles/${pub.body.circle_id}/visibility?visibility=public`, { headers: bearer(admin.access_token) });
    expect((await svc.req('GET', `/circles/${pub.body.circle_id}`)).status).to.equal(200);
    expect((await svc.req('DELETE', `/api/brew-circles/${pub.body.circle_id}`, { headers: bearer(admin.access_token) })).status).to.equal(200);
    expect((await svc.req('GET', `/circles/${pub.body.circle_id}`)).status).to.equal(404);
  });

  it('shows the invite page a QR code links to (any letter case), escaped and not cached; a paused code says so; an unknown code is 404', async () => {
    const page = await svc.req('GET', `/join/${code.toLowerCase()}`);
    expect(page.status).to.equal(200);
    expect(page.headers['cache-control']).to.equal('no-store');
    expect(page.text).to.contain(`Join ${XSS_NAME_HTML}`);
    expect(page.text).to.contain(`<code class="invite">${code}</code>`);
    expect(expectOwnScripts(page.text, 1)).to.deep.equal(['app.js', 'pageview.js']);
    expect(jsonLdOf(page)).to.include({ name: `Join ${XSS_NAME}`, url: `${BASE}/join/${code}` });
    const codes = await svc.req('GET', `/api/admin/community-admin/invite-analytics/${community_id}`, { headers: bearer(admin.access_token) });
    await svc.req('PUT', `/api/admin/community-admin/codes/${codes.body.codes[0].code_id}`, {
      headers: bearer(admin.access_token),
      body: { status: 'paused' },
    });
    expect((await svc.req('GET', `/join/${code}`)).text).to.contain(`<code class="invite">${code}</code> (paused)`);
    const missing = await svc.req('GET', '/join/ZZZZZZZZZZ');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('invite_code_not_found');
  });
});
