import { expect } from 'chai';
import { ACCESS_TTL_S } from '../../commands/humans/tokens.ts';
import { myAgentOperations } from '../../api/routes/web/my-agents.ts';
import { myProfileOperations } from '../../api/routes/web/my-profile.ts';
import { ConsoleClient as Browser } from '../helpers/console.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';

/** The member app's account pages over HTTP: who may see and post what (docs/WEB.md). */
describe('api: the member app account pages (sessions, CSRF, ownership, escaping)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let ada: Awaited<ReturnType<typeof signUpWithAgent>>;
  let bob: Awaited<ReturnType<typeof signUp>>;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    ada = await signUpWithAgent(svc, outbox, { name: 'Ada <b>bold</b> agent' });
    bob = await signUp(svc, outbox);
  });
  after(() => stopWithOutbox(svc, outbox));

  async function signedIn(user: { email: string; password: string }): Promise<Browser> {
    const browser = new Browser(svc);
    const form = await browser.get('/signin');
    const res = await browser.post('/signin', { email: user.email, password: user.password }, Browser.csrfIn(form));
    expect(res.status, res.text).to.equal(303);
    return browser;
  }

  const memberPages = ['/app', '/app/claim', '/app/agents/agt_x', '/app/elite-key', '/app/profile', '/app/notifications'];

  it('sends a signed-out browser from every member page to sign-in and back', async () => {
    const browser = new Browser(svc);
    for (const path of memberPages) {
      const res = await browser.get(path);
      expect(res.status, path).to.equal(302);
      expect(res.headers.location, path).to.equal(`/signin?next=${encodeURIComponent(path)}`);
    }
    // Every GET page of these modules is in that list.
    const gets = [...Object.values(myAgentOperations), ...Object.values(myProfileOperations)].filter((op) => op.method === 'GET').map((op) => op.path);
    expect(gets.map((p) => p.replace(':id', 'agt_x')).filter((p) => !memberPages.includes(p))).to.deep.equal([]);
  });

  it('refuses a member form without its page token (403 csrf_failed), and a signed-out post (401)', async () => {
    const browser = await signedIn(bob);
    const posts = [...Object.values(myAgentOperations), ...Object.values(myProfileOperations)]
      .filter((op) => op.method === 'POST')
      .map((op) => op.path.replace(':id', ada.agent.agent_id));
    for (const path of posts) {
      const res = await browser.post(path, { full_name: 'X' }, 'forged');
      expect(res.status, path).to.equal(403);
      expect(res.text, path).to.include('This form has expired or did not come from this site');
    }
    const stranger = new Browser(svc);
    const res = await stranger.post('/app/profile', { full_name: 'X' }, 'forged');
    expect(res.status).to.equal(401);
    // The public account forms need the token too.
    for (const path of ['/signup', '/signup/verify', '/forgot-password', '/reset-password']) {
      const r = await stranger.post(path, { email: bob.email }, 'forged');
      expect(r.status, path).to.equal(403);
    }
  });

  it("answers another member's agent as not found, and leaves its key working", async () => {
    const browser = await signedIn(bob);
    const page = await browser.get(`/app/agents/${ada.agent.agent_id}`);
    expect(page.status).to.equal(404);
    expect(page.text).to.not.include('Ada');
    const csrf = Browser.csrfIn(await browser.get('/app'));
    const rotate = await browser.post(`/app/agents/${ada.agent.agent_id}/rotate-key`, {}, csrf);
    expect(rotate.status).to.equal(404);
    expect(rotate.text).to.not.match(/ak_|agk_|secret/);
    const me = await svc.req('GET', '/api/protocol/me', { apiKey: ada.agent.api_key });
    expect(me.status).to.equal(200);
    // The owner sees it, with its name escaped.
    const own = await (await signedIn(ada.user)).get(`/app/agents/${ada.agent.agent_id}`);
    expect(own.status).to.equal(200);
    expect(own.text).to.include('Ada &lt;b&gt;bold&lt;/b&gt; agent').and.not.include('<b>bold</b>');
  });

  it('rotates the key of an owned agent once: the new key on the answer only, the old one refused', async () => {
    const browser = await signedIn(ada.user);
    const page = await browser.get(`/app/agents/${ada.agent.agent_id}`);
    const res = await browser.post(`/app/agents/${ada.agent.agent_id}/rotate-key`, {}, Browser.csrfIn(page));
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    const key = /id="new-key"[^>]*>([^<]+)</.exec(res.text)?.[1] ?? '';
    expect(key).to.have.length.greaterThan(20);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: ada.agent.api_key })).status).to.equal(401);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: key })).status).to.equal(200);
    ada.agent.api_key = key;
    // The agent page never shows it again.
    expect((await browser.get(`/app/agents/${ada.agent.agent_id}`)).text).to.not.include(key);
  });

  it('renews the session through the refresh flow once the access token expired (injected clock)', async () => {
    const browser = await signedIn(bob);
    const before = browser.cookies.get('an_session');
    svc.clock.advance((ACCESS_TTL_S + 60) * 1000);
    const res = await browser.get('/app');
    expect(res.status, res.headers.location).to.equal(200);
    expect(browser.cookies.get('an_session')).to.not.equal(before);
  });

  it('escapes what a member typed: the profile, the dashboard header and the e-mail of a sign-up link', async () => {
    const browser = await signedIn(bob);
    const form = await browser.get('/app/profile');
    const saved = await browser.post(
      '/app/profile',
      { full_name: '<script>alert(1)</script>', headline: '"><img src=x onerror=alert(2)>', gives: 'fundraising' },
      Browser.csrfIn(form),
    );
    expect(saved.status, saved.text).to.equal(303);
    const profile = await browser.get('/app/profile');
    expect(profile.text).to.include('&lt;script&gt;alert(1)&lt;/script&gt;').and.not.include('<script>alert(1)');
    expect(profile.text).to.include('&quot;&gt;&lt;img src=x').and.not.include('"><img src=x');
    const link = await browser.get('/signup/verify?email=%22%3E%3Cscript%3Ex%3C%2Fscript%3E');
    expect(link.text).to.not.include('"><script>x</script>');
    const reset = await browser.get('/reset-password?email=%3Cscript%3Ex%3C%2Fscript%3E');
    expect(reset.text).to.not.include('<script>x</script>');
  });

  it('shows a profile the API would refuse as the form again with the field in plain words (422)', async () => {
    const browser = await signedIn(bob);
    const form = await browser.get('/app/profile');
    const res = await browser.post('/app/profile', { full_name: 'Bob', region: 'D1' }, Browser.csrfIn(form));
    expect(res.status).to.equal(422);
    expect(res.text).to.include('Some fields need a change').and.include('Country');
    expect(res.text).to.include('value="D1"');
  });
});
