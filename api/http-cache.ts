import cors from '@koa/cors';
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { BoundedCache } from '../events/kernel/cache.ts';

/** A route whose anonymous answer depends on the read models only (not the clock, not the caller) says so. */
export function cacheableByPosition(ctx: Context): void {
  ctx.state.cacheableByPosition = true;
}

export interface Remembered {
  position: number;
  /** The route template that computed it (metrics label a remembered answer by it too). */
  route: string | undefined;
  etag: string;
  bytes: string | Buffer;
  type: string;
}

/**
 * Conditional GETs (docs/DECISIONS.md "Reads that cache"): every successful GET or HEAD answer
 * carries an `ETag`, a strong validator of its exact bytes (the route's own when it set one, as
 * images do), and a request whose `If-None-Match` names it gets 304 without the body. Answers
 * change whenever the log moves, so caches must revalidate: `Cache-Control: no-cache`, `public`
 * for anonymous reads and `private` for a caller's own (a route's own Cache-Control is kept).
 *
 * An anonymous answer of a route marked `cacheableByPosition` is also remembered with the read
 * models' position (`position()`): while no event has been applied since, the same URL gets the
 * same bytes (or its 304) without running the route again.
 */
export class RememberedAnswers {
  /** The last 1000 URLs answered (least recently used dropped first). */
  readonly #answers = new BoundedCache<string, Remembered>({ max: 1000 });
  constructor(readonly position: () => number) {}

  /**
   * Answers an anonymous GET or HEAD from memory when the read models have not moved since its
   * URL was answered: true when it did (the answer is set, 304 when `If-None-Match` names it).
   */
  serve(ctx: Context): boolean {
    const hit = this.find(ctx);
    if (hit === undefined) return false;
    this.answer(ctx, hit);
    return true;
  }

  /** The remembered answer for the request's URL, while the read models have not moved since. */
  find(ctx: Context): Remembered | undefined {
    const hit = this.#answers.get(ctx.url);
    return hit !== undefined && hit.position === this.position() ? hit : undefined;
  }

  answer(ctx: Context, hit: Remembered): void {
    ctx.state.route = hit.route;
    ctx.status = 200;
    ctx.type = hit.type;
    ctx.body = hit.bytes;
    ctx.set('ETag', hit.etag);
    ctx.set('Cache-Control', 'public, no-cache');
    ctx.vary('Authorization');
    ctx.vary('X-API-Key');
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null;
    }
  }

  remember(url: string, answer: Remembered): void {
    this.#answers.set(url, answer);
  }
}

/** A request that carries no credentials: what `authenticate` leaves without a principal. */
export function carriesNoCredentials(ctx: Context): boolean {
  const headers = ctx.req.headers;
  return headers['x-api-key'] === undefined && headers.authorization === undefined;
}

export function conditionalGet(answers: RememberedAnswers): Middleware {
  return async function etagAndNotModified(ctx: Context, next: Next) {
    const isGet = ctx.method === 'GET' || ctx.method === 'HEAD';
    const anonymous = isGet && !ctx.state.principal;
    const at = answers.position();
    if (anonymous && answers.serve(ctx)) return;
    await next();
    if (!isGet || ctx.status !== 200) return;
    let etag = ctx.response.get('ETag');
    if (!etag) {
      const body: unknown = ctx.body;
      let bytes: string | Buffer;
      if (typeof body === 'string' || Buffer.isBuffer(body)) bytes = body;
      else if (body !== null && typeof body === 'object' && !('pipe' in body && typeof body.pipe === 'function')) {
        // Serialised once here, as Koa would; the type (application/json) is already set.
        bytes = JSON.stringify(body);
        ctx.body = bytes;
      } else return;
      etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
      ctx.set('ETag', etag);
      if (anonymous && ctx.state.cacheableByPosition === true && answers.position() === at) {
        answers.remember(ctx.url, {
          position: at,
          route: ctx.state.route,
          etag,
          bytes,
          type: ctx.response.get('Content-Type'),
        });
      }
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
export const EXPOSED_HEADERS = ['ETag', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Location', 'Link'];

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
