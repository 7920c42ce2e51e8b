import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

// The checkout page under its Content-Security-Policy (api/page-security.ts): its own script,
// allowed by hash, runs the sandbox payment; a framing attempt by another origin shows nothing.
describe('site: the checkout page in a real browser, under its CSP', function () {
  this.timeout(20 * 60_000); // the first run may install chromium
  let svc: TestService;
  let browser: Browser;

  before(async () => {
    svc = await startTestService();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('pays in the sandbox with its hashed script and reports no CSP violation; inside a frame it does not load', async () => {
    const agent = await svc.register({ name: 'Upgraded' });
    const order = await svc.req('POST', `/api/protocol/agents/${agent.agent_id}/upgrade`, { body: {} });
    expect(order.status, order.text).to.equal(200);
    const url = `${svc.url}${new URL(order.body.payment_url as string).pathname}`;
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(url);
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForFunction(() => /^(Paid|Refused)/.test(document.getElementById('status')?.textContent ?? ''));
    expect(await page.textContent('#status')).to.match(/^Paid: /);
    expect(violations).to.deep.equal([]);
    await screenshot(page, 'checkout-paid');

    // Another site framing the page: the browser refuses to render it inside the frame.
    await page.setContent(`<iframe id="f" src="${url}" width="600" height="400"></iframe>`);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const inside = frame ? await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '') : '';
    expect(inside).to.not.match(/Pay /);
    await page.close();
  });
});
