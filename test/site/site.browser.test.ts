import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { bearer } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { DESKTOP, PHONE, seriousViolations } from '../helpers/web.ts';

const ADMIN = 'site-browser-admin@example.com';
const PASSWORD = 'site browser admin password';
const DECK = 'https://decks.example.com/agent-network-seed.pdf';

// The public site in headless Chromium: the landing page, the rooms directory, the marketplace,
// the NDA gate, the partner form, first-party page views, and the admin console's pages under axe.
describe('site: the public site in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: Awaited<ReturnType<typeof signUp>>;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    admin = await signUp(svc, outbox, ADMIN, PASSWORD);
    browser = await launchBrowser();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  /**
   * The page as it is now passes axe (0 serious or critical), then at phone size has no sideways
   * scroll; screenshots at both sizes (also under docs/screenshots with UPDATE_SCREENSHOTS=1).
   */
  async function checkPage(name: string): Promise<void> {
    expect(await seriousViolations(page), `${name}: axe`).to.deep.equal([]);
    await shoot(`web-site-${name}-desktop`);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: no sideways scroll on a phone`).to.equal(true);
    expect(await seriousViolations(page), `${name}: axe on a phone`).to.deep.equal([]);
    await shoot(`web-site-${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }
  async function shoot(name: string): Promise<void> {
    const path = await screenshot(page, name);
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      const dir = join(process.cwd(), 'docs/screenshots');
      mkdirSync(dir, { recursive: true });
      copyFileSync(path, join(dir, `${name}.png`));
    }
  }
  const pathOf = () => new URL(page.url()).pathname;

  async function consoleSignIn(): Promise<void> {
    await page.goto(`${svc.url}/admin/login`);
    await page.fill('input[name="email"]', ADMIN);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(`${svc.url}/admin/agents`), page.click('button[type="submit"]')]);
  }

  it('shows the landing page: the live figures, trending rooms, top capabilities, the leaderboard and both ways in', async () => {
    const author = await svc.register({ name: 'Landing <b>Leader</b>', capabilities: ['lead-gen', 'b2b-sales'] });
    await svc.register({ name: 'Second agent', capabilities: ['lead-gen'] });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Landing post', body: 'A post for the landing page', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    expect(post.status, post.text).to.equal(200);
    const intel = await svc.req('GET', '/api/network/intelligence');

    const res = await page.goto(`${svc.url}/`);
    expect(res?.status()).to.equal(200);
    expect(res?.headers()['cache-control']).to.equal('public, max-age=60');
    expect(res?.headers()['etag']).to.match(/^"[\w-]+"$/);
    expect(await page.textContent('h1')).to.equal('AI agents and people, side by side');
    for (const k of ['agents', 'posts', 'rooms'] as const) expect(await page.textContent(`[data-figure="${k}"]`), k).to.equal(String(intel.body.counts[k]));
    expect(Number(await page.textContent('[data-figure="agents"]'))).to.be.at.least(2);
    expect(await page.locator('[data-testid="trending"] li').first().textContent()).to.include('Lead Gen');
    expect(await page.locator('[data-testid="capabilities"] li').allTextContents()).to.include('lead-gen (2)');
    expect(await page.locator('[data-testid="leaderboard"] tbody a').allTextContents()).to.include('Landing <b>Leader</b>');
    // The two ways in.
    const devLinks = await page.locator('[data-testid="path-developers"] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(devLinks).to.include.members(['/llms.txt', '/api/docs/agent-instructions.md', '/api/docs/openapi.json', '/.well-known/mcp.json']);
    const peopleLinks = await page.locator('[data-testid="path-people"] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(peopleLinks).to.include.members(['/signup', '/signin']);
    for (const href of devLinks) expect((await page.request.get(`${svc.url}${href}`)).status(), String(href)).to.equal(200);
    // Cached: the same bytes again answer 304 to a browser that has them.
    const again = await page.request.get(`${svc.url}/`, { headers: { 'if-none-match': String(res?.headers()['etag']) } });
    expect(again.status()).to.equal(304);
    await checkPage('landing');
  });

  it('walks from the rooms directory to a room and on to a post', async () => {
    const author = await svc.register({ name: 'Room Walker', capabilities: ['talent-matching'] });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Hiring a <i>designer</i>', body: 'Looking for a product designer.', post_type: 'signal_found', room_slug: 'talent-matching' },
    });
    expect(post.status, post.text).to.equal(200);
    await page.goto(`${svc.url}/`);
    await Promise.all([page.waitForURL(`${svc.url}/rooms`), page.click('header a[href="/rooms"]')]);
    expect(await page.textContent('h1')).to.equal('Rooms');
    expect(await page.getAttribute('header a[href="/rooms"]', 'aria-current')).to.equal('page');
    await checkPage('rooms');
    await Promise.all([page.waitForURL(`${svc.url}/rooms/talent-matching`), page.click('a.room-link[href="/rooms/talent-matching"]')]);
    expect(await page.textContent('h1')).to.equal('Talent Matching room');
    await checkPage('room');
    await Promise.all([page.waitForURL(`${svc.url}/posts/${post.body.post_id}`), page.click(`article[data-post="${post.body.post_id}"] a.post-link`)]);
    expect(await page.textContent('h1')).to.equal('Hiring a <i>designer</i>');
    expect(await page.locator('nav.crumbs a').allTextContents()).to.deep.equal(['Home', 'Rooms', 'Talent Matching']);
    await checkPage('post');
    const agentRes = await page.goto(`${svc.url}/agents/${author.agent_id}`);
    expect(agentRes?.status()).to.equal(200);
    await checkPage('agent');
    await page.goto(`${svc.url}/claim/${author.agent_id}`);
    await checkPage('claim');
  });

  it('browses the marketplace with a filter, then opens a listing', async () => {
    const owner = await svc.register({ name: 'Market Owner' });
    const create = (title: string, category: string) =>
      svc.req('POST', '/api/agent/marketplace', {
        apiKey: owner.api_key,
        body: { title, description: `${title}, described`, category, price: 40, pricing_type: 'fixed' },
      });
    const design = await create('Logo for a <b>startup</b>', 'design');
    expect(design.status, design.text).to.equal(201);
    expect((await create('Fix a flaky test', 'engineering')).status).to.equal(201);
    await page.goto(`${svc.url}/marketplace`);
    expect(await page.textContent('h1')).to.equal('Marketplace');
    expect(await page.locator('[data-testid="listings"] li').count()).to.equal(2);
    await checkPage('marketplace');
    await page.selectOption('#f-category', 'design');
    await Promise.all([page.waitForURL(/\/marketplace\?.*category=design/), page.click('form.filters button[type="submit"]')]);
    expect(await page.locator('[data-testid="listings"] .listing-title').allTextContents()).to.deep.equal(['Logo for a <b>startup</b>']);
    expect(await page.inputValue('#f-category')).to.equal('design');
    // The same query as the API: its answer for the same filter.
    const api = await svc.req('GET', '/api/agent/marketplace?category=design', { apiKey: owner.api_key });
    expect(api.body.items.map((l: { intent_id: string }) => l.intent_id)).to.deep.equal([design.body.intent_id]);
    await Promise.all([page.waitForURL(`${svc.url}/marketplace/${design.body.intent_id}`), page.click('[data-testid="listings"] .listing-title a')]);
    expect(await page.textContent('h1')).to.equal('Logo for a <b>startup</b>');
    await checkPage('listing');
    // A filter the API refuses is the error page in plain words.
    const bad = await page.goto(`${svc.url}/marketplace?category=nonsense`);
    expect(bad?.status()).to.equal(422);
    expect(await page.textContent('[role="alert"]')).to.include('Correct the highlighted fields');
  });

  it('keeps the pitch deck behind the NDA: hidden before, shown after acceptance; super admins set its link in the console', async () => {
    await consoleSignIn();
    await page.goto(`${svc.url}/admin/site`);
    await page.fill('#deck-url-input', 'http://not-secure.example.com/deck');
    await page.click('form[action="/admin/site/pitch-deck"] button');
    await page.waitForSelector('#deck-error');
    expect(await page.textContent('#deck-error')).to.include('must be a full address starting with https://');
    await page.fill('#deck-url-input', DECK);
    await Promise.all([page.waitForURL(/\/admin\/site\?done=/), page.click('form[action="/admin/site/pitch-deck"] button')]);
    expect(await page.textContent('[data-testid="deck-url"]')).to.equal(DECK);
    expect((await svc.req('GET', '/api/pitch-deck/settings')).body.url).to.equal(DECK);

    const visitor = await browser.newContext({ viewport: DESKTOP });
    page = await visitor.newPage();
    try {
      await page.goto(`${svc.url}/pitch-deck`);
      expect(await page.textContent('h1')).to.equal('Pitch deck');
      expect(await page.locator('[data-testid="deck-link"]').count()).to.equal(0);
      expect(await page.content()).to.not.contain(DECK);
      await checkPage('pitch-deck-nda');
      // Not ticking the box is refused in plain words, keeping what was typed.
      await page.fill('#n-name', 'Ada Investor');
      await page.fill('#n-email', 'ada@fund.example.com');
      await page.click('form[action="/pitch-deck"] button[type="submit"]');
      await page.waitForSelector('#n-accept-error');
      expect(await page.textContent('#n-accept-error')).to.equal('Tick the box to accept the NDA.');
      expect(await page.inputValue('#n-email')).to.equal('ada@fund.example.com');
      expect(await page.content()).to.not.contain(DECK);
      await page.check('#n-accept');
      await Promise.all([page.waitForURL(`${svc.url}/pitch-deck`), page.click('form[action="/pitch-deck"] button[type="submit"]')]);
      expect(await page.textContent('[role="status"]')).to.include('the NDA is accepted');
      expect(await page.getAttribute('[data-testid="deck-link"]', 'href')).to.equal(DECK);
      await checkPage('pitch-deck');
      // The gate cookie is the server's, out of page script's reach.
      const gate = (await visitor.cookies()).find((c) => c.name === 'an_nda');
      expect(gate).to.include({ httpOnly: true, path: '/pitch-deck' });
      expect(await page.evaluate(() => document.cookie)).to.not.contain('an_nda');
    } finally {
      await visitor.close();
    }
  });

  it('sends a partner lead from the footer link: an error in plain words first, then the confirmation; the console lists it', async () => {
    await page.goto(`${svc.url}/`);
    await Promise.all([page.waitForURL(`${svc.url}/partners`), page.click('footer a[href="/partners"]')]);
    await checkPage('partners');
    await page.fill('#p-name', 'Grace Partner');
    await page.fill('#p-email', 'not an address');
    await page.click('form[action="/partners"] button[type="submit"]');
    await page.waitForSelector('#problem');
    expect(await page.textContent('#problem')).to.include('Some fields need a change');
    expect(await page.textContent('#p-email-error')).to.equal('Enter an e-mail address like name@example.com.');
    expect(await page.inputValue('#p-name')).to.equal('Grace Partner');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await shoot('web-site-partners-error-desktop');
    await page.fill('#p-email', 'grace@partner.example.com');
    await page.fill('#p-company', 'Partner & Co');
    await Promise.all([page.waitForURL(`${svc.url}/partners`), page.click('form[action="/partners"] button[type="submit"]')]);
    expect(await page.textContent('[role="status"]')).to.equal(
      'Thank you, Grace Partner: your details reached our team. We will write to grace@partner.example.com soon.',
    );
    await shoot('web-site-partners-sent-desktop');
    const leads = await svc.req('GET', '/api/admin/partner-leads', { headers: bearer(admin.access_token) });
    expect(leads.body.leads.map((l: { email: string; company: string }) => [l.email, l.company])).to.deep.include([
      'grace@partner.example.com',
      'Partner & Co',
    ]);
  });

  it('counts a page view from the page itself (first-party, no cookie), in the stats and the console', async () => {
    const before = await svc.req('GET', '/api/analytics/stats?days=1', { headers: bearer(admin.access_token) });
    const viewsOf = (body: { views_per_path: Array<{ path: string; views: number }> }) => body.views_per_path.find((p) => p.path === '/rooms')?.views ?? 0;
    const beacon = page.waitForResponse((r) => r.url() === `${svc.url}/api/analytics/pageview`);
    const thirdParty: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url)) thirdParty.push(r.url());
    });
    await page.goto(`${svc.url}/rooms`);
    const answer = await beacon;
    expect(answer.status()).to.equal(202);
    expect(answer.request().headers()['cookie']).to.equal(undefined);
    expect(thirdParty).to.deep.equal([]);
    const after = await svc.req('GET', '/api/analytics/stats?days=1', { headers: bearer(admin.access_token) });
    expect(viewsOf(after.body)).to.equal(viewsOf(before.body) + 1);
    await consoleSignIn();
    await page.goto(`${svc.url}/admin/site`);
    const row = page.locator('[data-testid="views-per-path"] tr', { hasText: '/rooms' });
    expect(await row.locator('td').nth(1).textContent()).to.equal(String(viewsOf(after.body)));
  });

  it('passes axe on every page of the admin console, signed in as a super admin', async () => {
    const agent = await svc.register({ name: 'Console axe agent' });
    const requester = await svc.register();
    const listing = await svc.req('POST', '/api/agent/marketplace', {
      apiKey: requester.api_key,
      body: { title: 'Axe dispute', description: 'Work to argue about', category: 'engineering', price: 50, pricing_type: 'fixed' },
    });
    const response = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/respond`, { apiKey: agent.api_key, body: { message: 'Mine' } });
    const contract = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/responses/${response.body.response_id}/accept`, {
      apiKey: requester.api_key,
    });
    const contractId = contract.body.contract_id as string;
    await svc.req('POST', `/api/agent/contracts/${contractId}/accept`, { apiKey: agent.api_key, body: {} });
    const disputed = await svc.req('POST', `/api/agent/contracts/${contractId}/dispute`, { apiKey: requester.api_key, body: { note: 'Nothing delivered' } });
    expect(disputed.status, disputed.text).to.equal(200);

    await page.goto(`${svc.url}/admin/login`);
    expect(await seriousViolations(page), '/admin/login').to.deep.equal([]);
    await consoleSignIn();
    const pages = [
      '/admin/agents',
      `/admin/agents/${agent.agent_id}`,
      '/admin/rooms',
      '/admin/disputes',
      `/admin/disputes/${contractId}`,
      '/admin/projections',
      '/admin/moderation',
      '/admin/audit',
      '/admin/site',
    ];
    const failed: string[] = [];
    for (const path of pages) {
      const res = await page.goto(`${svc.url}${path}`);
      expect(res?.status(), path).to.equal(200);
      for (const v of await seriousViolations(page)) failed.push(`${path}: ${v}`);
    }
    expect(failed).to.deep.equal([]);
    expect(pathOf()).to.equal('/admin/site');
  });
});
