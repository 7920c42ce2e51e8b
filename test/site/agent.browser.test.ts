import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';
import { PHONE, seriousViolations, signInThroughPage } from '../helpers/web.ts';

// The in-app agent in headless Chromium: its suggestions, and actions confirmed after the page
// says what each will do and what it costs.
describe('web: the in-app agent in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  let me: Awaited<ReturnType<typeof signUpWithAgent>>;
  let postId = '';

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    me = await signUpWithAgent(svc, outbox, { name: 'Pipeline Pal', capabilities: ['lead-gen'] });
    const poster = await svc.register({ name: 'Poster' });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: poster.api_key,
      body: { title: 'Who does lead-gen for fintech?', body: 'Looking for lead-gen help this quarter', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    expect(post.status, post.text).to.equal(200);
    postId = post.body.post_id;
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    await signInThroughPage(page, svc, me.user.email, me.user.password);
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  it('suggests a comment on a relevant post and runs it after the person confirms its cost', async () => {
    await page.goto(`${svc.url}/app/agent`);
    expect(await page.textContent('[data-testid="suggestions"]'))
      .to.include('Comment on “Who does lead-gen for fintech?”')
      .and.include('Describe your agent');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'web-agent-desktop');
    await Promise.all([page.waitForURL(/\/app\/agent\/confirm\?/), page.click(`[data-testid="suggestions"] li:has-text("Comment on") button`)]);
    expect(await page.inputValue('input[name="post_id"]')).to.equal(postId);
    await page.fill('textarea[name="draft_content"]', 'We do exactly this. Happy to help.');
    await Promise.all([page.waitForURL(/\/app\/agent\/confirm\?/), page.click('main button[type="submit"]')]);
    const confirm = await page.textContent('[data-testid="confirm"]');
    expect(confirm).to.include(`Pipeline Pal comments on post ${postId}`).and.include('0.1 credits').and.include('has 50');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await Promise.all([page.waitForURL(`${svc.url}/app/agent`), page.click('main button:has-text("Confirm for 0.1 credits")')]);
    expect(await page.textContent('[role="status"]')).to.include('0.1 credits charged');
    const comments = await svc.req('GET', `/api/feed/posts/${postId}/comments`);
    expect(JSON.stringify(comments.body)).to.include('We do exactly this. Happy to help.');
  });

  it('runs a free read and shows its answer', async () => {
    await page.goto(`${svc.url}/app/agent/confirm?action_type=search_agents&query=lead-gen`);
    expect(await page.textContent('[data-testid="confirm"]')).to.include('free');
    await Promise.all([page.waitForURL(`${svc.url}/app/agent/actions`), page.click('main button:has-text("Run")')]);
    expect(await page.textContent('[data-testid="results"]')).to.include('Pipeline Pal');
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it('shows a refused action in plain words on the confirm page', async () => {
    await page.goto(`${svc.url}/app/agent/confirm?action_type=post_to_protocol_room&target_id=no-such-room&draft_content=Hello`);
    await page.click('main button[type="submit"]');
    await page.waitForSelector('[role="alert"]');
    expect(await page.textContent('[role="alert"]')).to.match(/room/i);
    expect(await page.inputValue('textarea[name="draft_content"]')).to.equal('Hello');
  });

  it('fits a phone-size screen', async () => {
    await page.setViewportSize(PHONE);
    for (const path of ['/app/agent', `/app/agent/confirm?action_type=comment_on_post&post_id=${postId}`]) {
      await page.goto(`${svc.url}${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), path).to.equal(true);
      expect(await seriousViolations(page), path).to.deep.equal([]);
    }
    await screenshot(page, 'web-agent-phone');
  });
});
