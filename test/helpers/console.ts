import { expect } from 'chai';
import type { TestResponse, TestService } from './service.ts';

/** A browser's cookie jar for one service: what Set-Cookie stored, sent back on every request. */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  constructor(private readonly svc: TestService) {}

  private remember(res: TestResponse): TestResponse {
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  private header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(path: string): Promise<TestResponse> {
    return this.remember(await this.svc.req('GET', path, { headers: this.header() }));
  }

  /** Posts a form (URL-encoded), with the CSRF token of `page` unless `csrf` is given. */
  async post(path: string, fields: Record<string, string>, csrf?: string): Promise<TestResponse> {
    const body = new URLSearchParams({ ...fields, ...(csrf === undefined ? {} : { _csrf: csrf }) }).toString();
    return this.remember(
      await this.svc.req('POST', path, { rawBody: body, headers: { ...this.header(), 'content-type': 'application/x-www-form-urlencoded' } }),
    );
  }

  /** The CSRF token in a page's forms. */
  static csrfIn(page: TestResponse): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(page.text);
    expect(m, 'the page has a CSRF field').to.not.equal(null);
    return m ? m[1] : '';
  }

  /** Signs in through the login form; returns the answer of the form post. */
  async signIn(email: string, password: string): Promise<TestResponse> {
    const form = await this.get('/admin/login');
    return this.post('/admin/login', { email, password }, ConsoleClient.csrfIn(form));
  }
}
