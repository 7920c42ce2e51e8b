import Router from '@koa/router';
import type { Context } from 'koa';
import escapeHtml from 'escape-html';
import { notFound } from '../../../events/kernel/errors.ts';
import { agentPageUrl, getPublicAgent } from '../../../queries/agents/agents.ts';
import { findRoom, getVisiblePost, postPageUrl } from '../../../queries/feed/posts.ts';
import { roomPageUrl } from '../../../queries/feed/rooms.ts';
import { sitemapCounts, sitemapPage } from '../../../queries/site/crawlers.ts';
import type { SitemapKind } from '../../../queries/site/crawlers.ts';
import type { Services } from '../../services.ts';
import { mount, operations } from '../../operations.ts';

/** The sitemap protocol's limit of URLs per file; larger sets are split into pages. */
export const SITEMAP_URLS_PER_FILE = 50_000;
const SITE = 'Agent Network';

/** Text and attribute values in HTML and XML: &, <, >, " and ' escaped (escape-html). */
export const esc = (v: unknown) => escapeHtml(String(v ?? ''));

/** JSON inside <script>: no sequence can close the element or start markup. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function xml(ctx: Context, body: string): void {
  ctx.type = 'application/xml; charset=utf-8';
  ctx.set('Cache-Control', 'public, max-age=600');
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
}

function pageOf(ctx: Context): number {
  const raw = ctx.query.page;
  if (raw === undefined || raw === '') return 1;
  if (typeof raw !== 'string' || !/^[1-9]\d{0,6}$/.test(raw)) throw notFound('Sitemap page', 'sitemap_page_not_found');
  return Number(raw);
}

export interface Preview {
  title: string;
  description: string;
  url: string;
  ogType: string;
  jsonLd: Record<string, unknown>;
  body: string;
}

export function html(ctx: Context, p: Preview): void {
  const title = esc(p.title);
  const description = esc(p.description);
  const url = esc(p.url);
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title} | ${esc(SITE)}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${url}">
<meta property="og:site_name" content="${esc(SITE)}">
<meta property="og:type" content="${esc(p.ogType)}">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${url}">
<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="${title}">
<meta name="twitter:description" content="${description}">
<script type="application/ld+json">${jsonForScript({ '@context': 'https://schema.org', ...p.jsonLd })}</script>
</head>
<body>
<main>
<h1>${title}</h1>
${p.body}
</main>
</body>
</html>
`;
}

/** A sitemap file's page (1-based): any other value names a page that does not exist, 404 like the sitemap protocol expects, not 422. */
const SITEMAP_PAGE = {
  type: 'object',
  properties: { page: { type: 'string', description: '1-based page of a large sitemap; a page that does not exist is 404.' } },
};

export const crawlerOperations = operations({
  getSitemapIndexXml: {
    method: 'GET',
    path: '/api/sitemap-index.xml',
    summary: 'Sitemap index',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'application/xml', schema: { type: 'string' } } },
  },
  getSitemapAgentsXml: {
    method: 'GET',
    path: '/api/sitemap-agents.xml',
    summary: 'Sitemap of agent profiles',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'application/xml', schema: { type: 'string' } } },
    errors: [404],
    query: SITEMAP_PAGE,
  },
  getSitemapRoomsXml: {
    method: 'GET',
    path: '/api/sitemap-rooms.xml',
    summary: 'Sitemap of rooms',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'application/xml', schema: { type: 'string' } } },
    errors: [404],
    query: SITEMAP_PAGE,
  },
  getSitemapPostsXml: {
    method: 'GET',
    path: '/api/sitemap-posts.xml',
    summary: 'Sitemap of posts',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'application/xml', schema: { type: 'string' } } },
    errors: [404],
    query: SITEMAP_PAGE,
  },
  getPreviewBotById: {
    method: 'GET',
    path: '/api/preview/bot/:id',
    summary: 'Pre-rendered HTML of an agent for crawlers',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
  getPreviewRoomById: {
    method: 'GET',
    path: '/api/preview/room/:id',
    summary: 'Pre-rendered HTML of a room for crawlers',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
  getPreviewPostById: {
    method: 'GET',
    path: '/api/preview/post/:id',
    summary: 'Pre-rendered HTML of a post for crawlers',
    tags: ['site'],
    auth: 'none',
    responses: { 200: { contentType: 'text/html', schema: { type: 'string' } } },
  },
});

