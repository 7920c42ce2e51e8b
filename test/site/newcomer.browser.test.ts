import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { bearer, communityWith, ROOT_EMAIL } from '../helpers/communities.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { freshEmail, signUp } from '../helpers/users.ts';

// A newcomer, without any documentation: from the home page to a claimed agent and a first circle
// post, only by reading the pages and following their links and buttons. What they bring is what a
// person has in hand: their agent's claim token (the agent's developer gave it to them) and an
// invite link to a community (a colleague sent it).
describe('web: a newcomer from / to a claimed agent and a first circle post', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let outbox: string;
  let browser: Browser;
  let page: Page;
  const email = freshEmail();
  let claimToken = '';
  let inviteLink = '';

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ROOT_EMAIL }));
    // The newcomer's agent, registered by its developer with the newcomer's address as its owner's.
    const agent = await svc.register({ owner_email: email, name: 'Newcomer Bot' });
    claimToken = String(agent.body.claim_token);
    // A community with an invite code, made by its admin.
    const root = await signUp(svc, outbox, ROOT_EMAIL);
    const admin = await signUp(svc, outbox);
    const ids = await communityWith(svc, root, admin, [], 'Makers');
    const code = await svc.req('POST', '/api/admin/community-admin/codes', { headers: bearer(admin.access_token), body: { community_id: ids.community_id } });
    expect(code.status, code.text).to.equal(201);
    // The link as sent, on this test service's address.
    inviteLink = `${svc.url}/join/${encodeURIComponent(String(code.body.code))}`;
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await stopWithOutbox(svc, outbox);
  });

  const click = (name: string | RegExp, role: 'link' | 'button' = 'link') =>
    Promise.all([page.waitForNavigation(), page.getByRole(role, { name }).first().click()]);

  it('signs up from the home page with the mailed code', async () => {
    await page.goto(`${svc.url}/`);
    await click('Sign up');
    await page.getByLabel('E-mail').fill(email);
    await click(/send|continue|code/i, 'button');
    const [mail] = await waitForMails(outbox, email);
    await page.getByLabel(/code/i).first().fill(codeIn(mail));
    await page.getByLabel(/name/i).first().fill('Nora Newcomer');
    await page
      .getByLabel(/password/i)
      .first()
      .fill('a newcomer password');
    await click(/create|sign up|continue/i, 'button');
    expect(new URL(page.url()).pathname).to.equal('/app');
  });

  it('claims their agent with its claim token, following the dashboard’s next step', async () => {
    await click(/claim/i);
    await page.getByLabel(/claim token/i).fill(claimToken);
    await click(/continue|send|code|next/i, 'button');
    const mails = await waitForMails(outbox, email, 2);
    await page
      .getByLabel(/code/i)
      .first()
      .fill(codeIn(mails[mails.length - 1]));
    await click(/claim/i, 'button');
    expect(await page.textContent('[role="status"]')).to.include('Newcomer Bot is now yours.');
  });

  it('joins a community from an invite link and makes a first circle post', async () => {
    await page.goto(inviteLink);
    await click(/in the app|join/i);
    await click(/join the community/i, 'button');
    expect(await page.textContent('[role="status"]')).to.include('You joined Makers.');
    await page.locator('main a[href^="/app/circles/"]').first().click();
    await page.waitForLoadState('load');
    await page
      .getByRole('textbox', { name: /post|content|message|say/i })
      .first()
      .fill('Hello Makers, glad to be here.');
    await click(/^post$/i, 'button');
    expect(await page.textContent('[role="status"]')).to.equal('Your post is in the circle.');
    expect(await page.textContent('[data-testid="posts"]')).to.include('Hello Makers, glad to be here.');
    await screenshot(page, 'web-newcomer-first-post');
  });
});
