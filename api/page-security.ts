import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/**
 * The security headers of every HTML page the service serves, in one place (docs/SECURITY.md
 * "Pages: framing and Content-Security-Policy"). No page may be framed by another site (a
 * checkout's Pay button or a claim form under someone else's overlay): `frameGuard` runs on every
 * answer, in the outermost middleware, and gives each HTML answer `X-Frame-Options: DENY` and a
 * Content-Security-Policy with `frame-ancestors 'none'`: the page's own policy with that directive
 * added when it lacks one, else `PAGE_POLICY`, which runs no script at all.
 */

const BASE: ReadonlyArray<[string, string[]]> = [
  ['default-src', ["'none'"]],
  ['style-src', ["'unsafe-inline'"]],
  ['img-src', ["'self'", 'data:']],
  ['form-action', ["'self'"]],
  ['base-uri', ["'none'"]],
  ['frame-ancestors', ["'none'"]],
];

const render = (directives: ReadonlyArray<[string, string[]]>) => directives.map(([name, values]) => `${name} ${values.join(' ')}`).join('; ');

/** The policy of a page without script: markup, inline styles, same-origin images and forms. */
export const PAGE_POLICY = render(BASE);

/** The CSP source of one inline script: its SHA-256, as the browser computes it over the element's text. */
export const scriptHash = (source: string) => `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`;

export interface ScriptSources {
  /** Extra origins per directive (a payment provider's script, frames and API). */
  script?: string[];
  frame?: string[];
  connect?: string[];
  img?: string[];
}

/**
 * The policy of a page that runs the given inline scripts and calls its own origin. The scripts
 * are hashed from the page's source code, never from what it rendered, so markup injected into a
 * page can never run.
 */
export function scriptPolicy(inlineScripts: string[], extra: ScriptSources = {}): string {
  const directives = BASE.map(([name, values]): [string, string[]] => [name, [...values]]);
  const add = (name: string, values: string[]) => {
    const at = directives.find(([n]) => n === name);
    if (at) at[1].push(...values);
    else directives.splice(directives.length - 1, 0, [name, values]);
  };
  add('script-src', [...inlineScripts.map(scriptHash), ...(extra.script ?? [])]);
  add('connect-src', ["'self'", ...(extra.connect ?? [])]);
  if (extra.frame?.length) add('frame-src', extra.frame);
  if (extra.img?.length) add('img-src', extra.img);
  return render(directives);
}

/**
 * The policy of the site's and the member app's pages (api/web/render.ts): scripts and styles only
 * from the service's own files (/assets), no inline script or style at all, forms and fetches to
 * its own origin, never framed.
 */
export const APP_POLICY = render([
  ['default-src', ["'none'"]],
  ['script-src', ["'self'"]],
  ['style-src', ["'self'"]],
  ['img-src', ["'self'", 'data:']],
  ['connect-src', ["'self'"]],
  ['form-action', ["'self'"]],
  ['base-uri', ["'none'"]],
  ['frame-ancestors', ["'none'"]],
]);

const FRAME_ANCESTORS = /(^|;)\s*frame-ancestors\s/i;

/** Every HTML answer: never framed (X-Frame-Options DENY and CSP frame-ancestors 'none'), and a CSP. */
export function frameGuard(ctx: Context): void {
  if (!/^text\/html\b/i.test(ctx.response.get('Content-Type'))) return;
  ctx.set('X-Frame-Options', 'DENY');
  const own = ctx.response.get('Content-Security-Policy');
  if (!own) ctx.set('Content-Security-Policy', PAGE_POLICY);
  else if (!FRAME_ANCESTORS.test(own)) ctx.set('Content-Security-Policy', `${own}; frame-ancestors 'none'`);
}
