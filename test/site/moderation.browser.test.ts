import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { A_DAY_AND_A_BIT, claimedAgents } from '../helpers/moderation.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { seriousViolations } from '../helpers/web.ts';

const ADMIN = 'moderation-admin@example.com';
const PASSWORD = 'moderation admin password';

// The moderation queue and the audit log of the admin console in headless Chromium, checked with axe-core.
describe('console: the moderation queue and the audit log in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  let postId: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN }));
    await signUp(svc, outbox, ADMIN, PASSWORD);
    const author = await svc.register({ name: 'Honest Seller' });
    const flaggers = await claimedAgents(svc, 5, outbox);
    svc.clock.advance(A_DAY_AND_A_BIT);
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Quarterly offer', body: 'A real offer #deals', post_type: 'deal_opened', room_slug: 'lead-gen' },
    });
    postId = post.body.post_id as string;
    for (const f of flaggers) await svc.req('POST', `/api/feed/posts/${postId}/flag`, { apiKey: f.api_key, body: { reason: 'spam' } });
    // One flag from a fresh unclaimed agent on another post: recorded, counting nothing.
    const other = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Another offer', body: 'Also real', post_type: 'deal_opened' },
    });
    await svc.req('POST', `/api/feed/posts/${other.body.post_id}/flag`, { apiKey: (await svc.register()).api_key, body: { reason: 'off-topic' } });
    expect((await svc.req('GET', `/posts/${postId}`)).status).to.equal(404);

    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    await page.goto(`${svc.url}/admin/login`);
    await page.fill('input[name="email"]', ADMIN);
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(`${svc.url}/admin/agents`), page.click('button[type="submit"]')]);
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  it('shows the queue oldest first with each flagger, filters it, has no serious accessibility violation, and restores the post', async () => {
    await page.goto(`${svc.url}/admin/moderation`);
    expect(await page.textContent('h1')).to.equal('Moderation');
    const item = page.locator(`[data-item="post:${postId}"]`);
    expect(await item.locator('[data-testid="state"]').textContent()).to.equal('hidden');
    expect(await item.locator('[data-testid="counting"]').textContent()).to.equal('5');
    expect(await item.locator('tbody tr').count()).to.equal(5);
    expect(await page.locator('[data-item]').count()).to.equal(2);
    expect(await page.locator('[data-item]').first().getAttribute('data-item')).to.equal(`post:${postId}`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'console-moderation-queue');

    await page.selectOption('select[name="state"]', 'flagged');
    await Promise.all([page.waitForURL(/state=flagged/), page.click('form[action="/admin/moderation"] button')]);
    expect(await page.locator('[data-item]').count()).to.equal(1);
    expect(await page.locator(`[data-item="post:${postId}"]`).count()).to.equal(0);

    await page.goto(`${svc.url}/admin/moderation?state=hidden`);
    const form = page.locator(`[data-item="post:${postId}"] form`);
    await form.locator('select[name="decision"]').selectOption('restore');
    await form.locator('input[name="note"]').fill('A real offer, not spam');
    await Promise.all([page.waitForURL(/\/admin\/moderation\?done=/), form.locator('button').click()]);
    expect(await page.textContent('p.notice')).to.equal(`restore: post ${postId}.`);
    expect((await svc.req('GET', `/posts/${postId}`)).status).to.equal(200);
    await page.goto(`${svc.url}/admin/moderation?state=restored`);
    expect(await page.locator(`[data-item="post:${postId}"] [data-testid="state"]`).textContent()).to.equal('restored');
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it('reads the audit log with the restore in it, filters it and exports it, with no serious accessibility violation', async () => {
    await page.goto(`${svc.url}/admin/audit`);
    expect(await page.textContent('h1')).to.equal('Audit log');
    const row = page.locator('tr[data-action="ModerationDecided"]');
    expect(await row.count()).to.equal(1);
    const text = await row.textContent();
    expect(text).to.contain(`post:${postId}`);
    expect(text).to.contain('A real offer, not spam');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'console-audit-log');

    await page.selectOption('select[name="action"]', 'AgentBanned');
    await Promise.all([page.waitForURL(/action=AgentBanned/), page.click('form[action="/admin/audit"] button')]);
    expect(await page.locator('tr[data-action]').count()).to.equal(0);

    const csv = await page.request.get(`${svc.url}/admin/audit/export?format=csv`);
    expect(csv.status()).to.equal(200);
    const lines = (await csv.text()).trim().split('\n');
    expect(lines[0]).to.equal('position,at,action,actor,role,target,detail,note,stream');
    expect(lines.some((l) => l.includes('ModerationDecided') && l.includes(postId))).to.equal(true);
  });
});
