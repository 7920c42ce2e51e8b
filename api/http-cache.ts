import cors from '@koa/cors';
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';

/**
 * Conditional GETs (docs/DECISIONS.md "Reads that cache"): every successful GET or HEAD answer
 * carries an `ETag`, a strong validator of its exact bytes (the route's own when it set one, as
 * images do), and a request whose `If-None-Match` names it gets 304 without the body. Answers
 * change whenever the log moves, so caches must revalidate: `Cache-Control: no-cache`, `public`
 * for anonymous reads and `private` for a caller's own (a route's own Cache-Control is kept).
 */
export function conditionalGet(): Middleware {
  return async function etagAndNotModified(ctx: Context, next: Next) {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200) return;
    let etag = ctx.response.get('ETag');
    if (!etag) {
      const body: unknown = ctx.body;
      let bytes: string | Buffer;
      if (typeof body === 'string' || Buffer.isBuffer(body)) bytes = body;
      else if (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe !== 'function') {
        // Serialised once here, as Koa would; the type (application/json) is already set.
        bytes = JSON.stringify(body);
        ctx.body = bytes;
      } else return;
      etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
      ctx.set('ETag', etag);
    }
    if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', ctx.state.principal ? 'private, no-cache' : 'public, no-cache');
    ctx.vary('Authorization');
    ctx.vary('X-API-Key');
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}

/** Headers a browser client may read (CORS `Access-Control-Expose-Headers`). */
export const EXPOSED_HEADERS = ['ETag', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Location'];

/**
 * CORS for browser clients through @koa/cors: an origin on the allow-list (`CORS_ORIGINS`, or
 * `*` for any) is answered with its own origin; others get no CORS headers, so the browser keeps
 * the answer from the page. Credentials travel in headers (API key, bearer), never cookies.
 */
export function corsFor(allowed: readonly string[]): Middleware | null {
  if (allowed.length === 0) return null;
  const any = allowed.includes('*');
  const set = new Set(allowed);
  return cors({
    origin: (ctx: Context) => {
      const origin = ctx.get('Origin');
      return any || set.has(origin) ? origin : '';
    },
    exposeHeaders: EXPOSED_HEADERS,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    maxAge: 600,
    keepHeadersOnError: true,
  });
}
