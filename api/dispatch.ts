import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';
import type { Context, Next } from 'koa';
import type { Method, MountedOperation, MountedOperations, Operation } from './operations.ts';
import { isOneOf } from './guards.ts';
import { isApiOperation } from './operations.ts';

/** What the table answers for a request: the operation and its path parameters. */
export interface FoundOperation {
  op: Operation;
  run: MountedOperation;
  params: Record<string, string>;
}

interface Entry {
  op: Operation;
  run: MountedOperation;
}

/** What the table holds for a pattern: an operation, or a pattern whose paths the router answers. */
type Stored = Entry | { router: true };

/** The methods the table holds: the operations' (GET also answering HEAD). */
const TABLE_METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

const segmentsOf = (path: string) => path.split('/').slice(1);
const isParam = (segment: string) => segment.startsWith(':');
/** A pattern with its parameters unnamed: two patterns that match the same paths are equal. */
const shapeOf = (segments: string[]) => segments.map((x) => (isParam(x) ? ':' : x)).join('/');

/**
 * The paths of `later` the router answers with `earlier` (registered first) where find-my-way
 * would answer `later`: the two patterns' overlap (a literal where either has one, a parameter
 * where both have one) when, at the first segment where they differ, `later` has the literal (the
 * radix tree tries literals before parameters, the router tries routes in registration order).
 */
function shadowed(earlier: string[], later: string[]): string[] | null {
  if (earlier.length !== later.length) return null;
  const overlap: string[] = [];
  let laterFirst: boolean | null = null;
  for (let i = 0; i < earlier.length; i++) {
    const e = earlier[i];
    const l = later[i];
    if (!isParam(e) && !isParam(l) && e !== l) return null;
    if (laterFirst === null && isParam(e) !== isParam(l)) laterFirst = isParam(e);
    overlap.push(isParam(e) ? l : e);
  }
  return laterFirst === false ? null : overlap;
}

/**
 * The API operations (paths under /api/) in a find-my-way radix tree, looked up with its published
 * `on` / `find`: one lookup per request instead of testing every route pattern in turn. A GET
 * answers HEAD too, as the router does. The lookup is exact: case-sensitive, no trailing or
 * repeated slash, no percent-encoding in the path (find-my-way decodes the path before it matches,
 * the router matches it as sent); any other path is left to the router, where every operation is
 * registered as well. Where two patterns overlap and the tree would prefer the later one (a
 * literal where the earlier has a parameter), the overlap is left to the router too, which
 * answers with the operation registered first. test/api/operation-dispatch.test.ts checks that
 * both give the same operation for every path where patterns overlap.
 */
export class OperationTable {
  private readonly table = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false });

  constructor(operations: MountedOperations) {
    const noop = () => undefined;
    const api = [...operations].filter(([op]) => isApiOperation(op));
    const toRouter = new Map<string, { method: Method; path: string }>();
    const unreachable = new Set<Operation>();
    api.forEach(([later], j) => {
      const laterSegments = segmentsOf(later.path);
      for (const [earlier] of api.slice(0, j)) {
        if (earlier.method !== later.method) continue;
        const overlap = shadowed(segmentsOf(earlier.path), laterSegments);
        if (overlap === null) continue;
        if (shapeOf(overlap) === shapeOf(laterSegments)) unreachable.add(later);
        else toRouter.set(`${later.method} ${shapeOf(overlap)}`, { method: later.method, path: `/${overlap.join('/')}` });
      }
    });
    const methods = (method: Method): HTTPMethod[] => (method === 'GET' ? ['GET', 'HEAD'] : [method]);
    for (const [op, run] of api) {
      const stored: Stored = unreachable.has(op) ? { router: true } : { op, run };
      this.table.on(methods(op.method), op.path, noop, stored);
    }
    for (const { method, path } of toRouter.values()) this.table.on(methods(method), path, noop, { router: true } satisfies Stored);
    this.table.compile();
  }

  /** The operation for a method and path, or null (no operation, or a path the router answers). */
  find(method: string, path: string): FoundOperation | null {
    if (path.includes('%') || path.includes('//') || !isOneOf(TABLE_METHODS, method)) return null;
    const found = this.table.find(method, path);
    if (found === null) return null;
    // find-my-way types a route's store as any: it is the Stored this table put there.
    const stored: Stored = found.store;
    if ('router' in stored) return null;
    // find-my-way types params as possibly undefined; a matched route sets every one of its own.
    return { op: stored.op, run: stored.run, params: found.params as Record<string, string> };
  }

  /**
   * Koa middleware: runs the request's operation (authentication, limits, validated input, the
   * handler, as `mount` composed them) with `ctx.params` set; anything else goes on to the router
   * (pages, 404 and 405 answers with `Allow`, OPTIONS, the paths `find` leaves to it).
   */
  middleware() {
    return (ctx: Context, next: Next): Promise<unknown> => {
      const found = this.find(ctx.method, ctx.path);
      if (found === null) return next();
      ctx.params = found.params;
      // Koa types app middleware with its plain Context; the operation reads ctx.params, set just above.
      return found.run(ctx as Parameters<MountedOperation>[0]);
    };
  }
}
