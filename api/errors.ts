import type { Context } from 'koa';
import type { Logger } from 'pino';
import { DomainError, ValidationFailed } from '../events/kernel/errors.ts';

const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_error',
  429: 'rate_limited',
  503: 'service_unavailable',
};

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  code?: unknown;
  message?: string;
  type?: string;
  headers?: Record<string, string>;
}

/** Renders a thrown error as the response: {detail, code} (or the 422 list); a 5xx never shows internals. */
export function renderError(ctx: Context, raw: unknown, logger: Logger): void {
  const err = raw as HttpishError & Error;
  if (err instanceof ValidationFailed) {
    ctx.status = 422;
    ctx.body = { detail: err.errors };
    return;
  }
  if (err instanceof DomainError) {
    ctx.status = err.status;
    ctx.body = { detail: err.message, code: err.code, ...err.extra };
    const retryAfter = err.extra.retry_after;
    if (err.status === 429 && typeof retryAfter === 'number') {
      // A limit kept in the log (one-time codes): its own values, not those of a limiter passed earlier.
      ctx.set('Retry-After', String(retryAfter));
      if (typeof err.extra.limit === 'number') ctx.set('RateLimit-Limit', String(err.extra.limit));
      ctx.set('RateLimit-Remaining', '0');
      ctx.set('RateLimit-Reset', String(retryAfter));
    }
    if (err.status === 401) ctx.set('WWW-Authenticate', 'ApiKey header="X-API-Key", Bearer');
    return;
  }
  const status = err.status ?? err.statusCode ?? 500;
  if (status < 500 && status >= 400) {
    // Errors raised by body parsing and the router (http-errors): safe to show their status.
    let detail = err.expose && err.message ? err.message : (HTTP_CODES[status] ?? 'Bad request').replace(/_/g, ' ');
    let code = typeof err.code === 'string' && /^[a-z_]+$/.test(err.code) ? err.code : (HTTP_CODES[status] ?? 'bad_request');
    if (status === 400 && (err.type === 'entity.parse.failed' || /JSON/i.test(err.message ?? ''))) {
      detail = 'Malformed JSON body';
      code = 'invalid_json';
    }
    if (status === 413) detail = 'Request body too large';
    ctx.status = status;
    ctx.body = { detail, code };
    for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
    return;
  }
  const unavailable = status === 503 || (typeof err.code === 'string' && err.code === 'store_unavailable');
  logger.error({ err, request_id: ctx.state.requestId }, 'request failed');
  ctx.status = unavailable ? 503 : 500;
  ctx.body = unavailable
    ? { detail: 'A data store is unavailable; retry shortly', code: 'service_unavailable' }
    : { detail: 'Internal server error', code: 'internal_error', request_id: ctx.state.requestId };
}