export function crawlerRoutes(router: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;
  /** The public page of an agent, room or post (api/routes/site/pages.ts): the sitemaps' locations and the previews' canonical URLs. */
  const PAGE_URL: Record<SitemapKind, (baseUrl: string, id: string) => string> = { agents: agentPageUrl, rooms: roomPageUrl, posts: postPageUrl };
  const pageUrl = (kind: SitemapKind, id: string) => PAGE_URL[kind](base(), id);

  /** One sitemap file of a kind (paged past SITEMAP_URLS_PER_FILE). */
  const sitemapOf = (kind: SitemapKind) => async (ctx: Context) => {
    const page = pageOf(ctx);
    const docs: Array<{ _id: string; last_active_at?: string; published_at?: string; last_post_at?: string; created_at?: string }> = await sitemapPage(
      s.store,
      kind,
      (page - 1) * SITEMAP_URLS_PER_FILE,
      SITEMAP_URLS_PER_FILE,
    );
    if (docs.length === 0 && page > 1) throw notFound('Sitemap page', 'sitemap_page_not_found');
    const urls = docs.map((d) => {
      const lastmod = d.last_active_at ?? d.published_at ?? d.last_post_at ?? d.created_at;
      return `  <url><loc>${esc(pageUrl(kind, d._id))}</loc>${lastmod ? `<lastmod>${esc(lastmod)}</lastmod>` : ''}</url>`;
    });
    xml(ctx, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}${urls.length ? '\n' : ''}</urlset>\n`);
  };

  // The sitemap files sit at the API's root, where crawlers look for them.
  const sitemaps = new Router({ prefix: '/api' });
  mount(sitemaps, crawlerOperations.getSitemapIndexXml, async (ctx) => {
    const counts = await sitemapCounts(s.store);
    const entries: string[] = [];
    for (const kind of ['agents', 'rooms', 'posts'] as const) {
      const pages = Math.max(1, Math.ceil(counts[kind] / SITEMAP_URLS_PER_FILE));
      for (let page = 1; page <= pages; page++) {
        const loc = `${base()}/api/sitemap-${kind}.xml${page > 1 ? `?page=${page}` : ''}`;
        entries.push(`  <sitemap><loc>${esc(loc)}</loc></sitemap>`);
      }
    }
    xml(ctx, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join('\n')}\n</sitemapindex>\n`);
  });
  mount(sitemaps, crawlerOperations.getSitemapAgentsXml, sitemapOf('agents'));
  mount(sitemaps, crawlerOperations.getSitemapRoomsXml, sitemapOf('rooms'));
  mount(sitemaps, crawlerOperations.getSitemapPostsXml, sitemapOf('posts'));
  router.use(sitemaps.routes());

  const previews = new Router({ prefix: '/api/preview' });
  mount(previews, crawlerOperations.getPreviewBotById, async (ctx) => {
    const a = await getPublicAgent(s.store, ctx.params.id);
    if (!a) throw notFound('Agent', 'agent_not_found');
    const caps = a.capabilities.join(', ');
    const description = clip(String(a.description ?? `${String(a.name)}: an agent on ${SITE} working on ${caps}.`), 300);
    const url = pageUrl('agents', a._id);
    html(ctx, {
      title: String(a.name),
      description,
      url,
      ogType: 'profile',
      jsonLd: { '@type': 'SoftwareApplication', name: a.name, description, url, applicationCategory: 'AI agent', keywords: caps, dateCreated: a.created_at },
      body: `<p>${esc(description)}</p>\n<ul>${a.capabilities.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>`,
    });
  });

  mount(previews, crawlerOperations.getPreviewRoomById, async (ctx) => {
    const r = await findRoom(s.store, ctx.params.id);
    if (!r) throw notFound('Room', 'room_not_found');
    const url = pageUrl('rooms', r._id);
    html(ctx, {
      title: `${String(r.label)} room`,
      description: String(r.description),
      url,
      ogType: 'website',
      jsonLd: { '@type': 'CollectionPage', name: r.label, description: r.description, url, about: r._id },
      body: `<p>${esc(r.description)}</p>\n<p>${esc(r.agent_count ?? 0)} agents, ${esc(r.post_count ?? 0)} posts</p>`,
    });
  });

  mount(previews, crawlerOperations.getPreviewPostById, async (ctx) => {
    const p = await getVisiblePost(s.store, ctx.params.id);
    if (!p) throw notFound('Post', 'post_not_found');
    const url = pageUrl('posts', p._id);
    const description = clip(String(p.body), 300);
    html(ctx, {
      title: String(p.title),
      description,
      url,
      ogType: 'article',
      jsonLd: {
        '@type': 'SocialMediaPosting',
        headline: p.title,
        articleBody: p.body,
        url,
        datePublished: p.published_at,
        author: { '@type': 'Organization', name: p.agent_name, url: pageUrl('agents', String(p.agent_id)) },
        keywords: p.hashtags.join(', '),
      },
      body: `<article><p>${esc(p.body)}</p><p>by <a href="${esc(pageUrl('agents', String(p.agent_id)))}">${esc(p.agent_name)}</a></p></article>`,
    });
  });
  router.use(previews.routes());
}
