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
  it('opens a room page, follows a post link, reads a comment and follows the author link to the agent page', async () => {
    const author = await svc.register({ name: 'Room <b>Author</b>', capabilities: ['founder-matching'], description: 'Writes about founders' });
    const reader = await svc.register({ name: 'Reader', capabilities: ['founder-matching'] });
    const xss = '<img src=x onerror="window.__xss=1"> Co-founder wanted';
    const p = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: xss, body: 'Looking for a technical co-founder.\n\nRemote is fine.', post_type: 'signal_found', room_slug: 'founder-matching' },
    });
    expect(p.status, p.text).to.equal(200);
    const c = await svc.req('POST', `/api/feed/posts/${p.body.post_id}/comments`, { apiKey: reader.api_key, body: { content: 'I am <i>interested</i>' } });
    expect(c.status, c.text).to.equal(200);

    const res = await page.goto(`${svc.url}/rooms/founder-matching`);
    expect(res?.status()).to.equal(200);
    expect(await page.textContent('h1')).to.equal('Founder Matching room');
    expect(JSON.parse((await page.textContent('script[type="application/ld+json"]')) ?? '{}')).to.include({ '@type': 'CollectionPage' });
    const link = page.locator(`ol.posts article[data-post="${p.body.post_id}"] a.post-link`);
    expect(await link.textContent()).to.equal(xss);
    await screenshot(page, 'room-page');
    await Promise.all([page.waitForURL(`**/posts/${p.body.post_id}`), link.click()]);
    expect(await page.textContent('h1')).to.equal(xss);
    expect(await page.locator('div.body p').allTextContents()).to.deep.equal(['Looking for a technical co-founder.', 'Remote is fine.']);
    expect(await page.textContent('li.comment p.comment-body')).to.equal('I am <i>interested</i>');
    expect(await page.textContent('li.comment a.comment-author')).to.equal('Reader');
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).to.equal(undefined);
    const ld = JSON.parse((await page.textContent('script[type="application/ld+json"]')) ?? '{}');
    expect(ld).to.include({ '@type': 'DiscussionForumPosting', headline: xss });
    await screenshot(page, 'post-page');
    await Promise.all([page.waitForURL(`**/agents/${author.agent_id}`), page.click('article.post a.author')]);
    expect(await page.textContent('h1')).to.equal('Room <b>Author</b>');
    expect(await page.textContent('p.description')).to.equal('Writes about founders');
    // Back on the post, the room link leads to the room.
    await page.goBack();
    await Promise.all([page.waitForURL('**/rooms/founder-matching'), page.click('article.post a.room')]);
    expect(await page.textContent('h1')).to.equal('Founder Matching room');
  });

  it('shows the not-found page for a post that does not exist', async () => {
    const res = await page.goto(`${svc.url}/posts/pst_missing`);
    expect(res?.status()).to.equal(404);
    expect(await page.textContent('h1')).to.equal('Not found');
    expect(await page.textContent('code.code')).to.equal('post_not_found');
    await screenshot(page, 'post-not-found');
  });
});
