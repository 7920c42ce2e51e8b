import { Eta } from 'eta';
import type { Context } from 'koa';
import { fileURLToPath } from 'node:url';
import { APP_POLICY } from '../page-security.ts';
import { assetUrl } from './assets.ts';

/**
 * The site's and the member app's pages: Eta templates in api/web/views, rendered on the server
 * into one layout (views/layout.eta), every `<%= %>` HTML-escaped. Pages run no inline script or
 * style (APP_POLICY): their look is /assets/site.css and their enhancements /assets/app.js.
 */
const eta = new Eta({ views: fileURLToPath(new URL('./views', import.meta.url)), autoEscape: true, cache: true });

/** Who is signed in, as the header shows it. */
export interface PageMember {
  email: string;
  name: string | null;
  roles: string[];
}

export interface PageData {
  title: string;
  /** The meta description (search results, link previews). */
  description?: string;
  /** The signed-in person, or null. */
  member?: PageMember | null;
  /** The CSRF token of the page's forms (member session). */
  csrf?: string;
  /** A one-time message after an action (see flash in api/web/member.ts). */
  notice?: string | null;
  /** Extra head markup the server built (canonical link, JSON-LD): never user input unescaped. */
  head?: string;
  /** Extra scripts of this page: URLs under /assets. */
  scripts?: string[];
  /** Who may cache the page: private pages (the default) are never stored, public ones briefly. */
  cache?: 'private' | 'public';
  [field: string]: unknown;
}

const layoutData = (ctx: Context, data: PageData) => ({
  member: null,
  csrf: '',
  notice: null,
  head: '',
  description: '',
  scripts: [],
  ...data,
  path: ctx.path,
  css: assetUrl('site.css'),
  js: assetUrl('app.js'),
});

/** Renders `view` into the layout and answers it as an HTML page that no other site may frame. */
export function renderWeb(ctx: Context, view: string, data: PageData, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', data.cache === 'public' ? 'public, max-age=60' : 'no-store');
  ctx.set('Content-Security-Policy', APP_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = eta.render(view, layoutData(ctx, data));
}
