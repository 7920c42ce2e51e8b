import type Router from '@koa/router';
import type { Context, Next } from 'koa';

/** What this module reads of a @koa/router layer. */
export interface RouteLayer {
  path: string | RegExp;
  name?: string | null;
  methods: string[];
  stack: Array<(ctx: Context, next: Next) => unknown>;
  regexp: RegExp;
  captures(path: string): string[];
  params(path: string, captures: string[], existing?: Record<string, string>): Record<string, string>;
}
/** @koa/router's `match` answer. */
export interface RouteMatch {
  path: RouteLayer[];
  pathAndMethod: RouteLayer[];
  route: boolean;
}

type Match = (path: string, method: string) => RouteMatch;

/** A node of the literal-prefix trie: the layers whose prefix ends here, and the next segments. */
interface PrefixNode {
  layers: number[];
  next: Map<string, PrefixNode>;
}

/**
 * The whole path segments a layer's path starts with literally, lower-cased: a path the layer's
 * regular expression matches has these as its first segments (case aside), whatever its
 * parameters and options (case sensitivity, trailing slash, `end: false`). The literal part stops
 * at the first character that is not a plain path character (`:`, `*`, `(`, `{`, `?`, `\`, ...);
 * the segment it stops in is not whole, and empty segments at the end (a trailing slash) are
 * left out. A RegExp path has none.
 */
export function literalSegments(path: string | RegExp): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) return [];
  const plain = /^[A-Za-z0-9/_.~-]*/.exec(path)?.[0] ?? '';
  const parts = plain.toLowerCase().split('/').slice(1);
  if (plain.length !== path.length) parts.pop();
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.includes('') ? parts.slice(0, parts.indexOf('')) : parts;
}

/**
 * @koa/router's `match` (every layer's regular expression tested in registration order), with
 * the layers that cannot match left out first: only those whose literal prefix (literalSegments)
 * the path starts with are tested, still in registration order, so the answer is the same
 * layers in the same order. The index is built from the router's stack when first asked and
 * built again if routes were added since.
 */
export function indexedMatch(router: Router): Match {
  const stackOf = () => (router as unknown as { stack: RouteLayer[] }).stack;
  let built = -1;
  let root: PrefixNode = { layers: [], next: new Map() };
  const build = () => {
    const stack = stackOf();
    root = { layers: [], next: new Map() };
    stack.forEach((layer, i) => {
      let node = root;
      for (const segment of literalSegments(layer.path)) {
        let child = node.next.get(segment);
        if (child === undefined) node.next.set(segment, (child = { layers: [], next: new Map() }));
        node = child;
      }
      node.layers.push(i);
    });
    built = stack.length;
  };
  return (path, method) => {
    const stack = stackOf();
    if (built !== stack.length) build();
    // The candidates: the layers on the trie path the request's segments walk.
    const candidates: number[] = [...root.layers];
    let node: PrefixNode | undefined = root;
    let from = 1;
    while (node !== undefined && from <= path.length) {
      let to = path.indexOf('/', from);
      if (to < 0) to = path.length;
      node = node.next.get(path.slice(from, to).toLowerCase());
      if (node !== undefined) for (const i of node.layers) candidates.push(i);
      from = to + 1;
    }
    candidates.sort((a, b) => a - b);
    const result: RouteMatch = { path: [], pathAndMethod: [], route: false };
    const upper = method.toUpperCase();
    for (const i of candidates) {
      const layer = stack[i];
      if (!layer.regexp.test(path)) continue;
      result.path.push(layer);
      const isMiddleware = layer.methods.length === 0;
      if (isMiddleware || layer.methods.includes(upper)) {
        result.pathAndMethod.push(layer);
        if (!isMiddleware) result.route = true;
      }
    }
    return result;
  };
}

/**
 * Replaces the router's `match` by the indexed one, with the answers for a method and path
 * remembered (at most 2000 paths of up to 256 characters): callers of the router's `match` get
 * their own arrays, because the router appends to them on nested dispatch. Returns the
 * remembering match (its answers are shared: not to be changed).
 */
export function memoizeMatches(router: Router): Match {
  const match = indexedMatch(router);
  const memo = new Map<string, RouteMatch>();
  const remembered = (path: string, method: string): RouteMatch => {
    if (path.length > 256) return match(path, method);
    const key = `${method} ${path}`;
    let found = memo.get(key);
    if (found === undefined) {
      found = match(path, method);
      if (memo.size >= 2000) memo.clear();
      memo.set(key, found);
    }
    return found;
  };
  (router as unknown as { match: Match }).match = (path, method) => {
    const found = remembered(path, method);
    return { path: found.path.slice(), pathAndMethod: found.pathAndMethod.slice(), route: found.route };
  };
  return remembered;
}
