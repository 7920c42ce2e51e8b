// What a query of the in-memory read store does besides choosing an index: sorting and
// projection with MongoDB semantics, and the filter test (mingo), compiled once per filter text.
import { Query } from 'mingo';
import { BoundedCache } from '../../../events/kernel/cache.ts';
import type { Doc, Filter } from '../port.ts';
import { cloneValue, compareValues, splitPath } from '../updates.ts';
import { isRecord } from '../records.ts';
import { isScalar, Multi, pathKeyValue, type Obj, type Scalar } from './keys.ts';
import type { SortKey } from './planner.ts';

// ---------------------------------------------------------------------------------------------
// Sorting and projection with MongoDB semantics.

function sortKeyOf(doc: Obj, segs: string[], dir: number): unknown {
  const v = pathKeyValue(doc, segs);
  if (!(v instanceof Multi)) return v;
  let best = v.values[0];
  for (const x of v.values) if (compareValues(x, best) * dir < 0) best = x;
  return best;
}

export function sortDocs(docs: Doc[], sort: SortKey[]): Doc[] {
  const paths = sort.map((s) => splitPath(s.field));
  const keyed = docs.map((doc) => ({ doc, keys: sort.map((s, i) => sortKeyOf(doc, paths[i], s.dir)) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < sort.length; i++) {
      const c = compareValues(a.keys[i], b.keys[i]);
      if (c !== 0) return c * sort[i].dir;
    }
    return compareValues(a.doc._id, b.doc._id);
  });
  return keyed.map((k) => k.doc);
}

type ProjectionTree = { [field: string]: true | ProjectionTree };

function projectionTree(paths: string[]): ProjectionTree {
  const tree: ProjectionTree = {};
  for (const path of paths) {
    const segs = path.split('.');
    let node = tree;
    for (let i = 0; i < segs.length; i++) {
      const s = segs[i];
      if (i === segs.length - 1) node[s] = true;
      else {
        const child = node[s];
        if (child === true) break;
        node = child === undefined ? (node[s] = {}) : child;
      }
    }
  }
  return tree;
}

// In the document's field order, as MongoDB answers; stops once every field named was found.
function include(value: Obj, tree: ProjectionTree, fields = Object.keys(tree).length): Obj {
  const out: Obj = {};
  let found = 0;
  for (const k in value) {
    if (!Object.hasOwn(tree, k)) continue;
    const t = tree[k];
    const v = value[k];
    if (t === true) out[k] = cloneValue(v);
    else if (Array.isArray(v)) out[k] = v.filter(isDocument).map((e) => include(e, t));
    else if (isDocument(v)) out[k] = include(v, t);
    if (++found === fields) break;
  }
  return out;
}

function exclude(value: Obj, tree: ProjectionTree): Obj {
  const out: Obj = {};
  for (const k of Object.keys(value)) {
    const t = tree[k];
    const v = value[k];
    if (t === true) continue;
    if (t === undefined) out[k] = cloneValue(v);
    else if (Array.isArray(v)) out[k] = v.map((e) => (isDocument(e) ? exclude(e, t) : cloneValue(e)));
    else if (isDocument(v)) out[k] = exclude(v, t);
    else out[k] = cloneValue(v);
  }
  return out;
}

function isDocument(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
}

interface CompiledProjection {
  apply(doc: Doc): Doc;
}

// Compiled projections by their text: the projections a process uses are the few its code names.
// Those the request paths pass are module constants, found first by identity.
const projectionCache = new BoundedCache<string, CompiledProjection | null>({ max: 1000 });
const projectionsByObject = new WeakMap<object, CompiledProjection | null>();

/** A projection's compiled form (memoised by its text; the object must not change once passed). */
export function compileProjection(projection: Record<string, 0 | 1> | undefined): CompiledProjection | null {
  if (projection === undefined) return null;
  const same = projectionsByObject.get(projection);
  if (same !== undefined) return same;
  const compiled = compileByText(projection);
  projectionsByObject.set(projection, compiled);
  return compiled;
}

function compileByText(projection: Record<string, 0 | 1>): CompiledProjection | null {
  return projectionCache.remember(JSON.stringify(projection), () => compileProjectionNow(projection));
}

