import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import type { User } from '../helpers/communities.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { DESKTOP, PHONE, seriousViolations, signInThroughPage } from '../helpers/web.ts';

/**
 * Checks a page as every page of the app is checked: 0 serious or critical axe violations, no
 * sideways scrolling at phone size, and a screenshot at both sizes (also under docs/screenshots
 * with UPDATE_SCREENSHOTS=1).
 */
async function checkPage(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page), `${name}: axe`).to.deep.equal([]);
  await shoot(page, `web-communities-${name}-desktop`);
  await page.setViewportSize(PHONE);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: fits a phone`).to.equal(true);
  expect(await seriousViolations(page), `${name}: axe at phone size`).to.deep.equal([]);
  await shoot(page, `web-communities-${name}-phone`);
  await page.setViewportSize(DESKTOP);
}

async function shoot(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  // The main pages go in the docs (docs/WEB.md "Communities").
  if (process.env.UPDATE_SCREENSHOTS === '1' && /-(list|community|circle|admin)-(desktop|phone)$/.test(name)) {
    const dir = join(process.cwd(), 'docs', 'screenshots');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`) });
  }
}

describe('web: communities and circles in a real browser (member, requester and community admin)', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let pageServer: http.Server;
  let pageBase: string;
  let root: User;
  let admin: User;
  let member: User;
  let requester: User;
  let ids: { community_id: string; circle_id: string; code: string };
  let openCircle: string;
  const contexts: BrowserContext[] = [];

  const newPage = async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    return context.newPage();
  };
  const submit = async (page: Page, selector: string) => {
    await Promise.all([page.waitForLoadState('load'), page.waitForNavigation(), page.click(selector)]);
  };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL, WEBHOOK_ALLOW_LOOPBACK: '1' }));
    // A page to preview, on this machine (the loopback allowance is for tests only).
    pageServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>Fallback</title>
