import type { Context } from 'koa';
import type { Logger } from 'pino';
import { isErrorCode } from '../events/kernel/error-codes.ts';
import type { ErrorCode } from '../events/kernel/error-codes.ts';
import { DomainError, ValidationFailed } from '../events/kernel/errors.ts';

/** The code of an error raised by body parsing or the router, by status (all in the registry). */
const HTTP_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
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

/**
 * The one error envelope: `{detail, code, request_id, ...extra}`; `request_id` is the request's
 * `X-Request-Id` (quote it when reporting a problem). On 422 `detail` is the list of field errors.
 */
export function errorBody(requestId: string, code: ErrorCode, detail: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { detail, code, request_id: requestId, ...extra };
}

/** Renders a thrown error as the response in the one envelope; a 5xx never shows internals. */
export function renderError(ctx: Context, raw: unknown, logger: Logger): void {
  // A throw is typed unknown; what reaches here is ours, http-errors' (koa-body, the router) or any Error: read the fields they may carry.
  const err = raw as HttpishError & Error;
  const requestId = ctx.state.requestId;
  if (err instanceof ValidationFailed) {
    ctx.status = 422;
    ctx.body = errorBody(requestId, err.code, err.errors);
    return;
  }
  if (err instanceof DomainError) {
    ctx.status = err.status;
    ctx.body = errorBody(requestId, err.code, err.message, err.extra);
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
    const byStatus = HTTP_CODES[status] ?? 'bad_request';
    let detail = err.expose && err.message ? err.message : byStatus.replace(/_/g, ' ');
    let code: ErrorCode = isErrorCode(err.code) ? err.code : byStatus;
    if (status === 400 && (err.type === 'entity.parse.failed' || /JSON/i.test(err.message ?? ''))) {
      detail = 'Malformed JSON body';
      code = 'invalid_json';
    }
    if (status === 413) detail = 'Request body too large';
    ctx.status = status;
    ctx.body = errorBody(requestId, code, detail);
    for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
    return;
  }
  const unavailable = status === 503 || (typeof err.code === 'string' && err.code === 'store_unavailable');
  logger.error({ err, request_id: requestId }, 'request failed');
  ctx.status = unavailable ? 503 : 500;
  ctx.body = unavailable
    ? errorBody(requestId, 'service_unavailable', 'A data store is unavailable; retry shortly')
    : errorBody(requestId, 'internal_error', 'Internal server error');
}
