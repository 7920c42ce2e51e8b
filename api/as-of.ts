// `?as_of=<position or ISO time>` on the reads that support it: the read models those reads use, as
// they were at that position, for one subject (the agent or contract read). Authenticated callers
// only, counted against LIMITS.as_of_reads; each read folds at most the index's `every` events from
// the subject's nearest stored version (projections/as-of-index.ts). Without the parameter: the live store.
import type { Context, Next } from 'koa';
import { DomainError, ValidationFailed } from '../events/kernel/errors.ts';
import { AsOfUnavailable } from '../projections/as-of-index.ts';
import { positionAt } from '../projections/as-of.ts';
import { allProjections } from '../projections/index.ts';
import type { ReadStore } from '../projections/store/port.ts';
import { principalOf } from './auth.ts';
import type { Operation } from './operations.ts';
import { LIMITS } from './rate-limit.ts';
import type { Services } from './services.ts';

const AS_OF_REQUIRES_AUTH = 'as_of needs an API key (X-API-Key) or a bearer token: as-of reads are for authenticated callers, counted against a read budget';

/**
 * The one refusal of the early layer below, made once: it is thrown on every anonymous as-of read
 * and only read by the error renderer, so no request pays for building an error and its stack.
 */
const ANONYMOUS_AS_OF = new DomainError(401, 'as_of_requires_auth', AS_OF_REQUIRES_AUTH);

/** The paths the early refusal applies to: the public GET operations that take `as_of`, matched as the router matches them. */
export function anonymousAsOfPaths(operations: readonly Operation[]): RegExp[] {
  return (
    operations
      .filter(
        (op) =>
          op.method === 'GET' && op.auth === 'none' && (op.query as { properties?: Record<string, unknown> } | undefined)?.properties?.as_of !== undefined,
      )
      // The router's matching: a `:param` is one segment, a trailing slash optional, case ignored.
      .map((op) => new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}/?$`, 'i'))
  );
}

/**
 * Refuses an anonymous `as_of` read as soon as the caller is known (right after authentication
 * and the read limit): a GET or HEAD with `as_of` in its query, on the path of a public operation
 * that takes it (the others refuse an anonymous caller first thing anyway), with no principal.
 * It is the answer the read itself gives (asOfPosition), given before the layers and the handler
 * behind it run, so a flood of such requests costs what a router miss costs, not what a read
 * does. Anything it does not recognise goes on to the read, which refuses it the same way.
 */
export function refuseAnonymousAsOf(operations: readonly Operation[]) {
  const paths = anonymousAsOfPaths(operations);
  return function refuseAnonymousAsOfRead(ctx: Context, next: Next) {
    if (
      ctx.state.principal === undefined &&
      (ctx.method === 'GET' || ctx.method === 'HEAD') &&
      ctx.querystring !== '' &&
      ctx.query.as_of !== undefined &&
      paths.some((p) => p.test(ctx.path))
    )
      throw ANONYMOUS_AS_OF;
    return next();
  };
}

const invalid = (msg: string) => new ValidationFailed([{ loc: ['query', 'as_of'], msg, type: 'value_error.as_of' }]);

/** How long a read waits for the as-of index to reach its position before answering 503. */
export const AS_OF_WAIT_MS = 5_000;

/**
 * The position `as_of` names (a position, or the last event at or before an ISO time), or null
 * when absent. An anonymous caller is refused (401) and every as-of read is counted against the
 * caller's budget (429 with Retry-After when spent), before the value is looked at.
 */
export async function asOfPosition(s: Services, ctx: Context): Promise<number | null> {
  const raw = ctx.query.as_of;
  if (raw === undefined) return null;
  const principal = principalOf(ctx);
  if (!principal) throw new DomainError(401, 'as_of_requires_auth', AS_OF_REQUIRES_AUTH);
  s.limiter.hit(LIMITS.as_of_reads, principal.kind === 'agent' ? principal.agentId : `user:${principal.userId}`, ctx);
  if (typeof raw !== 'string' || raw === '') throw invalid('as_of must be a log position or an ISO 8601 time');
  const head = await s.log.headPosition();
  if (/^\d{1,16}$/.test(raw)) {
    const position = Number(raw);
    if (position > head) throw invalid(`as_of is past the head of the log (${head})`);
    return position;
  }
  const time = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time)) throw invalid('as_of must be a log position or an ISO 8601 time');
  return positionAt(s.log, time);
}

/**
 * The store to answer from: the live one, or (with `as_of`) the documents of `subject` in the named
 * projections as they were at that position. The answer then carries `X-As-Of-Position`. Only the
 * subject's documents are exact in it: the read must read no other, or name the others with
 * `related` (given the subject's state, the further subjects whose documents the read reads).
 */
export async function storeAsOf(
  s: Services,
  ctx: Context,
  projections: string[],
  subject: string,
  related?: (store: ReadStore) => Promise<string[]>,
): Promise<ReadStore> {
  const position = await asOfPosition(s, ctx);
  if (position === null) return s.store;
  if (!(await s.asOf.reach(position, AS_OF_WAIT_MS))) {
    ctx.set('Retry-After', String(AS_OF_WAIT_MS / 1000));
    throw new DomainError(503, 'as_of_unavailable', 'The as-of index is still reading the log up to that position; retry shortly');
  }
  ctx.set('X-As-Of-Position', String(position));
  ctx.set('Cache-Control', 'no-store');
  try {
    const chosen = allProjections.filter((p) => projections.includes(p.name));
    const state = await s.asOf.stateAt(chosen, [subject], position);
    const more = related ? await related(state.store) : [];
    return more.length === 0 ? state.store : (await s.asOf.stateAt(chosen, [subject, ...more], position)).store;
  } catch (err) {
    if (err instanceof AsOfUnavailable) throw new DomainError(503, 'as_of_unavailable', err.message);
    throw err;
  }
}