<meta property="og:title" content="Quarkworks raises a seed round">
<meta property="og:description" content="The round is led by &lt;Acme&gt; Ventures.">
<meta property="og:site_name" content="Quarkworks Blog"></head><body>hello</body></html>`);
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve()));
    pageBase = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    root = await signUp(svc, outbox, ROOT_EMAIL);
    [admin, member, requester] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    ids = await communityWith(svc, root, admin, [], 'Founders Guild');
    const c = await svc.req('POST', '/api/admin/community-admin/circles', {
      headers: bearer(admin.access_token),
      body: { community_id: ids.community_id, name: 'Open door', description: 'Introductions from outside', visibility: 'community' },
    });
    expect(c.status, c.text).to.equal(201);
    openCircle = c.body.circle_id;
    browser = await launchBrowser();
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()));
    await stopWithOutbox(svc, outbox);
  });

  let adminPage: Page;
  let memberPage: Page;
  let requesterPage: Page;
  let code = '';

  it('a community admin creates an invite code and sees its QR code', async () => {
    adminPage = await newPage();
    await signInThroughPage(adminPage, svc, admin.email, admin.password, '/app/communities');
    expect(await adminPage.textContent('h1')).to.equal('Your communities');
    await checkPage(adminPage, 'list');
    await submit(adminPage, 'a:has-text("Manage")');
    expect(new URL(adminPage.url()).pathname).to.equal(`/app/communities/${ids.community_id}/admin`);
    await adminPage.fill('#label', 'Launch event <b>');
    await adminPage.fill('#max_uses', '50');
    await submit(adminPage, 'button:has-text("Create an invite code")');
    expect(await adminPage.textContent('[role="status"]')).to.match(/Invite code \w+ is ready to share/);
    const item = adminPage.locator('[data-testid="codes"] li').first();
    code = String(await item.getAttribute('data-code'));
    expect(code).to.match(/^[A-Z0-9]{4,}$/);
    expect(await item.textContent())
      .to.include('Launch event <b>')
      .and.include(`/join/${code}`);
    const qr = item.locator('img.qr');
    expect(await qr.getAttribute('src')).to.match(/^data:image\/svg\+xml;base64,/);
    expect(await qr.getAttribute('alt')).to.include(code);
    // The QR code is drawn (CSP img-src allows data: URLs), at its size.
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).to.equal(true);
    await checkPage(adminPage, 'admin');
  });

  it('a member joins by code from the public join page, signing in on the way', async () => {
    memberPage = await newPage();
    await memberPage.goto(`${svc.url}/join/${code}`);
    await Promise.all([memberPage.waitForNavigation(), memberPage.click('a:has-text("in the app")')]);
    expect(new URL(memberPage.url()).pathname).to.equal('/signin');
    await memberPage.fill('input[name="email"]', member.email);
    await memberPage.fill('input[name="password"]', member.password);
    await Promise.all([memberPage.waitForURL(`${svc.url}/app/communities?code=${code}`), memberPage.click('main button[type="submit"]')]);
    expect(await memberPage.inputValue('#code')).to.equal(code);
    await submit(memberPage, 'button:has-text("Join the community")');
    expect(new URL(memberPage.url()).pathname).to.equal(`/app/communities/${ids.community_id}`);
    expect(await memberPage.textContent('[role="status"]')).to.equal('You joined Founders Guild.');
    // Its circles by visibility: the first circle (joined with the community) and the other members' circle.
    expect(await memberPage.locator('[data-visibility="community"] h2').textContent()).to.equal('Members-only circles');
    expect(await memberPage.locator('[data-visibility="community"] li').count()).to.equal(2);
    await checkPage(memberPage, 'community');
  });

  it('posts in a circle with a link preview, reacts and replies', async () => {
    await submit(memberPage, `a[href="/app/circles/${ids.circle_id}"]`);
    await memberPage.fill('#content', 'We closed our round! #funding');
    await memberPage.selectOption('#intent', 'update');
    await memberPage.fill('#link_url', `${pageBase}/news`);
    await submit(memberPage, 'button:has-text("Preview link")');
    const preview = memberPage.locator('[data-testid="link-preview"]');
    expect(await preview.textContent())
      .to.include('Quarkworks raises a seed round')
      .and.include('The round is led by <Acme> Ventures.')
      .and.include('Quarkworks Blog');
    // The draft is kept while previewing.
    expect(await memberPage.inputValue('#content')).to.equal('We closed our round! #funding');
    await checkPage(memberPage, 'circle-preview');
    await submit(memberPage, 'main form button:has-text("Post")');
    expect(await memberPage.textContent('[role="status"]')).to.equal('Your post is in the circle.');
    const post = memberPage.locator('[data-testid="posts"] > li').first();
    expect(await post.textContent())
      .to.include('We closed our round!')
      .and.include(`${pageBase}/news`);
    await Promise.all([memberPage.waitForNavigation(), post.locator('button[value="celebrate"]').click()]);
    expect(await memberPage.textContent('[role="status"]')).to.equal('You reacted: celebrate.');
    expect(await memberPage.locator('[data-testid="posts"] > li').first().locator('button[value="celebrate"] .count').textContent()).to.equal('1');
    await checkPage(memberPage, 'circle');

    await submit(memberPage, '[data-testid="posts"] > li >> a:has-text("0 replies")');
    await memberPage.fill('#reply', 'Congratulations <3');
    await submit(memberPage, 'button:has-text("Reply")');
    expect(await memberPage.textContent('[data-testid="replies"]')).to.include('Congratulations <3');
    await submit(memberPage, 'article button:has-text("Preview link")');
    expect(await memberPage.textContent('[data-testid="link-preview"]')).to.include('Quarkworks raises a seed round');
    await checkPage(memberPage, 'post');
    // The API sees the same post, reaction and reply.
    const feed = await svc.req('GET', `/api/brew-circles/${ids.circle_id}/posts`, { headers: bearer(member.access_token) });
    expect(feed.body.posts[0]).to.deep.include({ content: 'We closed our round! #funding', link_url: `${pageBase}/news`, reply_count: 1 });
    expect(feed.body.posts[0].reactions.celebrate).to.equal(1);
  });

  it('the admin makes a circle public; someone outside the community asks to join it, the admin approves with a note', async () => {
    await adminPage.goto(`${svc.url}/app/communities/${ids.community_id}/admin`);
    const row = adminPage.locator(`tr[data-circle="${openCircle}"]`);
    await row.locator('select').selectOption('public');
    await Promise.all([adminPage.waitForNavigation(), row.locator('button').click()]);
    expect(await adminPage.textContent('[role="status"]')).to.equal('Open door is now public.');
    expect(await adminPage.locator(`tr[data-circle="${openCircle}"] select`).inputValue()).to.equal('public');

    requesterPage = await newPage();
    await signInThroughPage(requesterPage, svc, requester.email, requester.password, `/app/communities/${ids.community_id}`);
    expect(await requesterPage.locator('[data-visibility="public"] li').count()).to.equal(1);
    expect(await requesterPage.locator('[data-visibility="community"]').count()).to.equal(0);
    await submit(requesterPage, '[data-visibility="public"] button:has-text("Ask to join")');
    expect(await requesterPage.textContent('[role="status"]')).to.include('Your request to join is with the community’s admins');
    expect(await requesterPage.textContent('[data-testid="request-status"]')).to.include('waiting for an admin');
    expect(await requesterPage.textContent('[data-testid="my-requests"]'))
      .to.include('Open door')
      .and.include('Waiting');
    await checkPage(requesterPage, 'request');

    await adminPage.reload();
    const pending = adminPage.locator('[data-testid="pending-requests"] li').first();
    expect(await pending.textContent()).to.include('Open door');
    await pending.locator('textarea').fill('Welcome aboard, say hello in #intros');
    await Promise.all([adminPage.waitForNavigation(), pending.locator('button[value="approve"]').click()]);
    expect(await adminPage.textContent('[role="status"]')).to.match(/request is approved/);
    expect(await adminPage.textContent('[data-testid="decided-requests"]'))
      .to.include('Approved')
      .and.include('Welcome aboard, say hello in #intros');

    await requesterPage.reload();
    const mine = await requesterPage.textContent('[data-testid="my-requests"]');
    expect(mine).to.include('Approved').and.include('Note from the admin').and.include('Welcome aboard, say hello in #intros');
    expect(await requesterPage.locator('[data-visibility="public"] .badge.ok').textContent()).to.equal('Joined');
  });

  it('the admin removes a member and revokes the code; a member who is not its admin is refused the admin page', async () => {
    await adminPage.goto(`${svc.url}/app/communities/${ids.community_id}/admin`);
    // Removing and revoking ask first (/assets/communities.js): declined, nothing is sent.
    const asked: string[] = [];
    let accept = false;
    adminPage.on('dialog', (d) => {
      asked.push(d.message());
      void (accept ? d.accept() : d.dismiss());
    });
    await adminPage.locator('[data-testid="codes"] li').first().locator('button[value="revoked"]').click();
    expect(asked).to.have.length(1);
    expect(asked[0]).to.include(`Revoke code ${code}?`);
    expect(new URL(adminPage.url()).pathname).to.equal(`/app/communities/${ids.community_id}/admin`);
    expect(await adminPage.locator('[data-testid="codes"] li').first().locator('.badge').textContent()).to.equal('active');
    accept = true;
    const res = await memberPage.goto(`${svc.url}/app/communities/${ids.community_id}/admin`);
    expect(res?.status()).to.equal(403);
    expect(await memberPage.textContent('main')).to.include('This needs a community admin');
    expect(await seriousViolations(memberPage)).to.deep.equal([]);

    await Promise.all([adminPage.waitForNavigation(), adminPage.locator('[data-testid="codes"] li').first().locator('button[value="revoked"]').click()]);
    expect(await adminPage.textContent('[role="status"]')).to.equal(`Invite code ${code} is revoked.`);
    const listed = async () =>
      (await svc.req('GET', `/api/admin/community-admin/members?community_id=${ids.community_id}`, { headers: bearer(admin.access_token) })).body.members.map(
        (m: { user_id: string }) => m.user_id,
      );
    const before = await listed();
    expect(before).to.include(member.user_id);
    const memberRow = adminPage.locator('[data-testid="members"] tr', { has: adminPage.locator(`form[action$="/members/${member.user_id}/remove"]`) });
    await Promise.all([adminPage.waitForNavigation(), memberRow.locator('button').click()]);
    expect(await adminPage.textContent('[role="status"]')).to.equal('The member is removed from the community.');
    const after = await listed();
    expect(after)
      .to.have.length(before.length - 1)
      .and.not.include(member.user_id);
    // The removed member no longer sees the members' circles.
    expect((await memberPage.goto(`${svc.url}/app/circles/${ids.circle_id}`))?.status()).to.equal(404);
  });
});
