import { expect } from 'chai';
import { bearer, ROOT_EMAIL } from '../helpers/communities.ts';
import { ConsoleClient } from '../helpers/console.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { expectOwnScripts } from '../helpers/pages.ts';

const XSS = `<script>alert("x")</script> & 'q'`;
const XSS_HTML = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;';
const DECK = 'https://decks.example.com/seed.pdf';

// The public site's pages over HTTP: caching, forms' CSRF, escaping, the NDA gate's cookie, and
// the same queries and commands as the API.
describe('web: the public site over HTTP', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let root: Awaited<ReturnType<typeof signUp>>;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    root = await signUp(svc, outbox, ROOT_EMAIL);
  });
  after(() => stopWithOutbox(svc, outbox));

  it('answers the landing page cacheable by anyone: no cookie, an ETag, 304 again, and a fresh render after a new event', async () => {
    const first = await svc.req('GET', '/');
    expect(first.status).to.equal(200);
    expect(first.headers['cache-control']).to.equal('public, max-age=60');
    expect(first.headers['set-cookie']).to.equal(undefined);
    expect(first.headers['content-security-policy']).to.include("frame-ancestors 'none'");
    const etag = String(first.headers.etag);
    expect(etag).to.match(/^"[\w-]+"$/);
    expect(expectOwnScripts(first.text, 1, '/')).to.deep.equal(['app.js', 'pageview.js']);
    const again = await svc.req('GET', '/', { headers: { 'if-none-match': etag } });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    const agents = Number(/data-figure="agents">(\d+)</.exec(first.text)?.[1]);
    // A new agent: the page renders again, with the new figure and a new ETag.
    await svc.register({ name: XSS, capabilities: ['lead-gen'] });
    const fresh = await svc.req('GET', '/', { headers: { 'if-none-match': etag } });
    expect(fresh.status).to.equal(200);
    expect(fresh.headers.etag).to.not.equal(etag);
    expect(Number(/data-figure="agents">(\d+)</.exec(fresh.text)?.[1])).to.equal(agents + 1);
    // The agent's name is escaped in the leaderboard.
    expect(fresh.text).to.contain(XSS_HTML).and.not.contain('<script>alert');
  });

  it('lists the rooms of GET /api/feed/topics in the directory', async () => {
    const api = await svc.req('GET', '/api/feed/topics');
    const page = await svc.req('GET', '/rooms');
    expect(page.status).to.equal(200);
    const slugs = [...page.text.matchAll(/class="room-link" href="\/rooms\/([^"]+)"/g)].map((m) => m[1]);
    expect(slugs).to.deep.equal(api.body.items.map((r: { slug: string }) => r.slug));
    expect(page.text).to.contain('<link rel="canonical" href=');
  });

  it('browses the marketplace as the API searches it: the filters, the pages, and a filter it refuses in plain words', async () => {
    const owner = await svc.register({ name: 'Lister' });
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const r = await svc.req('POST', '/api/agent/marketplace', {
        apiKey: owner.api_key,
        body: { title: `Listing ${i} ${i === 0 ? XSS : ''}`, description: 'Work', category: i % 2 ? 'design' : 'sales', price: 5, pricing_type: 'fixed' },
      });
      expect(r.status, r.text).to.equal(201);
      ids.push(r.body.intent_id as string);
    }
    const shown = (html: string) => [...html.matchAll(/data-listing="([^"]+)"/g)].map((m) => m[1]);
    const first = await svc.req('GET', '/marketplace');
    const api = await svc.req('GET', '/api/agent/marketplace?limit=20', { apiKey: owner.api_key });
    expect(shown(first.text)).to.deep.equal(api.body.items.map((l: { intent_id: string }) => l.intent_id));
    expect(first.text).to.contain('href="/marketplace?page=1"');
    const second = await svc.req('GET', '/marketplace?page=1');
    expect(shown(second.text)).to.have.length(2);
    const design = await svc.req('GET', '/marketplace?q=&category=design&pricing_type=&status=');
    const apiDesign = await svc.req('GET', '/api/agent/marketplace?category=design', { apiKey: owner.api_key });
    expect(shown(design.text)).to.deep.equal(apiDesign.body.items.map((l: { intent_id: string }) => l.intent_id));
    expect(design.text).to.contain('<option value="design" selected>');
    const withXss = await svc.req('GET', '/marketplace?category=sales');
    expect(withXss.text).to.contain(XSS_HTML).and.not.contain('<script>alert');
    const bad = await svc.req('GET', '/marketplace?pricing_type=cheap', { headers: { accept: 'text/html' } });
    expect(bad.status).to.equal(422);
    expect(bad.text).to.contain('Correct the highlighted fields');
  });

  it('refuses the public forms without their CSRF token, in plain words', async () => {
    for (const path of ['/partners', '/pitch-deck']) {
      const jar = new ConsoleClient(svc);
      await jar.get(path);
      const res = await jar.post(path, { name: 'A', email: 'a@example.com', accept: 'yes' }, 'forged');
      expect(res.status, path).to.equal(403);
      expect(res.text, path).to.contain('This form has expired or did not come from this site');
    }
  });

  it('sends a partner lead through the same command as the API, escaping what was typed when a field is refused', async () => {
    const jar = new ConsoleClient(svc);
    const form = await jar.get('/partners');
    expect(form.headers['cache-control']).to.equal('no-store');
    const refused = await jar.post('/partners', { name: XSS, email: 'nope', company: XSS }, ConsoleClient.csrfIn(form));
    expect(refused.status).to.equal(422);
    expect(refused.text).to.contain('Enter an e-mail address like name@example.com.');
    expect(refused.text).to.contain(`value="${XSS_HTML}"`).and.not.contain('<script>alert');
    const sent = await jar.post('/partners', { name: 'Lin', email: 'Lin@Example.com', role: 'CTO' }, ConsoleClient.csrfIn(refused));
    expect(sent.status).to.equal(303);
    expect(sent.headers.location).to.equal('/partners');
    const confirmation = await jar.get('/partners');
    expect(confirmation.text).to.contain('Thank you, Lin: your details reached our team. We will write to Lin@Example.com soon.');
    const leads = await svc.req('GET', '/api/admin/partner-leads', { headers: bearer(root.access_token) });
    // The API's command: the address lower-cased, the empty fields null.
    expect(leads.body.leads[0]).to.include({ name: 'Lin', email: 'lin@example.com', role: 'CTO', company: null, message: null });
  });

  it('shows the deck link only to a browser that accepted the NDA; a forged gate cookie shows nothing', async () => {
    const set = await svc.req('PUT', '/api/pitch-deck/settings', { headers: bearer(root.access_token), body: { url: DECK } });
    expect(set.status, set.text).to.equal(200);
    const forged = await svc.req('GET', '/pitch-deck', { headers: { cookie: 'an_nda=nda_forged' } });
    expect(forged.text).to.not.contain(DECK);
    const jar = new ConsoleClient(svc);
    const form = await jar.get('/pitch-deck');
    expect(form.text).to.not.contain(DECK);
    const unticked = await jar.post('/pitch-deck', { name: 'Ada', email: 'ada@example.com' }, ConsoleClient.csrfIn(form));
    expect(unticked.status).to.equal(422);
    expect(unticked.text).to.contain('Tick the box to accept the NDA.').and.not.contain(DECK);
    const accepted = await jar.post('/pitch-deck', { name: 'Ada', email: 'ada@example.com', accept: 'yes' }, ConsoleClient.csrfIn(unticked));
    expect(accepted.status).to.equal(303);
    expect(String(accepted.headers['set-cookie'])).to.match(/an_nda=nda_[^;]+; path=\/pitch-deck;.*httponly/i);
    const deck = await jar.get('/pitch-deck');
    expect(deck.headers['cache-control']).to.equal('no-store');
    expect(deck.text).to.contain(`href="${DECK}"`);
  });

  it('sets the deck link from the console with the API command: CSRF-checked, an http link refused on the page, members refused', async () => {
    const other = 'https://decks.example.com/series-a.pdf';
    const c = new ConsoleClient(svc);
    expect((await c.signIn(ROOT_EMAIL, 'correct horse battery')).status).to.equal(303);
    const site = await c.get('/admin/site');
    expect((await c.post('/admin/site/pitch-deck', { url: other }, 'forged')).status).to.equal(403);
    const refused = await c.post('/admin/site/pitch-deck', { url: 'http://deck.example.com' }, ConsoleClient.csrfIn(site));
    expect(refused.status).to.equal(422);
    expect(refused.text).to.contain('must be a full address starting with https://');
    const saved = await c.post('/admin/site/pitch-deck', { url: other }, ConsoleClient.csrfIn(site));
    expect(saved.status).to.equal(303);
    const settings = await svc.req('GET', '/api/pitch-deck/settings');
    expect(settings.body.url).to.equal(other);
    // A member who is not a super admin cannot.
    const member = await signUp(svc, outbox);
    const m = new ConsoleClient(svc);
    await m.signIn(member.email, member.password);
    const tried = await m.post('/admin/site/pitch-deck', { url: DECK }, ConsoleClient.csrfIn(await m.get('/admin/login')));
    expect(tried.status).to.be.oneOf([401, 403]);
    expect((await svc.req('GET', '/api/pitch-deck/settings')).body.url).to.equal(other);
  });
});
