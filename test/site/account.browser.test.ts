import { expect } from 'chai';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ACCESS_TTL_S } from '../../commands/humans/tokens.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { freshEmail, signUp } from '../helpers/users.ts';
import { DESKTOP, PHONE, seriousViolations, signInThroughPage } from '../helpers/web.ts';

// The account journeys of the member app in Chromium against the real service: sign-up through
// the mailed code, the dashboard's next step, claiming an agent, a new key shown once, the in-app
// agent's key, a forgotten password, a session renewed across the access token's expiry, the
// notifications and their settings, and the profile. Every page: axe, desktop and phone size.
describe('web: the account journeys of the member app in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  /** A fresh browser (its own cookies) where the copy buttons may write to the clipboard. */
  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
    return { context, page: await context.newPage() };
  }

  /**
   * The page as it is now: 0 serious or critical axe violations at desktop and at phone size, no
   * sideways scrolling on a phone, and its screenshots (also under docs/screenshots with UPDATE_SCREENSHOTS=1).
   */
  async function checkPage(page: Page, name: string): Promise<void> {
    expect(await seriousViolations(page), `${name} (desktop)`).to.deep.equal([]);
    await shoot(page, `web-account-${name}-desktop`);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} fits a phone`).to.equal(true);
    expect(await seriousViolations(page), `${name} (phone)`).to.deep.equal([]);
    await shoot(page, `web-account-${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }
  /** The pages whose screenshots docs/WEB.md shows. */
  const DOC_PAGES = ['signup', 'dashboard-new', 'dashboard', 'claim', 'agent', 'new-key', 'elite-key', 'profile', 'notifications'];
  async function shoot(page: Page, name: string) {
    const path = await screenshot(page, name);
    if (process.env.UPDATE_SCREENSHOTS === '1' && DOC_PAGES.some((p) => name === `web-account-${p}-desktop` || name === `web-account-${p}-phone`)) {
      const docs = join(process.cwd(), 'docs', 'screenshots');
      mkdirSync(docs, { recursive: true });
      copyFileSync(path, join(docs, `${name}.png`));
    }
  }
  const path = (page: Page) => new URL(page.url()).pathname;
  async function submit(page: Page, selector = 'main form button[type="submit"]') {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  }

  let newcomer: { email: string; password: string };
  let agentId: string;
  let agentKey: string;
  let page: Page;
  /** The first browser of the newcomer, whose session the password reset revoked. */
  let revoked: Page;

  it('signs a new person up with the code mailed to them and lands them on the dashboard with the next step', async () => {
    ({ page } = await newPage());
    newcomer = { email: freshEmail(), password: 'a long enough password' };
    await page.goto(`${svc.url}/signin`);
    await Promise.all([page.waitForNavigation(), page.click('header a[href="/signup"]')]);
    expect(await page.textContent('h1')).to.equal('Create an account');
    await checkPage(page, 'signup');
    await page.fill('#email', newcomer.email);
    await submit(page);
    expect(path(page)).to.equal('/signup/verify');
    expect(await page.textContent('[role="status"]')).to.include('6-digit code');
    expect(await page.inputValue('#email')).to.equal(newcomer.email);
    await checkPage(page, 'signup-verify');

    // A wrong code: the form again, with the problem in plain words and the name kept.
    const [mail] = await waitForMails(outbox, newcomer.email);
    await page.fill('#otp', codeIn(mail) === '000000' ? '111111' : '000000');
    await page.fill('#full_name', 'Grace Hopper');
    await page.fill('#password', newcomer.password);
    await submit(page);
    expect(await page.textContent('[role="alert"]')).to.include('Check the code in the e-mail');
    expect(await page.inputValue('#full_name')).to.equal('Grace Hopper');

    await page.fill('#otp', codeIn(mail));
    await page.fill('#password', newcomer.password);
    await submit(page);
    expect(path(page)).to.equal('/app');
    expect(await page.textContent('[role="status"]')).to.include('Welcome, Grace Hopper');
    expect(await page.textContent('[data-testid="next-step"] h2')).to.equal('Next step: claim your agent');
    await checkPage(page, 'dashboard-new');
  });

  it('claims an agent with its claim token and the code mailed to its owner, and shows it on the dashboard', async () => {
    const ownerEmail = `owner.${freshEmail()}`;
    const agent = await svc.register({ owner_email: ownerEmail, name: 'Scout' });
    agentId = agent.agent_id;
    agentKey = agent.api_key;
    await Promise.all([page.waitForNavigation(), page.click('[data-testid="next-step"] a[href="/app/claim"]')]);
    await checkPage(page, 'claim');
    await page.fill('#claim_token', 'clm_not_a_token');
    await submit(page);
    expect(await page.textContent('[role="alert"]')).to.include('claim token');

    await page.fill('#claim_token', String(agent.body.claim_token));
    await submit(page);
    expect(await page.textContent('h1')).to.equal('Enter the claim code');
    expect(await page.textContent('main [role="status"]')).to.include('o***@example.com');
    // The claim token is not in the address bar.
    expect(page.url()).to.not.include('clm_');
    await checkPage(page, 'claim-code');
    const [mail] = await waitForMails(outbox, ownerEmail);
    await page.fill('#otp', codeIn(mail));
    await submit(page);
    expect(path(page)).to.equal(`/app/agents/${agentId}`);
    expect(await page.textContent('[role="status"]')).to.equal('Scout is now yours.');
    await checkPage(page, 'agent');

    await page.goto(`${svc.url}/app`);
    expect(await page.$('[data-testid="next-step"]')).to.equal(null);
    const row = await page.textContent('[data-testid="agents"] tbody tr');
    const profile = await svc.req('GET', `/api/protocol/agents/${agentId}`);
    expect(row).to.include('Scout').and.include('Active, owner verified').and.include(String(profile.body.tier_name));
    expect(row).to.match(/\d+ of \d+/);
    await checkPage(page, 'dashboard');
  });

  it("rotates the agent's key: shown once with a copy button, the old key refused", async () => {
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agentKey })).status).to.equal(200);
    await page.goto(`${svc.url}/app/agents/${agentId}`);
    await submit(page, 'form[action$="/rotate-key"] button');
    const key = (await page.textContent('[data-testid="new-key"]'))?.trim() ?? '';
    expect(key).to.have.length.greaterThan(20);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: key })).status).to.equal(200);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agentKey })).status).to.equal(401);
    const copy = page.locator('button[data-copy="new-key"]');
    expect(await copy.isVisible()).to.equal(true);
    await copy.click();
    await page.waitForFunction(() => document.querySelector('button[data-copy="new-key"]')?.textContent === 'Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(key);
    await checkPage(page, 'new-key');
    // Shown once: the agent's page does not show it again.
    await page.goto(`${svc.url}/app/agents/${agentId}`);
    expect(await page.content()).to.not.include(key);
  });

  it('resets a forgotten password with the mailed code, then signs in with the new one', async () => {
    const { page: fresh } = await newPage();
    await fresh.goto(`${svc.url}/signin`);
    await Promise.all([fresh.waitForNavigation(), fresh.click('main a[href="/forgot-password"]')]);
    await checkPage(fresh, 'forgot-password');
    const mailsBefore = (await waitForMails(outbox, newcomer.email)).length;
    await fresh.fill('#email', newcomer.email);
    await submit(fresh);
    expect(path(fresh)).to.equal('/reset-password');
    await checkPage(fresh, 'reset-password');
    const mails = await waitForMails(outbox, newcomer.email, mailsBefore + 1);
    const mail = mails.find((m) => m.subject.includes('password reset'));
    expect(mail, 'a reset mail').to.not.equal(undefined);
    // The mail links the page to type the code on, for this address.
    expect(mail?.text).to.include(`/reset-password?email=${encodeURIComponent(newcomer.email)}`);
    await fresh.fill('#code', codeIn(mail as { text: string }));
    await fresh.fill('#new_password', 'a brand new password');
    await submit(fresh);
    expect(path(fresh)).to.equal('/signin');
    expect(await fresh.textContent('[role="status"]')).to.include('Sign in with the new password');
    await signInThroughPage(fresh, svc, newcomer.email, 'a brand new password');
    expect(await fresh.textContent('h1')).to.equal('Your dashboard');
    newcomer.password = 'a brand new password';
    revoked = page;
    page = fresh;
  });

  it("keeps a person signed in across the access token's expiry (the refresh flow), but not a revoked session", async () => {
    const cookie = async () => (await page.context().cookies()).find((c) => c.name === 'an_session')?.value;
    const before = await cookie();
    svc.clock.advance((ACCESS_TTL_S + 60) * 1000);
    await page.goto(`${svc.url}/app/profile`);
    expect(path(page)).to.equal('/app/profile');
    expect(await page.textContent('h1')).to.equal('Your profile');
    expect(await cookie()).to.not.equal(before);
    // The session of before the password reset cannot be renewed: that browser signs in again.
    await revoked.goto(`${svc.url}/app`);
    expect(path(revoked)).to.equal('/signin');
  });

  it('edits the profile, keeping what was typed when a field needs a change', async () => {
    await page.goto(`${svc.url}/app/profile`);
    expect(await page.inputValue('#full_name')).to.equal('Grace Hopper');
    await checkPage(page, 'profile');
    await page.fill('#headline', 'Compiler pioneer');
    await page.fill('#region', '1X');
    await submit(page);
    expect(await page.textContent('[role="alert"]')).to.include('Some fields need a change');
    expect(await page.textContent('.field-problems')).to.include('Country');
    expect(await page.inputValue('#headline')).to.equal('Compiler pioneer');
    await page.fill('#region', 'us');
    await page.fill('#gives', 'Compilers, mentoring');
    await page.selectOption('#industry', 'technology');
    await page.check('#discoverable');
    await submit(page);
    expect(await page.textContent('[role="status"]')).to.equal('Your profile was saved.');
    expect(await page.inputValue('#region')).to.equal('US');
    expect(await page.inputValue('#gives')).to.equal('compilers, mentoring');
    expect(await page.inputValue('#headline')).to.equal('Compiler pioneer');
    expect(await page.isChecked('#discoverable')).to.equal(true);
  });

  it('shows the notifications, marks them read, and saves the notification settings', async () => {
    const root = await signUp(svc, outbox, ROOT_EMAIL);
    const [admin, ada, bob] = [await signUp(svc, outbox), await signUp(svc, outbox), await signUp(svc, outbox)];
    const { circle_id } = await communityWith(svc, root, admin, [ada, bob], 'Builders');
    const post = await svc.req('POST', '/api/brew-circles/posts', {
      headers: bearer(ada.access_token),
      body: { circle_id, intent: 'ask', content: 'Who knows <b>compilers</b>?' },
    });
    expect(post.status, post.text).to.be.oneOf([200, 201]);
    for (const content of ['Me!', 'Me too']) {
      const reply = await svc.req('POST', '/api/brew-circles/replies', { headers: bearer(bob.access_token), body: { post_id: post.body.post_id, content } });
      expect(reply.status, reply.text).to.be.oneOf([200, 201]);
    }
    const { page: adas } = await newPage();
    await signInThroughPage(adas, svc, ada.email, ada.password);
    expect(await adas.textContent('#notifications-heading + p')).to.include('2 unread');
    await adas.goto(`${svc.url}/app/notifications`);
    expect(await adas.textContent('[data-testid="unread"]')).to.equal('2 unread');
    expect(await adas.locator('[data-testid="notifications"] li').count()).to.equal(2);
    await checkPage(adas, 'notifications');
    await submit(adas, '[data-testid="notifications"] li:first-child button');
    expect(await adas.textContent('[data-testid="unread"]')).to.equal('1 unread');
    await submit(adas, 'main form[action="/app/notifications/read"]:not(li form) button');
    expect(await adas.textContent('[data-testid="unread"]')).to.equal('0 unread');

    await adas.uncheck('#s-reactions');
    await adas.selectOption('#digest', 'weekly');
    await submit(adas, 'form[action="/app/notifications/settings"] button');
    expect(await adas.textContent('[role="status"]')).to.include('settings were saved');
    expect(await adas.isChecked('#s-reactions')).to.equal(false);
    const settings = await svc.req('GET', '/api/brew-circles/settings/notifications', { headers: bearer(ada.access_token) });
    expect(settings.body).to.deep.equal({ mentions: true, replies: true, reactions: false, join_requests: true, digest: 'weekly' });
  });

  it("shows the in-app agent's key once when a paid plan sets it up, and makes a new one", async () => {
    const member = await signUp(svc, outbox);
    const { page: own } = await newPage();
    await signInThroughPage(own, svc, member.email, member.password);
    await own.goto(`${svc.url}/app/elite-key`);
    expect(await own.textContent('main')).to.include('no paid plan');
    await checkPage(own, 'elite-key-no-plan');

    const order = await svc.req('POST', '/api/billing/plans/order', { headers: bearer(member.access_token), body: { plan: 'elite' } });
    expect(order.status, order.text).to.equal(200);
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
    const { order_id, payment_id, signature } = paid.body as Record<string, string>;
    expect((await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } })).status).to.equal(200);

    await own.goto(`${svc.url}/app/elite-key`);
    await checkPage(own, 'elite-key-setup');
    await submit(own, 'form[action="/app/elite-key"] button');
    const first = (await own.textContent('[data-testid="new-key"]'))?.trim() ?? '';
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: first })).status).to.equal(200);

    await own.goto(`${svc.url}/app/elite-key`);
    expect(await own.textContent('[data-testid="elite-agent"]')).to.include('Elite');
    expect(await own.content()).to.not.include(first);
    await checkPage(own, 'elite-key');
    await submit(own, 'form[action="/app/elite-key/regenerate"] button');
    const second = (await own.textContent('[data-testid="new-key"]'))?.trim() ?? '';
    expect(second).to.not.equal(first);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: first })).status).to.equal(401);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: second })).status).to.equal(200);
  });
});
