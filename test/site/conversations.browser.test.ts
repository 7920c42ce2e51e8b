import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';
import { PHONE, seriousViolations, signInThroughPage } from '../helpers/web.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

// The member's conversations in headless Chromium: an agent's DM answered as the linked agent
// (its cost shown before sending), an introduction approved into a match, match messages sent and
// reported, every page checked with axe-core at desktop and phone size.
describe('web: inbox, introductions and matches in a real browser', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  let me: Awaited<ReturnType<typeof signUpWithAgent>>;
  let other: Awaited<ReturnType<typeof signUpWithAgent>>;
  let writer: Awaited<ReturnType<TestService['register']>>;
  let matchId = '';

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    me = await signUpWithAgent(svc, outbox, { name: 'My Helper' });
    other = await signUpWithAgent(svc, outbox, { name: 'Broker Bot', capabilities: ['lead-gen'] });
    writer = await svc.register({ name: 'Scout <b>Agent</b>' });
    // The member is listed, so agents may ask to introduce them.
    const profile = await svc.req('PATCH', '/api/auth/me', { headers: bearer(me.user.access_token), body: { headline: 'Operations lead' } });
    expect(profile.status, profile.text).to.equal(200);
    // A new agent's direct messages unlock an hour after registration (bearer tokens taken before this expire).
    svc.clock.advance(3600_000);
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    await signInThroughPage(page, svc, me.user.email, me.user.password);
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  it('replies to an agent’s DM as the linked agent, with the cost shown before sending', async () => {
    const dm = await svc.req('POST', `/api/protocol/agents/${writer.agent_id}/dm`, {
      apiKey: writer.api_key,
      body: { to_user_id: me.user.user_id, message: 'Hello <script>alert(1)</script> human' },
    });
    expect(dm.status, dm.text).to.equal(200);
    await page.goto(`${svc.url}/app/inbox`);
    expect(await page.textContent('[data-testid="inbox"]'))
      .to.include('Scout <b>Agent</b>')
      .and.include('<script>alert(1)</script>');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await Promise.all([page.waitForURL(`${svc.url}/app/inbox/${writer.agent_id}`), page.click(`a[href="/app/inbox/${writer.agent_id}"]`)]);
    expect(await page.textContent('[data-testid="cost"]')).to.include('0.25 credits');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await page.fill('textarea[name="message"]', 'Thanks, let us talk');
    await Promise.all([page.waitForURL(`${svc.url}/app/inbox/${writer.agent_id}`), page.click('main button[type="submit"]')]);
    expect(await page.textContent('[role="status"]')).to.include('0.25 credits charged, 49.75 left');
    expect(await page.textContent('[data-testid="thread"]')).to.include('Thanks, let us talk');
    await screenshot(page, 'web-inbox-thread-desktop');
    // The API sees the same reply.
    const myToken = (await svc.req('POST', '/api/auth/login', { body: { email: me.user.email, password: me.user.password } })).body.access_token as string;
    const thread = await svc.req('GET', `/api/agent/my-inbox/${writer.agent_id}/thread`, { headers: bearer(myToken) });
    expect(thread.body.messages.at(-1)).to.include({ direction: 'outbound', message: 'Thanks, let us talk', from_agent_id: me.agent.agent_id });
  });

  it('shows a refused reply in plain words and keeps what was typed', async () => {
    await page.goto(`${svc.url}/app/inbox/${writer.agent_id}`);
    // A reply made only of spaces passes the browser's `required` but not the API's rule.
    await page.fill('textarea[name="message"]', ' '.repeat(3));
    await page.$eval('textarea[name="message"]', (el) => el.removeAttribute('required'));
    await page.fill('textarea[name="message"]', '');
    await page.click('main button[type="submit"]');
    await page.waitForSelector('[role="alert"]');
    expect(await page.textContent('[role="alert"]'))
      .to.include('Some fields need a change')
      .and.include('Correct the highlighted fields');
  });

  it('approves an introduction into a match, sends a message, and reports the other member’s', async () => {
    const intro = await svc.req('POST', '/api/agent/intros', {
      apiKey: other.agent.api_key,
      body: { member_id: me.user.user_id, reason: 'You both run operations' },
    });
    expect(intro.status, intro.text).to.equal(200);
    await page.goto(`${svc.url}/app/matches`);
    expect(await page.textContent('[data-testid="intros"]'))
      .to.include('Broker Bot')
      .and.include('You both run operations');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await Promise.all([page.waitForURL(/\/app\/matches\/mtc_/), page.click('[data-testid="intros"] button:has-text("Approve")')]).catch(
      async (err: unknown) => {
        throw new Error(`${String(err)}\n${page.url()}\n${(await page.textContent('main')) ?? ''}`);
      },
    );
    matchId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    expect(await page.textContent('[role="status"]')).to.include('you are matched');
    await page.fill('textarea[name="content"]', 'Hello from the browser');
    await Promise.all([page.waitForURL(`${svc.url}/app/matches/${matchId}`), page.click('section button[type="submit"]')]);
    expect(await page.textContent('[data-testid="messages"]')).to.include('Hello from the browser');
    // The other member reads it through the API, and answers.
    const otherToken = (await svc.req('POST', '/api/auth/login', { body: { email: other.user.email, password: other.user.password } })).body
      .access_token as string;
    const read = await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(otherToken) });
    expect(read.body.map((m: { content: string }) => m.content)).to.deep.equal(['Hello from the browser']);
    const answer = await svc.req('POST', '/api/messages', {
      headers: bearer(otherToken),
      body: { match_id: matchId, content: 'Buy my course now' },
    });
    expect(answer.status, answer.text).to.equal(200);
    await page.goto(`${svc.url}/app/matches`);
    expect(await page.textContent('[data-testid="matches"]')).to.include('1 unread');
    await page.goto(`${svc.url}/app/matches/${matchId}`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await page.click('details summary');
    await page.selectOption('details select[name="reason"]', 'spam');
    await Promise.all([page.waitForURL(`${svc.url}/app/matches/${matchId}`), page.click('details button[type="submit"]')]);
    expect(await page.textContent('[role="status"]')).to.include('the message is reported');
    const report = (await svc.running.services.log.readStream(`match-${matchId}`)).find((e) => e.type === 'MatchMessageReported');
    expect(report?.data).to.include({ reason: 'spam', reported_by: me.user.user_id });
    await screenshot(page, 'web-match-desktop');
  });

  it('fits a phone-size screen on every page', async () => {
    await page.setViewportSize(PHONE);
    for (const path of ['/app/inbox', `/app/inbox/${writer.agent_id}`, '/app/matches', `/app/matches/${matchId}`]) {
      await page.goto(`${svc.url}${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), path).to.equal(true);
      expect(await seriousViolations(page), path).to.deep.equal([]);
    }
    await screenshot(page, 'web-match-phone');
  });
});
