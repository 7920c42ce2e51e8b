import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { BoundedCache } from '../events/kernel/cache.ts';

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

/** A node of the prefix trie: the layers whose prefix ends here, the next literal segments, and the next parameter. */
interface PrefixNode {
  layers: number[];
  next: Map<string, PrefixNode>;
  param: PrefixNode | undefined;
}

/** A whole-segment parameter in a layer's prefix (routeSegments): any one segment of a request path. */
export const PARAM_SEGMENT = ':';
const PLAIN_SEGMENT = /^[A-Za-z0-9_.~-]+$/;
const PARAM = /^:[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * The segments a layer's path starts with: whole literal segments (lower-cased) and whole-segment
 * parameters (`:id`, as PARAM_SEGMENT), up to the first segment that is neither (a wildcard, an
 * optional group, a custom pattern, part of a segment, an empty segment). A path the layer's
 * regular expression matches has these as its first segments (case aside; a parameter stands for
 * one segment), whatever the router's options. A RegExp path has none.
 */
export function routeSegments(path: string | RegExp): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) return [];
  const parts = path.split('/').slice(1);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const out: string[] = [];
  for (const part of parts) {
    if (PLAIN_SEGMENT.test(part)) out.push(part.toLowerCase());
    else if (PARAM.test(part)) out.push(PARAM_SEGMENT);
    else break;
  }
  return out;
}

/**
 * @koa/router's `match` (every layer's regular expression tested in registration order), with
 * the layers that cannot match left out first: only those whose prefix (routeSegments) the
 * path's segments fit are tested, still in registration order, so the answer is the same
 * layers in the same order. The index is built from the router's stack when first asked and
 * built again if routes were added since.
 */
export function indexedMatch(router: Router): Match {
  const stackOf = () => (router as unknown as { stack: RouteLayer[] }).stack;
  let built = -1;
  const newNode = (): PrefixNode => ({ layers: [], next: new Map(), param: undefined });
  let root = newNode();
  const build = () => {
    const stack = stackOf();
    root = newNode();
    stack.forEach((layer, i) => {
      let node = root;
      for (const segment of routeSegments(layer.path)) {
        if (segment === PARAM_SEGMENT) node = node.param ??= newNode();
        else {
          let child = node.next.get(segment);
          if (child === undefined) node.next.set(segment, (child = newNode()));
          node = child;
        }
      }
      node.layers.push(i);
    });
    built = stack.length;
  };
  return (path, method) => {
    const stack = stackOf();
    if (built !== stack.length) build();
    // The candidates: the layers on every trie path the request's segments walk (a segment
    // follows its literal child and the parameter child).
    const candidates: number[] = [...root.layers];
    let nodes: PrefixNode[] = [root];
    let from = 1;
    while (nodes.length > 0 && from <= path.length) {
      let to = path.indexOf('/', from);
      if (to < 0) to = path.length;
      const segment = path.slice(from, to).toLowerCase();
      const reached: PrefixNode[] = [];
      for (const node of nodes) {
        const literal = node.next.get(segment);
        if (literal !== undefined) reached.push(literal);
        if (node.param !== undefined) reached.push(node.param);
      }
      for (const node of reached) for (const i of node.layers) candidates.push(i);
      nodes = reached;
      from = to + 1;
    }
    if (candidates.length > 1) candidates.sort((a, b) => a - b);
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
  const memo = new BoundedCache<string, RouteMatch>({ max: 2000 });
  const remembered = (path: string, method: string): RouteMatch => {
    if (path.length > 256) return match(path, method);
    const key = `${method} ${path}`;
    let found = memo.get(key);
    if (found === undefined) {
      found = match(path, method);
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
