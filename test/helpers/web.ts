import { AxeBuilder } from '@axe-core/playwright';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { TestService } from './service.ts';

/** axe-core's serious and critical violations on the page (WCAG 2.1 A and AA rules and best practices). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  // axe ran on the page (the pages' CSP allows no inline script; axe is injected by the driver).
  expect(results.passes.length).to.be.greaterThan(10);
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

/** Signs in through the site's sign-in form and waits for the page it leads to (the dashboard by default). */
export async function signInThroughPage(page: Page, svc: TestService, email: string, password: string, landing = '/app'): Promise<void> {
  await page.goto(`${svc.url}/signin?next=${encodeURIComponent(landing)}`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', password);
  await Promise.all([page.waitForURL(`${svc.url}${landing}`), page.click('main button[type="submit"]')]);
}

/** The phone-size viewport the pages are checked at (and the desktop one). */
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };
