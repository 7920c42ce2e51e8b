import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const ADMIN = 'browser-admin@example.com';
const PASSWORD = 'browser admin password';

// The admin console in headless Chromium (Debian's package; test/helpers/browser.ts installs it
// when missing). Screenshots go to test-artifacts/.
describe('console: the admin console in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    await signUp(svc, outbox, ADMIN, PASSWORD);
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  it('signs in through the form and lands on the agents page', async () => {
    await page.goto(`${svc.url}/admin`);
    expect(new URL(page.url()).pathname).to.equal('/admin/login');
    await page.fill('input[name="email"]', ADMIN);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(`${svc.url}/admin/agents`), page.click('button[type="submit"]')]);
    expect(await page.textContent('h1')).to.equal('Agents');
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'an_admin');
    expect(session).to.include({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(await page.evaluate(() => document.cookie)).to.equal('');
    await screenshot(page, 'console-agents');
  });

  it('looks an agent up, reads its 30-day spend chart, and bans it', async () => {
    const agent = await svc.register({ name: 'Noisy Agent' });
    for (let i = 0; i < 2; i++) {
      await svc.req('POST', '/api/feed/posts', { apiKey: agent.api_key, body: { title: `Loud ${i}`, body: 'Buy buy buy', post_type: 'signal_found' } });
    }
    await page.goto(`${svc.url}/admin/agents`);
    await page.fill('input[name="q"]', agent.agent_id);
    await Promise.all([page.waitForURL(`${svc.url}/admin/agents/${agent.agent_id}`), page.click('form[action="/admin/agents"] button')]);
    expect(await page.textContent('[data-testid="status"]')).to.equal('active');
    expect(await page.locator('[data-testid="spend-chart"] rect.bar').count()).to.equal(30);
    const today = svc.clock.now().toISOString().slice(0, 10);
    expect(await page.getAttribute(`rect[data-date="${today}"]`, 'data-amount')).to.equal('0.2');
    expect(Number(await page.getAttribute(`rect[data-date="${today}"]`, 'height'))).to.be.greaterThan(0);
    expect(await page.locator('[data-testid="credit-history"] tbody tr').count()).to.equal(3);
    await screenshot(page, 'console-agent-chart');

    await page.fill('textarea[name="reason"]', 'Spam in every room');
    await Promise.all([page.waitForURL(/\/admin\/agents\/agt_.*\?done=/), page.click('form[action$="/ban"] button')]);
    expect(await page.textContent('[data-testid="status"]')).to.equal('banned');
    expect(await page.textContent('p.notice')).to.equal('Agent banned.');
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agent.api_key })).status).to.equal(401);
    await screenshot(page, 'console-agent-banned');
  });

  it('resolves a dispute from its page, after reading its audit trail', async () => {
    const requester = await svc.register();
    const provider = await svc.register();
    const listing = await svc.req('POST', '/api/agent/marketplace', {
      apiKey: requester.api_key,
      body: { title: 'Browser dispute', description: 'Work to argue about', category: 'engineering', price: 50, pricing_type: 'fixed' },
    });
    const response = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/respond`, { apiKey: provider.api_key, body: { message: 'Mine' } });
    const contract = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/responses/${response.body.response_id}/accept`, {
      apiKey: requester.api_key,
    });
    const id = contract.body.contract_id as string;
    await svc.req('POST', `/api/agent/contracts/${id}/accept`, { apiKey: provider.api_key, body: {} });
    const disputed = await svc.req('POST', `/api/agent/contracts/${id}/dispute`, { apiKey: requester.api_key, body: { note: 'Nothing delivered' } });
    expect(disputed.status, disputed.text).to.equal(200);

    await page.goto(`${svc.url}/admin/disputes`);
    await Promise.all([page.waitForURL(`${svc.url}/admin/disputes/${id}`), page.click(`a[href="/admin/disputes/${id}"]`)]);
    expect(await page.locator('[data-testid="audit-trail"] tbody tr').count()).to.equal(3);
    await page.selectOption('select[name="outcome"]', 'refunded');
    await page.fill('textarea[name="note"]', 'The provider never started');
    await screenshot(page, 'console-dispute');
    await Promise.all([page.waitForURL(/\/admin\/disputes\/ctr_.*\?done=/), page.click('form[action$="/resolve"] button')]);
    expect(await page.textContent('[data-testid="outcome"]')).to.equal('refunded');
    expect(await page.locator('[data-testid="audit-trail"] tbody tr').count()).to.be.greaterThan(3);
    await screenshot(page, 'console-dispute-resolved');
  });

  it('starts a projection rebuild from the projections page and sees it swapped', async () => {
    await page.goto(`${svc.url}/admin/projections`);
    const row = page.locator('tr[data-projection="api_keys"]');
    await Promise.all([page.waitForURL(/\/admin\/projections\?done=/), row.locator('button').click()]);
    // The page refreshes itself while a rebuild runs; wait until the cell says it was swapped.
    await page.waitForFunction(() => document.querySelector('[data-testid="rebuild-api_keys"]')?.textContent?.includes('swapped'), undefined, {
      timeout: 120_000,
    });
    expect(await page.textContent('[data-testid="rebuild-api_keys"]')).to.include('checksums equal');
    await screenshot(page, 'console-projections');
  });
});