function compileProjectionNow(projection: Record<string, 0 | 1>): CompiledProjection | null {
  const keys = Object.keys(projection);
  if (keys.length === 0) return null;
  const idFlag = projection._id;
  const others = keys.filter((k) => k !== '_id');
  const included = others.filter((k) => Boolean(projection[k]));
  const excluded = others.filter((k) => !projection[k]);
  if (included.length > 0 && excluded.length > 0) {
    throw new Error(`Cannot do exclusion on field ${excluded[0]} in inclusion projection`);
  }
  const dropId = idFlag !== undefined && !idFlag;
  if (included.length > 0 || (others.length === 0 && !dropId)) {
    const tree = projectionTree(included);
    if (!dropId) tree._id = true;
    const fields = Object.keys(tree).length;
    return { apply: (doc) => projected(include(doc, tree, fields)) };
  }
  const tree = projectionTree(excluded);
  if (dropId) tree._id = true;
  return { apply: (doc) => projected(exclude(doc, tree)) };
}

/**
 * A projected document, typed as the collection's documents: a `projection` option leaves fields
 * out (the port says so, and MongoDB's driver types it the same way).
 */
function projected(fields: Obj): Doc {
  return fields as Doc;
}

// ---------------------------------------------------------------------------------------------
// Compiled mingo queries, memoised by the filter's text (request paths repeat their filters).

const queryCache = new BoundedCache<string, CompiledFilter>({ max: 2000 });

function filterKey(v: unknown): string | null {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Object.is(v, -0) ? '-0' : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'bigint':
      return `${v}n`;
    case 'object': {
      if (!isRecord(v)) return null; // (not null: answered above)
      if (v instanceof RegExp) return `/${v.source}/${v.flags}`;
      if (v instanceof Date) return `D${v.getTime()}`;
      const isArray = Array.isArray(v);
      const proto = Object.getPrototypeOf(v);
      if (!isArray && proto !== Object.prototype && proto !== null) return null;
      let s = isArray ? '[' : '{';
      for (const k of Object.keys(v)) {
        const part = filterKey(v[k]);
        if (part === null) return null;
        s += isArray ? `${part},` : `${JSON.stringify(k)}:${part},`;
      }
      return s + (isArray ? ']' : '}');
    }
    case 'function':
    case 'symbol':
    default: // unreachable; TypeScript's return check does not see the cases above as exhaustive
      return null;
  }
}

/** A filter compiled for the documents' test. */
export interface CompiledFilter {
  test(doc: Doc): boolean;
}

/** MongoDB's equality of a top-level field with a scalar: the value itself, or an element of an array value. */
function holds(value: unknown, x: Scalar): boolean {
  if (value === x) return true;
  if (Array.isArray(value)) for (const e of value) if (e === x) return true;
  return false;
}

/**
 * The commonest filters of the request paths, tested without mingo: top-level fields (no dots,
 * no operators at the top), each equal to a string, number or boolean (or holding it, for an
 * array), or `$all` of a non-empty list of them (held by an array value, as mingo tests `$all`).
 * Anything else is null, and mingo tests it.
 * test/projections/store/fast-paths.test.ts checks it against mingo on random documents.
 */
export function simpleFilter(filter: Filter): CompiledFilter | null {
  const fields: string[] = [];
  const wanted: Scalar[][] = [];
  /** Per field: `$all` (an array value only, as mingo tests it) or plain equality. */
  const arrays: boolean[] = [];
  for (const key of Object.keys(filter)) {
    if (key.startsWith('$') || key.includes('.')) return null;
    const v = filter[key];
    if (isScalar(v)) {
      wanted.push([v]);
      arrays.push(false);
    } else if (isRecord(v) && Object.getPrototypeOf(v) === Object.prototype) {
      const ops = Object.keys(v);
      const all = v.$all;
      if (ops.length !== 1 || !Array.isArray(all) || all.length === 0 || !all.every(isScalar)) return null;
      wanted.push(all);
      arrays.push(true);
    } else return null;
    fields.push(key);
  }
  return {
    test(doc: Doc): boolean {
      for (let i = 0; i < fields.length; i++) {
        const value = doc[fields[i]];
        if (arrays[i] && !Array.isArray(value)) return false;
        for (const x of wanted[i]) if (!holds(value, x)) return false;
      }
      return true;
    },
  };
}

export function compileFilter(filter: Filter): CompiledFilter {
  const key = filterKey(filter);
  if (key === null) return simpleFilter(filter) ?? new Query(filter, {});
  return queryCache.remember(key, () => simpleFilter(filter) ?? new Query(filter, {}));
}
