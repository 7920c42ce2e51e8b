import { BoundedCache } from '../../events/kernel/cache.ts';
import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { esc, jsonForScript } from '../routes/site/crawlers.ts';
import type { Services } from '../services.ts';
import { assetUrl } from './assets.ts';
import type { PageData } from './render.ts';
import { renderWeb } from './render.ts';

/**
 * The public site's pages (docs/WEB.md "Public site"): anonymous, the same bytes for everyone, so
 * shared caches may keep them briefly. They carry what crawlers read (canonical link, Open Graph,
 * Twitter card, JSON-LD) in the layout's head, and the first-party page-view script.
 */

const SITE = 'Agent Network';

/** What crawlers read of a page. */
export interface PageMeta {
  title: string;
  description: string;
  /** The page's canonical URL (under PUBLIC_BASE_URL). */
  url: string;
  ogType: string;
  jsonLd: Record<string, unknown>;
}

/** The head markup of a page's meta: every value escaped, the JSON-LD unable to close its element. */
export function metaHead(m: PageMeta): string {
  const title = esc(m.title);
  const description = esc(m.description);
  const url = esc(m.url);
  return [
    `<link rel="canonical" href="${url}">`,
    `<meta property="og:site_name" content="${esc(SITE)}">`,
    `<meta property="og:type" content="${esc(m.ogType)}">`,
    `<meta property="og:title" content="${title}">`,
    `<meta property="og:description" content="${description}">`,
    `<meta property="og:url" content="${url}">`,
    '<meta name="twitter:card" content="summary">',
    `<meta name="twitter:title" content="${title}">`,
    `<meta name="twitter:description" content="${description}">`,
    `<script type="application/ld+json">${jsonForScript({ '@context': 'https://schema.org', ...m.jsonLd })}</script>`,
  ].join('\n');
}

/** Seconds a shared cache may keep a public page. */
export const PUBLIC_MAX_AGE = 300;

/**
 * Renders a public page: the view in the layout with its meta, nobody's header (the same bytes for
 * every visitor), the page-view script, cacheable for `maxAge` seconds.
 */
export function renderPublic(ctx: Context, view: string, meta: PageMeta | null, data: PageData, maxAge = PUBLIC_MAX_AGE): void {
  renderWeb(ctx, view, {
    description: meta?.description,
    ...data,
    head: `${meta ? metaHead(meta) : ''}${data.head ?? ''}`,
    member: null,
    scripts: [assetUrl('pageview.js'), ...(data.scripts ?? [])],
    cache: 'public',
  });
  ctx.set('Cache-Control', `public, max-age=${maxAge}`);
}

/** The headers a cached page is answered with again. */
const KEPT = ['content-type', 'cache-control', 'content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy'];

interface Cached {
  position: number;
  body: string;
  etag: string;
  headers: Array<[string, string]>;
}

/** Pages kept at most (the least recently used go first). */
const MAX_CACHED = 500;

/**
 * A public page's rendering kept in memory while the read models stand still: an entry is used
 * again only at the read models' position it was rendered at, so a page never shows older data
 * than a fresh render would. Every 200 answer gets a strong ETag; a matching If-None-Match is 304.
 */
export function publicPageCache(s: Services) {
  // The most recently used pages, MAX_CACHED of them.
  const cache = new BoundedCache<string, Cached>({ max: MAX_CACHED });
  return async function cachedPublicPage(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const key = ctx.url;
    const position = s.runner.position;
    let hit = cache.get(key);
    if (hit && hit.position === position) {
      for (const [name, value] of hit.headers) ctx.set(name, value);
    } else {
      await next();
      if (ctx.status !== 200 || typeof ctx.body !== 'string') return;
      const body = ctx.body;
      hit = {
        position,
        body,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        headers: KEPT.map((h): [string, string] => [h, ctx.response.get(h)]).filter(([, v]) => v !== ''),
      };
      cache.set(key, hit);
    }
    ctx.set('ETag', hit.etag);
    if (ctx.get('If-None-Match') === hit.etag) {
      ctx.status = 304;
      ctx.body = null;
      return;
    }
    ctx.status = 200;
    ctx.body = hit.body;
  };
}
