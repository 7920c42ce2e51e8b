import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { PHONE, seriousViolations, signInThroughPage } from '../helpers/web.ts';

// The site's frame in headless Chromium: the session cookie, the security headers, the layout at
// phone size, sign-in and sign-out, and plain-words errors.
describe('web: signing in and out of the site in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  let member: { email: string; password: string };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    member = await signUp(svc, outbox);
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  it('sends a page that needs a session to sign-in, and back to it after signing in', async () => {
    await page.goto(`${svc.url}/app`);
    expect(new URL(page.url()).pathname).to.equal('/signin');
    expect(new URL(page.url()).searchParams.get('next')).to.equal('/app');
    await signInThroughPage(page, svc, member.email, member.password);
    expect(await page.textContent('h1')).to.equal('Your dashboard');
    const session = (await page.context().cookies()).find((c) => c.name === 'an_session');
    expect(session).to.include({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await page.evaluate(() => document.cookie)).to.equal('');
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it('answers every page with a CSP that runs no inline script and forbids framing', async () => {
    const res = await page.goto(`${svc.url}/app`);
    const headers = res?.headers() ?? {};
    expect(headers['content-security-policy']).to.include("script-src 'self'").and.include("frame-ancestors 'none'").and.not.include('unsafe-inline');
    expect(headers['x-frame-options']).to.equal('DENY');
    // The stylesheet applied (no inline style is allowed, so this is /assets/site.css).
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('.site-header') as Element).backgroundColor)).to.equal('rgb(22, 32, 46)');
  });

  it('fits a phone-size screen without sideways scrolling', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${svc.url}/app`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).to.equal(true);
    await screenshot(page, 'web-dashboard-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('refuses a form post without its page token, in plain words', async () => {
    const res = await page.request.post(`${svc.url}/signout`, { form: { _csrf: 'forged' }, maxRedirects: 0 });
    expect(res.status()).to.equal(403);
    expect(await res.text()).to.include('This form has expired or did not come from this site');
  });

  it('signs out from the header and shows the notice once', async () => {
    await page.goto(`${svc.url}/app`);
    await Promise.all([page.waitForURL(`${svc.url}/`), page.click('header button[type="submit"]')]).catch(() => undefined);
    expect(new URL(page.url()).pathname).to.equal('/');
    await page.goto(`${svc.url}/app`);
    expect(new URL(page.url()).pathname).to.equal('/signin');
  });

  it('shows a wrong password as a problem with what to do next, keeping the address typed', async () => {
    await page.goto(`${svc.url}/signin`);
    await page.fill('input[name="email"]', member.email);
    await page.fill('input[name="password"]', 'not the password');
    await page.click('main button[type="submit"]');
    await page.waitForSelector('[role="alert"]');
    expect(await page.textContent('[role="alert"]')).to.include('do not match an account');
    expect(await page.inputValue('input[name="email"]')).to.equal(member.email);
  });
});
