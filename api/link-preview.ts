import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ogs from 'open-graph-scraper';
import { checkWebhookTarget, RefusedTarget, resolvePublicTarget } from '../commands/webhooks/target.ts';
import type { Resolver } from '../commands/webhooks/target.ts';
import { isAddressLiteral } from '../commands/agents/webhook-url.ts';

export interface LinkPreview {
  url: string;
  title: string | null;
  description: string | null;
  image: string | null;
  site_name: string | null;
}

export interface PreviewOptions {
  resolver: Resolver;
  /** WEBHOOK_ALLOW_LOOPBACK (tests only): loopback targets pass the guard, as for webhooks. */
  allowLoopback: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

/** Why a URL is refused before any connection (422), or null. */
export function linkUrlProblem(raw: string, allowLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
  if (url.username || url.password) return 'url must not carry credentials';
  // The webhook check, read for http too: an https copy of the URL has the same host.
  const https = new URL(url.href);
  https.protocol = 'https:';
  const problem = checkWebhookTarget(https.href, allowLoopback);
  return problem ? problem.replace('webhook_url', 'url') : null;
}

/**
 * Fetches a page for its preview through the webhook guard: every hop's host is resolved and
 * checked at connect time (the connection is pinned to the checked address), redirects are
 * followed at most `maxRedirects` times and each is checked again, http and https only, the body
 * is read up to `maxBytes` and the whole fetch is bounded by `timeoutMs`. RefusedTarget: a hop
 * pointed at a non-public address (no connection was opened to it).
 */
export async function fetchPageHtml(raw: string, opts: PreviewOptions): Promise<{ url: string; html: string | null }> {
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  const maxBytes = opts.maxBytes ?? 512 * 1024;
  let url = new URL(raw);
  for (let hop = 0; hop <= (opts.maxRedirects ?? 5); hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedTarget('redirect to a scheme other than http or https');
    const target = await resolvePublicTarget(url, opts.resolver, opts.allowLoopback, { allowHttp: true });
    const left = deadline - Date.now();
    if (left <= 0) return { url: url.href, html: null };
    const res = await get(url, target, left, maxBytes);
    if (res.location !== null) {
      url = new URL(res.location, url);
      continue;
    }
    return { url: url.href, html: res.html };
  }
  return { url: url.href, html: null };
}

/**
 * Fetches one URL's text through the same guard, without following redirects (a proof served at
 * an origin must be served by that origin): the text of a 2xx answer whose Content-Type matches
 * `type`, up to `maxBytes`; null for anything else. RefusedTarget as fetchPageHtml.
 */
export async function fetchPublicText(raw: string, opts: PreviewOptions & { accept: string; type: RegExp }): Promise<string | null> {
  const url = new URL(raw);
  const target = await resolvePublicTarget(url, opts.resolver, opts.allowLoopback);
  const res = await get(url, target, opts.timeoutMs ?? 5000, opts.maxBytes ?? 4096, opts.accept, opts.type);
  return res.location === null ? res.html : null;
}

function get(
  url: URL,
  target: { address: string; family: number },
  timeoutMs: number,
  maxBytes: number,
  accept = 'text/html,application/xhtml+xml',
  type: RegExp = /html/i,
): Promise<{ location: string | null; html: string | null }> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  const name = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: { location: string | null; html: string | null }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const req = client.request(
      {
        protocol: url.protocol,
        hostname: name,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { accept, 'user-agent': 'agent-network-link-preview/1' },
        lookup: pinned,
        agent: false,
        servername: isAddressLiteral(name) ? undefined : name,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && typeof res.headers.location === 'string') return finish({ location: res.headers.location, html: null });
        const contentType = String(res.headers['content-type'] ?? '');
        if (status < 200 || status >= 300 || !type.test(contentType)) return finish({ location: null, html: null });
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          chunks.push(c);
          // The head is what matters: past the cap, parse what arrived.
          if (size >= maxBytes) finish({ location: null, html: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8') });
        });
        res.on('end', () => finish({ location: null, html: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => finish({ location: null, html: null }));
      },
    );
    const timer = setTimeout(() => finish({ location: null, html: null }), timeoutMs);
    req.on('error', () => finish({ location: null, html: null }));
    req.end();
  });
}

const text = (v: unknown, max: number) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : null);

/** Open Graph (with the title and description tags as fallbacks), parsed by open-graph-scraper from the fetched HTML. */
export async function parsePreview(pageUrl: string, html: string | null): Promise<LinkPreview> {
  const empty = { url: pageUrl, title: null, description: null, image: null, site_name: null };
  if (!html) return empty;
  let result: Awaited<ReturnType<typeof ogs>>['result'];
  try {
    result = (await ogs({ html })).result;
  } catch {
    return empty;
  }
  const images = Array.isArray(result.ogImage) ? result.ogImage : [];
  let image: string | null = null;
  if (images[0]?.url) {
    try {
      const abs = new URL(images[0].url, pageUrl);
      image = abs.protocol === 'http:' || abs.protocol === 'https:' ? abs.href : null;
    } catch {
      image = null;
    }
  }
  return {
    url: text(result.ogUrl, 2000) && /^https?:\/\//.test(String(result.ogUrl)) ? String(result.ogUrl) : pageUrl,
    title: text(result.ogTitle, 300),
    description: text(result.ogDescription, 1000),
    image,
    site_name: text(result.ogSiteName, 200),
  };
}

/**
 * A link preview. A non-public target at any hop: RefusedTarget (the route's 422). A page that
 * cannot be fetched (DNS failure, refused connection, timeout, not HTML): the URL with no tags.
 */
export async function linkPreview(url: string, opts: PreviewOptions): Promise<LinkPreview> {
  let page: { url: string; html: string | null };
  try {
    page = await fetchPageHtml(url, opts);
  } catch (err) {
    if (err instanceof RefusedTarget) throw err;
    page = { url, html: null };
  }
  return parsePreview(page.url, page.html);
}
export { RefusedTarget };
