import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

// Headless Chromium (Debian's package, installed by test/helpers/browser.ts when missing) on the
// server-rendered pages. Screenshots go to test-artifacts/.
describe('site: public pages in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    browser = await launchBrowser();
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page.close();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  const path = (url: string) => new URL(url).pathname;

  it("opens an agent's profile page", async () => {
    const agent = await svc.register({ name: 'Lead Finder', capabilities: ['lead-gen', 'b2b-sales'], description: 'Finds B2B leads <fast>' });
    const res = await page.goto(`${svc.url}/agents/${agent.agent_id}`);
    expect(res?.status()).to.equal(200);
    expect(await page.textContent('h1')).to.equal('Lead Finder');
    expect(await page.locator('ul.capabilities li').allTextContents()).to.deep.equal(['lead-gen', 'b2b-sales']);
    expect(await page.textContent('p.description')).to.equal('Finds B2B leads <fast>');
    expect(await page.getAttribute('meta[property="og:title"]', 'content')).to.equal('Lead Finder');
    const jsonLd = JSON.parse((await page.textContent('script[type="application/ld+json"]')) ?? '{}');
    expect(jsonLd).to.include({ '@type': 'SoftwareApplication', name: 'Lead Finder' });
    expect(await page.getAttribute('a[href^="/claim/"]', 'href')).to.equal(`/claim/${agent.agent_id}`);
    await screenshot(page, 'agent-profile');
  });

  it('completes a lite claim on the claim page with the code from the mail outbox', async () => {
    const ownerEmail = `browser.owner.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ name: 'Claimable', owner_email: ownerEmail });
    const claimUrl = agent.body.claim_url as string;
    expect(path(claimUrl)).to.equal(`/claim/${agent.agent_id}`);
    await page.goto(`${svc.url}${path(claimUrl)}`);
    expect(await page.textContent('h1')).to.equal('Claim Claimable');
    await page.click('#send');
    await page.waitForSelector('#status[data-state="sent"]');
    const [mail] = await waitForMails(outbox, ownerEmail);
    await page.fill('#otp', codeIn(mail));
    await screenshot(page, 'claim-page-code-entered');
    await page.click('#verify');
    await page.waitForSelector('#status[data-state="claimed"]');
    expect(await page.textContent('#status')).to.include('Claimed: Claimable');
    await screenshot(page, 'claim-page-claimed');
    const after = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}`);
    expect(after.body.is_claimed).to.equal(true);
    // The profile page now shows the badge instead of the claim link.
    await page.goto(`${svc.url}/agents/${agent.agent_id}`);
    expect(await page.textContent('p.badge')).to.equal('Owner verified');
  });

  it("reads a public circle's page, every user string escaped; a private circle is 404", async () => {
    const root = await signUp(svc, outbox, ROOT_EMAIL);
    const admin = await signUp(svc, outbox);
    const member = await signUp(svc, outbox);
    const { community_id } = await communityWith(svc, root, admin, [member], 'Makers <b>');
    const pub = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: 'Open <i>table</i>', description: 'Anyone may read', visibility: 'public' },
    });
    await svc.req('POST', `/api/admin/community-admin/circles/${pub.body.circle_id}/members`, {
      headers: bearer(admin.access_token),
      body: { user_id: member.user_id },
    });
    const xss = 'Hello <img src=x onerror="window.__xss=1"> #makers';
    const p = await svc.req('POST', '/api/brew-circles/posts', {
      headers: bearer(member.access_token),
      body: { circle_id: pub.body.circle_id, content: xss, intent: 'intro' },
    });
    expect(p.status, p.text).to.equal(201);
    const res = await page.goto(`${svc.url}/circles/${pub.body.circle_id}`);
    expect(res?.status()).to.equal(200);
    expect(await page.textContent('h1')).to.equal('Open <i>table</i>');
    expect(await page.locator('ol.posts article').count()).to.equal(1);
    expect(await page.textContent('ol.posts article p:nth-child(2)')).to.equal(xss);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).to.equal(undefined);
    expect(await page.textContent('span.members')).to.equal('1');
    await screenshot(page, 'circle-public-page');
    const priv = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id, name: 'Board', visibility: 'private' },
    });
    const hidden = await page.goto(`${svc.url}/circles/${priv.body.circle_id}`);
    expect(hidden?.status()).to.equal(404);
  });
});
