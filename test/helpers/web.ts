import { AxeBuilder } from '@axe-core/playwright';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { TestResponse, TestService } from './service.ts';

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

/**
 * A person's browser session over plain HTTP (for the pages' security tests): keeps the cookies
 * the site sets, reads each page's CSRF token, posts URL-encoded forms. Requests go through
 * `svc.req`, so every answer is checked against the route table like any API test's.
 */
export class WebSession {
  private readonly jar = new Map<string, string>();
  /** The CSRF token of the last page read that had a form. */
  csrf = '';

  constructor(private readonly svc: TestService) {}

  private keep(res: TestResponse): TestResponse {
    const set = res.headers['set-cookie'] ?? [];
    for (const line of set) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const token = typeof res.body === 'string' ? /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] : undefined;
    if (token) this.csrf = token;
    return res;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    return { accept: 'text/html', ...(cookie ? { cookie } : {}), ...extra };
  }

  /** `unchecked`: the answer is not checked against the route table (a test that checks it itself). */
  async get(path: string, unchecked = false): Promise<TestResponse> {
    return this.keep(await this.svc.req('GET', path, { headers: this.headers(), unchecked }));
  }

  /** Posts a form with the session's CSRF token (unless the form names its own `_csrf`). */
  async post(path: string, form: Record<string, string> = {}, unchecked = false): Promise<TestResponse> {
    const rawBody = new URLSearchParams({ _csrf: this.csrf, ...form }).toString();
    return this.keep(await this.svc.req('POST', path, { rawBody, headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded' }), unchecked }));
  }

  /** Signs in through the sign-in form; the session then carries the member's cookies. */
  async signIn(email: string, password: string): Promise<void> {
    await this.get('/signin');
    const res = await this.post('/signin', { email, password });
    expect(res.status, res.text).to.equal(303);
  }
}
