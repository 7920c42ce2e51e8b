// The embedded read store: collections in memory answering MongoDB queries. Documents live in a
// Map by _id; declared indexes are B-trees over compound keys in BSON order, each key encoded as
// one string (updates.ts, keyComponent) so the tree compares with plain string comparison, and
// request-path queries read a few index entries instead of scanning. mingo checks whatever the
// index bounds do not prove, and updates go through the fast applier in updates.ts (projection
// writes mostly through its simple-update path, which also lets index upkeep skip the indexes
// whose fields an update left as they were).
import { Query } from 'mingo';
import {
  DuplicateKeyError,
  REBUILD_PREFIX,
  type Collection,
  type CountOptions,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type QueryPlan,
  type ReadStore,
  type SortSpec,
  type Update,
  type UpdateResult,
} from './port.ts';
import {
  EMPTY_ARRAY_KEY,
  KEY_LAST,
  MAX_KEY,
  MIN_KEY,
  NOT_SIMPLE,
  STRING_END,
  applySimpleUpdate,
  applyUpdate,
  simpleInsert,
  cloneValue,
  compareValues,
  keyComponent,
  splitPath,
  valuesEqual,
  type ApplyOptions,
} from './updates.ts';
import { KeyTree, type IndexTree } from './trees.ts';

export { KeyTree } from './trees.ts';

type Obj = Record<string, unknown>;

/** Distinct values of an indexed path that runs through arrays (one index entry per value). */
class Multi {
  constructor(readonly values: unknown[]) {}
}

function pushDistinct(out: unknown[], v: unknown): void {
  for (const x of out) if (valuesEqual(x, v)) return;
  out.push(v);
}

function collectPathValues(cur: unknown, segs: string[], i: number, out: unknown[]): void {
  if (i === segs.length) {
    if (cur === undefined) pushDistinct(out, null);
    else if (Array.isArray(cur)) {
      if (cur.length === 0) pushDistinct(out, EMPTY_ARRAY_KEY);
      for (const e of cur) pushDistinct(out, e === undefined ? null : e);
    } else pushDistinct(out, cur);
    return;
  }
  if (Array.isArray(cur)) {
    const idx = /^\d+$/.test(segs[i]) ? Number(segs[i]) : -1;
    if (idx >= 0 && idx < cur.length) collectPathValues(cur[idx], segs, i + 1, out);
    let any = false;
    for (const e of cur) {
      if (e !== null && typeof e === 'object' && !Array.isArray(e)) {
        collectPathValues((e as Obj)[segs[i]], segs, i + 1, out);
        any = true;
      }
    }
    if (!any && idx < 0) pushDistinct(out, null);
    return;
  }
  if (cur === null || typeof cur !== 'object') {
    pushDistinct(out, null);
    return;
  }
  collectPathValues((cur as Obj)[segs[i]], segs, i + 1, out);
}

/** The key value of a path: missing -> null, [] -> EMPTY_ARRAY_KEY, arrays -> Multi. */
function pathKeyValue(doc: Obj, segs: string[]): unknown {
  let cur: unknown = doc;
  for (let i = 0; i < segs.length; i++) {
    if (cur === null || typeof cur !== 'object') return null;
    if (Array.isArray(cur)) {
      const out: unknown[] = [];
      collectPathValues(cur, segs, i, out);
      return out.length === 1 ? out[0] : new Multi(out);
    }
    cur = (cur as Obj)[segs[i]];
  }
  if (cur === undefined) return null;
  if (Array.isArray(cur)) {
    if (cur.length === 0) return EMPTY_ARRAY_KEY;
    const out = distinctElements(cur);
    return out.length === 1 ? out[0] : new Multi(out);
  }
  return cur;
}

/** The distinct elements of an array in BSON equality, in first-seen order (missing -> null). */
function distinctElements(arr: unknown[]): unknown[] {
  const n = arr.length;
  let primitive = n > 4;
  for (let i = 0; i < n && primitive; i++) {
    const t = typeof arr[i];
    primitive = t === 'string' || t === 'number' || t === 'boolean' || t === 'undefined' || arr[i] === null;
  }
  if (primitive) {
    // For these values SameValueZero is BSON equality (0 = -0, NaN = NaN).
    const seen = new Set<unknown>();
    for (let i = 0; i < n; i++) {
      const e = arr[i];
      seen.add(e === undefined ? null : e);
    }
    return [...seen];
  }
  const out: unknown[] = [];
  for (const e of arr) pushDistinct(out, e === undefined ? null : e);
  return out;
}

/** An index's entries in key order, as a read-model snapshot keeps them. */
export interface StoredIndex {
  name: string;
  multikeyFields: boolean[];
  keys: string[];
  /** The _id of each entry; null when every _id is plain, and so the end of its key. */
  ids: string[] | null;
}

/** A collection as a read-model snapshot keeps it. */
export interface StoredCollection {
  name: string;
  indexes: IndexSpec[];
  docs: Doc[];
  /** The entries of indexes that were up to date; the others are rebuilt from the documents. */
  entries: StoredIndex[];
}

/**
 * The index entries of one document: one key, or several when an indexed field holds an array
 * with several distinct values (`field` is that field's position).
 */
class MultiKeys {
  constructor(
    readonly keys: string[],
    readonly field: number,
  ) {}
}
type IndexKeys = string | MultiKeys;

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** _ids whose key component is 0x16, the _id itself, 0x00 (see updates.ts, stringPayload). */
const PLAIN_ID = /^[\u0002-\u0015\u0017-\u00ef]*$/;

/** Is every _id of these documents plain (PLAIN_ID), so that it can be read back from a key's end? */
function allPlainIds(docs: Map<string, Doc>): boolean {
  for (const id of docs.keys()) if (typeof id !== 'string' || !PLAIN_ID.test(id)) return false;
  return true;
}

/** The _id at the end of a key, when that _id is plain (PLAIN_ID). */
const plainIdOfKey = (key: string): string => key.slice(key.lastIndexOf('\u0016') + 1, -1);

/** The key component of an _id (always the last component, ascending). */
function idComponent(id: unknown): string {
  return keyComponent(id, 1);
}

class Index {
  readonly fields: string[];
  readonly paths: string[][];
  /** Direction per key component; the last component is the _id, ascending. */
  readonly dirs: number[];
  readonly roots: Set<string>;
  readonly rootList: string[];
  /** Keys are encoded strings (updates.ts, keyComponent): one string comparison per step. */
  tree: IndexTree;
  /** Per field: has some document produced several entries through it? */
  readonly multikeyFields: boolean[];
  multikey = false;
  /** The field names when every indexed path is a top-level field (the common case), else null. */
  private readonly topLevel: string[] | null;

  constructor(readonly spec: IndexSpec) {
    this.fields = Object.keys(spec.keys);
    this.paths = this.fields.map((f) => f.split('.'));
    this.dirs = [...this.fields.map((f) => (spec.keys[f] === -1 ? -1 : 1)), 1];
    this.roots = new Set(this.paths.map((p) => p[0]));
    this.rootList = [...this.roots];
    this.multikeyFields = this.fields.map(() => false);
    this.topLevel = this.paths.every((p) => p.length === 1) ? this.fields.slice() : null;
    this.tree = new KeyTree(plainIdOfKey);
  }

  get name(): string {
    return this.spec.name;
  }

  get unique(): boolean {
    return this.spec.unique === true;
  }

  /** The index entries of a document (several when an indexed field holds an array). */
  keysOf(doc: Doc): IndexKeys {
    const n = this.fields.length;
    const top = this.topLevel;
    const dirs = this.dirs;
    let key = '';
    for (let i = 0; i < n; i++) {
      let v: unknown;
      if (top !== null) {
        v = doc[top[i]];
        if (v === undefined) v = null;
        else if (Array.isArray(v)) v = pathKeyValue(doc, this.paths[i]);
      } else {
        v = pathKeyValue(doc, this.paths[i]);
      }
      if (v instanceof Multi) return this.multiKeysOf(doc);
      key += keyComponent(v, dirs[i]);
    }
    key += idComponent(doc._id);
    // Concatenation builds a rope; reading a char flattens it once, before the tree compares it
    // many times.
    key.charCodeAt(0);
    return key;
  }

  private multiKeysOf(doc: Doc): MultiKeys {
    const n = this.fields.length;
    const parts: string[] = new Array(n);
    let multiAt = -1;
    let values: unknown[] = [];
    for (let i = 0; i < n; i++) {
      const v = pathKeyValue(doc, this.paths[i]);
      if (v instanceof Multi) {
        if (multiAt >= 0) throw new Error(`cannot index parallel arrays [${this.fields[multiAt]}] [${this.fields[i]}] in index ${this.name}`);
        multiAt = i;
        values = v.values;
        parts[i] = '';
      } else {
        parts[i] = keyComponent(v, this.dirs[i]);
      }
    }
    const before = parts.slice(0, multiAt).join('');
    const after = parts.slice(multiAt + 1).join('') + idComponent(doc._id);
    const dir = this.dirs[multiAt];
    const keys = values.map((v) => {
      const key = before + keyComponent(v, dir) + after;
      key.charCodeAt(0); // flattened once, as in keysOf
      return key;
    });
    return new MultiKeys(keys, multiAt);
  }

  /** Adds a document's entries. */
  insert(keys: IndexKeys, id: string): void {
    if (typeof keys === 'string') {
      this.tree.set(keys, id);
      return;
    }
    this.multikey = true;
    this.multikeyFields[keys.field] = true;
    for (const key of keys.keys) this.tree.set(key, id);
  }

  /** Drops every entry (a deferred index, rebuilt by load). */
  clear(): void {
    this.tree = new KeyTree(plainIdOfKey);
  }

  /**
   * Builds the index from scratch for these documents: every key, one sort, then the tree loaded
   * leaf by leaf (much cheaper than inserting the keys one by one into a growing tree). For
   * non-unique indexes: keys end with the _id, so they never collide.
   */
  load(docs: Map<string, Doc>): void {
    const keys: string[] = [];
    // A key ends with its _id's component: 0x16, the _id, 0x00 when the _id has no char the
    // encoding escapes and no 0x16 of its own. With every _id such, each key gives back its _id
    // after the sort, and no map from keys to _ids is needed.
    const idOf = allPlainIds(docs) ? null : new Map<string, string>();
    for (const doc of docs.values()) {
      const k = this.keysOf(doc);
      if (typeof k === 'string') {
        keys.push(k);
        idOf?.set(k, doc._id);
        continue;
      }
      this.multikey = true;
      this.multikeyFields[k.field] = true;
      for (const key of k.keys) {
        keys.push(key);
        idOf?.set(key, doc._id);
      }
    }
    // The default sort compares UTF-16 code units, as `<` does (the tree's order).
    keys.sort();
    // With plain _ids the tree stores no values: it reads each from its key's end when asked.
    this.tree =
      idOf === null
        ? KeyTree.fromSorted(keys, null, plainIdOfKey)
        : KeyTree.fromSorted(
            keys,
            keys.map((k) => idOf.get(k) as string),
          );
  }

  /**
   * The index's entries, for a snapshot (restore takes them back). The _ids are kept only when
   * the tree stores them: otherwise each is read back from its key's end (as load does).
   */
  stored(): StoredIndex {
    const { keys, vals } = this.tree.sorted();
    return { name: this.name, multikeyFields: this.multikeyFields.slice(), keys, ids: vals };
  }

  /** Takes back the entries `stored` gave, made from the same documents by the same code. */
  restore(stored: StoredIndex): void {
    this.tree = KeyTree.fromSorted(stored.keys, stored.ids, plainIdOfKey);
    stored.multikeyFields.forEach((multi, i) => (this.multikeyFields[i] = multi === true));
    this.multikey = this.multikeyFields.some(Boolean);
  }

  /** Removes a document's entries. */
  remove(keys: IndexKeys): void {
    if (typeof keys === 'string') this.tree.delete(keys);
    else for (const key of keys.keys) this.tree.delete(key);
  }

  /** Throws the duplicate key error when another document holds the same indexed values. */
  checkUnique(keys: IndexKeys, doc: Doc, coll: string): void {
    if (typeof keys === 'string') {
      if (this.holderOf(keys, doc._id) !== undefined) throw duplicateError(coll, this, doc);
      return;
    }
    for (const key of keys.keys) if (this.holderOf(key, doc._id) !== undefined) throw duplicateError(coll, this, doc);
  }

  /** The _id of another document holding the same indexed values as `key`, if any. */
  private holderOf(key: string, exceptId: unknown): string | undefined {
    // The components are prefix-free, so the entries with these values are exactly those
    // extending the key without its _id.
    const prefix = key.slice(0, key.length - idComponent(exceptId).length);
    let pair = this.tree.pairFrom(prefix, false);
    while (pair !== undefined && pair[0].startsWith(prefix)) {
      if (pair[1] !== exceptId) return pair[1];
      pair = this.tree.pairFrom(pair[0], true);
    }
    return undefined;
  }

  sameSpec(spec: IndexSpec): boolean {
    const a = Object.entries(this.spec.keys);
    const b = Object.entries(spec.keys);
    return a.length === b.length && a.every(([f, d], i) => b[i][0] === f && b[i][1] === d) && this.unique === (spec.unique === true);
  }
}

function sameKeys(a: IndexKeys, b: IndexKeys): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a.keys.length !== b.keys.length) return false;
  for (let i = 0; i < a.keys.length; i++) if (a.keys[i] !== b.keys[i]) return false;
  return true;
}

function duplicateError(coll: string, index: Index, doc: Doc): DuplicateKeyError {
  const shown = index.fields
    .map((f, i) => {
      const v = pathKeyValue(doc, index.paths[i]);
      return `${f}: ${JSON.stringify((v instanceof Multi ? v.values : v) ?? null)}`;
    })
    .join(', ');
  return new DuplicateKeyError(`E11000 duplicate key error collection: ${coll} index: ${index.name} dup key: { ${shown} }`);
}

// ---------------------------------------------------------------------------------------------
// Query planning.

interface Constraint {
  /** Equality values ($eq, plain value, $in); null when the field only has a range. */
  points: unknown[] | null;
  lo: unknown;
  loIncl: boolean;
  hi: unknown;
  hiIncl: boolean;
  hasRange: boolean;
  /** The bounds alone decide the condition (for documents without arrays in the field). */
  exact: boolean;
}

interface FilterAnalysis {
  fields: Map<string, Constraint>;
  /** Some condition is not captured by the per-field bounds ($or, $ne, $regex, ...). */
  opaque: boolean;
}

function isKeyScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date;
}

function isOperatorObject(v: unknown): v is Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Date || v instanceof RegExp) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k.charCodeAt(0) === 36);
}

function newConstraint(): Constraint {
  return { points: null, lo: MIN_KEY, loIncl: true, hi: MAX_KEY, hiIncl: true, hasRange: false, exact: true };
}

function addBound(c: Constraint, op: string, v: unknown): void {
  const isLow = op === '$gt' || op === '$gte';
  const incl = op === '$gte' || op === '$lte';
  if (isLow) {
    if (!c.hasRange || c.lo === MIN_KEY || compareValues(v, c.lo) > 0 || (compareValues(v, c.lo) === 0 && !incl)) {
      if (c.hasRange && c.lo !== MIN_KEY) c.exact = c.exact && typeof c.lo === typeof v;
      c.lo = v;
      c.loIncl = incl;
    }
  } else if (!c.hasRange || c.hi === MAX_KEY || compareValues(v, c.hi) < 0 || (compareValues(v, c.hi) === 0 && !incl)) {
    if (c.hasRange && c.hi !== MAX_KEY) c.exact = c.exact && typeof c.hi === typeof v;
    c.hi = v;
    c.hiIncl = incl;
  }
  c.hasRange = true;
}

/** Closes a one-sided range within the type of its bound (MongoDB's type bracketing). */
function bracket(c: Constraint): void {
  if (!c.hasRange) return;
  const t = typeof (c.lo !== MIN_KEY ? c.lo : c.hi);
  if (t === 'number') {
    if (c.lo === MIN_KEY) c.lo = -Infinity;
    if (c.hi === MAX_KEY) c.hi = Infinity;
    c.exact = c.exact && typeof c.lo === 'number' && typeof c.hi === 'number';
  } else if (t === 'string') {
    if (c.lo === MIN_KEY) c.lo = '';
    if (c.hi === MAX_KEY) {
      c.hi = STRING_END;
      c.hiIncl = false;
    }
    c.exact = c.exact && typeof c.lo === 'string' && (typeof c.hi === 'string' || c.hi === STRING_END);
  } else {
    c.exact = false;
  }
}

function analyzeInto(filter: Filter, out: FilterAnalysis): void {
  for (const field of Object.keys(filter)) {
    const cond = filter[field];
    if (field.charCodeAt(0) === 36) {
      if (field === '$and' && Array.isArray(cond)) {
        for (const sub of cond) if (sub !== null && typeof sub === 'object') analyzeInto(sub as Filter, out);
      } else if (field !== '$comment') {
        out.opaque = true;
      }
      continue;
    }
    let c = out.fields.get(field);
    if (c !== undefined)
      c.exact = false; // a second condition on the field: keep the first as bounds
    else {
      c = newConstraint();
      out.fields.set(field, c);
      if (isKeyScalar(cond)) {
        c.points = [cond];
      } else if (isOperatorObject(cond)) {
        for (const op of Object.keys(cond)) {
          const v = cond[op];
          if (op === '$eq' && isKeyScalar(v) && c.points === null) c.points = [v];
          else if (op === '$in' && Array.isArray(v) && v.every(isKeyScalar) && c.points === null) c.points = v.slice();
          else if ((op === '$gt' || op === '$gte' || op === '$lt' || op === '$lte') && isKeyScalar(v) && v !== null) addBound(c, op, v);
          else c.exact = false;
        }
        if (c.points !== null && c.hasRange) {
          c.exact = false;
          c.hasRange = false;
        }
        bracket(c);
        if (c.points === null && !c.hasRange) {
          out.fields.delete(field);
          out.opaque = true;
        }
      } else {
        out.fields.delete(field);
        out.opaque = true;
      }
    }
  }
}

function analyze(filter: Filter): FilterAnalysis {
  const out: FilterAnalysis = { fields: new Map(), opaque: false };
  analyzeInto(filter, out);
  return out;
}

interface KeyRange {
  start: string;
  end: string;
  /** Length of the key prefix every entry of the range shares. */
  fixed: number;
}

interface IndexPlan {
  index: Index;
  ranges: KeyRange[];
  /** Iterate the tree backwards. */
  reverse: boolean;
  /** The ranges must be merged on the components from `mergeFrom` to give the sort order. */
  mergeFrom: number;
  /** The index yields documents in the requested order (or no order was requested). */
  ordered: boolean;
  /** Every candidate matches the filter without testing it. */
  covered: boolean;
  score: number;
}

interface SortKey {
  field: string;
  dir: number;
}

/** Matches sort keys to index components from `pos`; returns the scan direction or 0. */
function sortDirection(index: Index, sort: SortKey[], pos: number): number {
  const n = index.fields.length;
  let r = 0;
  for (let j = 0; j < sort.length; j++) {
    const p = pos + j;
    let dir: number;
    if (p < n && index.fields[p] === sort[j].field) dir = index.dirs[p];
    else if (p === n && sort[j].field === '_id' && !index.fields.includes('_id')) dir = 1;
    else return 0;
    const rr = sort[j].dir * dir;
    if (r === 0) r = rr;
    else if (r !== rr) return 0;
  }
  return r;
}

function planIndex(index: Index, a: FilterAnalysis, sort: SortKey[], filterFields: number): IndexPlan | null {
  const fields = index.fields;
  const n = fields.length;
  let e = 0;
  const prefix: unknown[] = [];
  for (; e < n; e++) {
    const c = a.fields.get(fields[e]);
    if (c === undefined || c.points === null || c.points.length !== 1) break;
    prefix.push(c.points[0]);
  }
  const next = e < n ? a.fields.get(fields[e]) : undefined;
  const nextIn = next !== undefined && next.points !== null ? next : undefined;
  const nextRange = next !== undefined && next.points === null && next.hasRange ? next : undefined;
  const pinned = (f: string) => {
    const c = a.fields.get(f);
    return c !== undefined && c.points !== null && c.points.length === 1;
  };
  const sortRest = sort.filter((s) => !pinned(s.field));
  let dir = 1;
  let ordered = true;
  let mergeFrom = -1;
  if (sortRest.length > 0) {
    const d = sortDirection(index, sortRest, e);
    // With a bound on a multikey sort field, a document's first entry in the range need not be
    // its MongoDB sort key (the smallest or largest element of the whole array).
    if (d !== 0 && !(next !== undefined && index.multikeyFields[e])) {
      dir = d;
    } else if (nextIn !== undefined && sortDirection(index, sortRest, e + 1) !== 0) {
      dir = sortDirection(index, sortRest, e + 1);
      mergeFrom = e + 1;
    } else {
      ordered = false;
    }
  }
  const usesSort = sortRest.length > 0 && ordered;
  if (e === 0 && next === undefined && !usesSort) return null;

  const usedFields = e + (next !== undefined ? 1 : 0);
  let exact = !a.opaque && !index.multikey && usedFields === filterFields;
  for (let i = 0; i < usedFields && exact; i++) exact = (a.fields.get(fields[i]) as Constraint).exact;

  // Range bounds as encoded keys: a prefix alone sorts before every key extending it, and the
  // prefix plus KEY_LAST after every one of them.
  const dirs = index.dirs;
  let encodedPrefix = '';
  for (let i = 0; i < prefix.length; i++) encodedPrefix += keyComponent(prefix[i], dirs[i]);
  const ranges: KeyRange[] = [];
  if (nextIn !== undefined) {
    const points: unknown[] = [];
    for (const p of nextIn.points as unknown[]) pushDistinct(points, p);
    const d = dirs[e];
    points.sort((x, y) => compareValues(x, y) * d);
    for (const p of points) {
      const base = encodedPrefix + keyComponent(p, d);
      ranges.push({ start: base, end: base + KEY_LAST, fixed: base.length });
    }
  } else if (nextRange !== undefined) {
    const asc = dirs[e] === 1;
    const first = asc ? nextRange.lo : nextRange.hi;
    const firstIncl = asc ? nextRange.loIncl : nextRange.hiIncl;
    const last = asc ? nextRange.hi : nextRange.lo;
    const lastIncl = asc ? nextRange.hiIncl : nextRange.loIncl;
    const from = encodedPrefix + keyComponent(first, dirs[e]);
    const to = encodedPrefix + keyComponent(last, dirs[e]);
    ranges.push({ start: firstIncl ? from : from + KEY_LAST, end: lastIncl ? to + KEY_LAST : to, fixed: encodedPrefix.length });
  } else {
    ranges.push({ start: encodedPrefix, end: encodedPrefix + KEY_LAST, fixed: encodedPrefix.length });
  }
  const reverse = dir === -1;
  if (reverse && mergeFrom < 0) ranges.reverse();
  const score = e * 10 + (next !== undefined ? 5 : 0) + (usesSort ? 4 : 0) + (exact ? 1 : 0);
  return { index, ranges, reverse, mergeFrom, ordered, covered: exact, score };
}

function* scanRange(tree: IndexTree, range: KeyRange, reverse: boolean): Generator<[string, string]> {
  if (!reverse) {
    for (const pair of tree.entries(range.start)) {
      if (pair[0] > range.end) return;
      yield pair;
    }
  } else {
    for (const pair of tree.entriesReversed(range.end)) {
      if (pair[0] < range.start) return;
      yield pair;
    }
  }
}

/** Yields the _ids of the plan's entries in index order (merging $in ranges when needed). */
function* planIds(plan: IndexPlan): Generator<string> {
  const tree = plan.index.tree;
  if (plan.mergeFrom < 0 || plan.ranges.length === 1) {
    for (const range of plan.ranges) for (const pair of scanRange(tree, range, plan.reverse)) yield pair[1];
    return;
  }
  // Each range fixes the components before `mergeFrom`; the rest of its keys (the components
  // from `mergeFrom` on, _id last) compare as strings in index order.
  const sign = plan.reverse ? -1 : 1;
  const iters = plan.ranges.map((r) => scanRange(tree, r, plan.reverse));
  const suffix = (i: number, pair: [string, string]) => pair[0].slice(plan.ranges[i].fixed);
  const heads: Array<string | undefined> = [];
  const ids: string[] = [];
  const advance = (i: number) => {
    const r = iters[i].next();
    heads[i] = r.done ? undefined : suffix(i, r.value);
    if (!r.done) ids[i] = r.value[1];
  };
  for (let i = 0; i < iters.length; i++) advance(i);
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h !== undefined && (best < 0 || compareKeys(h, heads[best] as string) * sign < 0)) best = i;
    }
    if (best < 0) return;
    yield ids[best];
    advance(best);
  }
}

// ---------------------------------------------------------------------------------------------
// Sorting and projection with MongoDB semantics.

function sortKeyOf(doc: Obj, segs: string[], dir: number): unknown {
  const v = pathKeyValue(doc, segs);
  if (!(v instanceof Multi)) return v;
  let best = v.values[0];
  for (const x of v.values) if (compareValues(x, best) * dir < 0) best = x;
  return best;
}

function sortDocs(docs: Doc[], sort: SortKey[]): Doc[] {
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

function include(value: Obj, tree: ProjectionTree): Obj {
  const out: Obj = {};
  for (const k of Object.keys(value)) {
    const t = tree[k];
    if (t === undefined) continue;
    const v = value[k];
    if (t === true) out[k] = cloneValue(v);
    else if (Array.isArray(v)) out[k] = v.filter(isDocument).map((e) => include(e, t));
    else if (isDocument(v)) out[k] = include(v, t);
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

function compileProjection(projection: Record<string, 0 | 1> | undefined): CompiledProjection | null {
  if (projection === undefined) return null;
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
    return { apply: (doc) => include(doc, tree) as Doc };
  }
  const tree = projectionTree(excluded);
  if (dropId) tree._id = true;
  return { apply: (doc) => exclude(doc, tree) as Doc };
}

// ---------------------------------------------------------------------------------------------
// Compiled mingo queries, memoised by the filter's text (request paths repeat their filters).

const queryCache = new Map<string, Query>();

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
    case 'object':
    case 'object': {
      if (v instanceof RegExp) return `/${v.source}/${v.flags}`;
      if (v instanceof Date) return `D${v.getTime()}`;
      const isArray = Array.isArray(v);
      const proto = Object.getPrototypeOf(v);
      if (!isArray && proto !== Object.prototype && proto !== null) return null;
      let s = isArray ? '[' : '{';
      for (const k of Object.keys(v)) {
        const part = filterKey((v as Obj)[k]);
        if (part === null) return null;
        s += isArray ? `${part},` : `${JSON.stringify(k)}:${part},`;
      }
      return s + (isArray ? ']' : '}');
    }
    default:
      return null;
  }
}

function compileFilter(filter: Filter): Query {
  const key = filterKey(filter);
  if (key === null) return new Query(filter, {});
  let q = queryCache.get(key);
  if (q === undefined) {
    q = new Query(filter, {});
    if (queryCache.size >= 2000) queryCache.delete(queryCache.keys().next().value as string);
    queryCache.set(key, q);
  }
  return q;
}

// ---------------------------------------------------------------------------------------------

class CollectionData {
  readonly docs = new Map<string, Doc>();
  /** Every index, in declaration order (the planner's tie-break). */
  readonly indexes: Index[] = [];
  /**
   * The indexes each write keeps up to date: all of them, except while the collection is bulk
   * loading (deferIndexes), when only the unique ones are (their checks cannot wait).
   */
  maintained: Index[] = this.indexes;
  indexedRoots = new Set<string>();
  hasUnique = false;
  /** insertDoc's per-index keys (writes are synchronous, so one array per collection will do). */
  readonly keyScratch: IndexKeys[] = [];

  get deferred(): boolean {
    return this.maintained !== this.indexes;
  }

  addIndex(index: Index): void {
    this.indexes.push(index);
    if (this.deferred && index.unique) this.maintained.push(index);
    this.refresh();
  }

  /**
   * After a restore: the indexes whose entries were not restored are built like deferred ones
   * (materialize); a unique one is built at once, as its checks cannot wait.
   */
  deferExcept(ready: Index[], collection: string): void {
    for (const ix of this.indexes) {
      if (ready.includes(ix) || !ix.unique) continue;
      for (const doc of this.docs.values()) {
        const keys = ix.keysOf(doc);
        ix.checkUnique(keys, doc, collection);
        ix.insert(keys, doc._id);
      }
      ready.push(ix);
    }
    if (ready.length === this.indexes.length) return;
    this.maintained = this.indexes.filter((ix) => ready.includes(ix));
    this.refresh();
  }

  /** Stops maintaining the non-unique indexes (emptied) until materialize. */
  defer(): void {
    if (this.deferred || this.indexes.every((ix) => ix.unique)) return;
    this.maintained = this.indexes.filter((ix) => ix.unique);
    for (const ix of this.indexes) if (!ix.unique) ix.clear();
    this.refresh();
  }

  /** Builds the deferred indexes from the documents (sorted, then loaded) and maintains them again. */
  materialize(): void {
    if (!this.deferred) return;
    for (const ix of this.indexes) if (!this.maintained.includes(ix)) ix.load(this.docs);
    this.maintained = this.indexes;
    this.refresh();
  }

  private refresh(): void {
    this.indexedRoots = new Set(this.maintained.flatMap((ix) => ix.rootList));
    this.hasUnique = this.maintained.some((ix) => ix.unique);
  }
}

const APPLIED = Promise.resolve(true);
const NOT_APPLIED = Promise.resolve(false);
const INSERT_OPTS: ApplyOptions = Object.freeze({ isInsert: true });
const UPDATE_OPTS: ApplyOptions = Object.freeze({ isInsert: false });

interface Selection {
  docs: Doc[];
  plan: QueryPlan;
}

const NO_INDEXES: Index[] = [];

/** The _id of a filter that is exactly `{ _id: <string> }`, else undefined. */
function idOnly(filter: Filter): string | undefined {
  let id: unknown;
  let n = 0;
  for (const k in filter) {
    if (k !== '_id' || ++n > 1) return undefined;
    id = filter[k];
  }
  return typeof id === 'string' ? id : undefined;
}

function newObjectId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  const seconds = Math.floor(Date.now() / 1000);
  bytes[0] = (seconds >>> 24) & 0xff;
  bytes[1] = (seconds >>> 16) & 0xff;
  bytes[2] = (seconds >>> 8) & 0xff;
  bytes[3] = seconds & 0xff;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The document an upsert starts from: the filter's equality conditions (MongoDB semantics). */
function seedFromFilter(filter: Filter, into: Obj): void {
  for (const k of Object.keys(filter)) {
    const v = filter[k];
    if (k === '$and' && Array.isArray(v)) {
      for (const sub of v) if (sub !== null && typeof sub === 'object') seedFromFilter(sub as Filter, into);
      continue;
    }
    if (k.charCodeAt(0) === 36) continue;
    let value: unknown;
    if (isOperatorObject(v)) {
      if (!('$eq' in v)) continue;
      value = v.$eq;
    } else if (v instanceof RegExp) continue;
    else value = v;
    applyUpdate(into, { $set: { [k]: value } }, { isInsert: true });
  }
}

const ABSENT = Symbol('absent');
/** Copies of the top-level fields an update may change: [name, value or ABSENT, ...]. */
type Snapshot = { whole: Doc } | { fields: unknown[] };

function snapshotFields(doc: Doc, update: Update, withPos: boolean): Snapshot {
  const fields: unknown[] = [];
  for (const op in update) {
    if (op.charCodeAt(0) !== 36 || op === '$rename') return { whole: cloneValue(doc) };
    const spec = update[op] as Obj;
    for (const path in spec) {
      const dot = path.indexOf('.');
      keepField(doc, dot < 0 ? path : path.slice(0, dot), fields);
    }
  }
  if (withPos) keepField(doc, '_pos', fields);
  return { fields };
}

function keepField(doc: Doc, root: string, fields: unknown[]): void {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === root) return;
  const v = doc[root];
  fields.push(root, v === undefined ? ABSENT : cloneValue(v));
}

/**
 * References to the current values of the top-level fields a simple update may change:
 * [name, value or ABSENT, ...]. Enough to undo a simple update, which never mutates a value.
 */
function snapshotRefs(doc: Doc, update: Update, withPos: boolean): unknown[] {
  const fields: unknown[] = [];
  for (const op in update) {
    if (op === '$setOnInsert') continue;
    const spec = update[op];
    if (spec === null || typeof spec !== 'object') continue;
    for (const path in spec) {
      const dot = path.indexOf('.');
      const root = dot < 0 ? path : path.slice(0, dot);
      const v = doc[root];
      fields.push(root, v === undefined ? ABSENT : v);
    }
  }
  if (withPos) fields.push('_pos', doc._pos === undefined ? ABSENT : doc._pos);
  return fields;
}

function restoreRefs(doc: Doc, saved: unknown[]): void {
  for (let i = saved.length - 2; i >= 0; i -= 2) {
    const k = saved[i] as string;
    if (saved[i + 1] === ABSENT) delete doc[k];
    else doc[k] = saved[i + 1];
  }
}

/** Did a field of the index change (by reference: simple updates replace changed values)? */
function rootsChanged(ix: Index, doc: Doc, saved: unknown[]): boolean {
  for (const root of ix.rootList) {
    for (let i = 0; i < saved.length; i += 2) {
      if (saved[i] !== root) continue;
      const now = doc[root];
      if ((now === undefined ? ABSENT : now) !== saved[i + 1]) return true;
      break;
    }
  }
  return false;
}

/** The indexed fields of `doc` as they were before a simple update (enough for keysOf). */
function viewBefore(ix: Index, doc: Doc, saved: unknown[]): Doc {
  const view: Doc = { _id: doc._id };
  for (const root of ix.rootList) {
    let v: unknown = doc[root];
    for (let i = 0; i < saved.length; i += 2) {
      if (saved[i] === root) {
        v = saved[i + 1];
        break;
      }
    }
    if (v !== ABSENT && v !== undefined) view[root] = v;
  }
  return view;
}

function restoreFields(doc: Doc, saved: Snapshot): void {
  if ('whole' in saved) {
    for (const k of Object.keys(doc)) delete doc[k];
    Object.assign(doc, saved.whole);
    return;
  }
  const f = saved.fields;
  for (let i = 0; i < f.length; i += 2) {
    const k = f[i] as string;
    if (f[i + 1] === ABSENT) delete doc[k];
    else doc[k] = f[i + 1];
  }
}

export class MemoryCollection implements Collection {
  constructor(
    private readonly store: MemoryReadStore,
    readonly name: string,
  ) {}

  private cached: CollectionData | undefined;
  private cachedAt = -1;

  private data(): CollectionData | undefined {
    const generation = this.store._generation;
    if (this.cachedAt !== generation) {
      this.cached = this.store._data(this.name, false);
      this.cachedAt = generation;
    }
    return this.cached;
  }

  private writable(): CollectionData {
    return this.data() ?? (this.store._data(this.name, true) as CollectionData);
  }

  async findOne(filter: Filter, options?: FindOptions): Promise<Doc | null> {
    if ((options?.skip ?? 0) <= 0) {
      // The commonest read of projections: by _id alone, a direct lookup (sort and limit do not
      // matter for at most one document).
      const id = idOnly(filter);
      if (id !== undefined) {
        const doc = this.data()?.docs.get(id);
        return doc === undefined ? null : this.output([doc], options)[0];
      }
    }
    const { docs } = this.select(filter, { ...options, limit: 1 });
    return docs.length === 0 ? null : this.output(docs, options)[0];
  }

  async find(filter: Filter, options?: FindOptions): Promise<Doc[]> {
    return this.output(this.select(filter, options).docs, options);
  }

  async count(filter: Filter = {}, options?: CountOptions): Promise<number> {
    const data = this.data();
    if (data === undefined) return 0;
    if (Object.keys(filter).length === 0 && options?.hint === undefined) return data.docs.size;
    return this.select(filter, options?.hint === undefined ? undefined : { hint: options.hint }, true).docs.length;
  }

  async explain(filter: Filter, options?: FindOptions): Promise<QueryPlan> {
    return this.select(filter, options).plan;
  }

  async insertOne(doc: Doc): Promise<void> {
    const data = this.writable();
    const copy = cloneValue(doc);
    // _id first, as MongoDB stores it.
    if (copy._id === undefined || Object.keys(copy)[0] !== '_id') {
      const { _id, ...rest } = copy;
      this.insertDoc(data, { _id: _id ?? newObjectId(), ...rest });
    } else {
      this.insertDoc(data, copy);
    }
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    const data = this.data();
    const found = data === undefined ? undefined : this.select(filter, { limit: 1 }, false).docs[0];
    if (data !== undefined && found !== undefined) {
      const modified = this.updateDoc(data, found, update, filter, undefined);
      return { matched: 1, modified: modified ? 1 : 0, upserted: false };
    }
    if (options?.upsert !== true) return { matched: 0, modified: 0, upserted: false };
    const seed: Obj = {};
    seedFromFilter(filter, seed);
    const { _id, ...rest } = seed;
    const fresh: Doc = { _id: (_id as string | undefined) ?? newObjectId(), ...rest };
    applyUpdate(fresh, update, { isInsert: true, filter });
    this.insertDoc(this.writable(), fresh);
    return { matched: 0, modified: 0, upserted: true };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const data = this.data();
    if (data === undefined) return { matched: 0, modified: 0, upserted: false };
    const docs = this.select(filter, undefined, false).docs;
    let modified = 0;
    for (const doc of docs) if (this.updateDoc(data, doc, update, filter, undefined)) modified++;
    return { matched: docs.length, modified, upserted: false };
  }

  async deleteOne(filter: Filter): Promise<number> {
    const data = this.data();
    if (data === undefined) return 0;
    const doc = this.select(filter, { limit: 1 }, false).docs[0];
    if (doc === undefined) return 0;
    this.removeDoc(data, doc);
    return 1;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const data = this.data();
    if (data === undefined) return 0;
    const docs = this.select(filter, undefined, false).docs;
    for (const doc of docs) this.removeDoc(data, doc);
    return docs.length;
  }

  applyAt(id: string, position: number, update: Update): Promise<boolean> {
    // The write is synchronous; answering with a settled promise spares an async frame per call.
    try {
      return this.applyAtSync(id, position, update) ? APPLIED : NOT_APPLIED;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** applyAt without the promise, for replay loops that own the store. */
  applyAtSync(id: string, position: number, update: Update): boolean {
    const data = this.writable();
    const doc = data.docs.get(id);
    if (doc !== undefined) {
      const pos = doc._pos;
      if (typeof pos === 'number' && pos >= position) return false;
      this.updateDoc(data, doc, update, undefined, position);
      return true;
    }
    let fresh = simpleInsert(id, update) as Doc | typeof NOT_SIMPLE;
    if (fresh === NOT_SIMPLE) {
      fresh = { _id: id };
      applyUpdate(fresh, update, INSERT_OPTS);
    }
    fresh._pos = position;
    this.insertDoc(data, fresh, true);
    return true;
  }

  // ---- writes

  private insertDoc(data: CollectionData, doc: Doc, knownAbsent = false): void {
    const docs = data.docs;
    if (!knownAbsent && docs.has(doc._id)) {
      throw new DuplicateKeyError(`E11000 duplicate key error collection: ${this.name} index: _id_ dup key: { _id: ${JSON.stringify(doc._id)} }`);
    }
    const indexes = data.maintained;
    const n = indexes.length;
    if (n === 0) {
      docs.set(doc._id, doc);
      return;
    }
    // Every key first (computing one may throw), then the unique checks, then the writes.
    const keySets = data.keyScratch;
    for (let i = 0; i < n; i++) keySets[i] = indexes[i].keysOf(doc);
    if (data.hasUnique) {
      for (let i = 0; i < n; i++) if (indexes[i].unique) indexes[i].checkUnique(keySets[i], doc, this.name);
    }
    docs.set(doc._id, doc);
    for (let i = 0; i < n; i++) indexes[i].insert(keySets[i], doc._id);
  }

  private removeDoc(data: CollectionData, doc: Doc): void {
    for (const ix of data.maintained) ix.remove(ix.keysOf(doc));
    data.docs.delete(doc._id);
  }

  /** The indexes whose fields the update may change (no allocation when there are none). */
  private affected(data: CollectionData, update: Update, touchesPos: boolean): Index[] {
    const indexes = data.maintained;
    if (indexes.length === 0) return NO_INDEXES;
    const roots = data.indexedRoots;
    let hit: string[] | undefined;
    for (const op in update) {
      if (op.charCodeAt(0) !== 36 || op === '$rename') return indexes;
      // A stored document is never being inserted: $setOnInsert does not apply to it.
      if (op === '$setOnInsert') continue;
      const spec = update[op] as Obj;
      for (const path in spec) {
        const dot = path.indexOf('.');
        const root = dot < 0 ? path : path.slice(0, dot);
        if (roots.has(root)) (hit ??= []).push(root);
      }
    }
    if (touchesPos && roots.has('_pos')) (hit ??= []).push('_pos');
    if (hit === undefined) return NO_INDEXES;
    const out: Index[] = [];
    for (const ix of indexes) {
      for (const r of ix.rootList) {
        if (hit.includes(r)) {
          out.push(ix);
          break;
        }
      }
    }
    return out;
  }

  /** Applies an update to a stored document, keeping indexes right; all or nothing. */
  private updateDoc(data: CollectionData, doc: Doc, update: Update, filter: Filter | undefined, position: number | undefined): boolean {
    const affected = this.affected(data, update, position !== undefined);
    if (affected.length === 0) {
      let changed = applyUpdate(doc, update, filter === undefined ? UPDATE_OPTS : { isInsert: false, filter });
      if (position !== undefined) {
        doc._pos = position;
        changed = true;
      }
      return changed;
    }
    // A simple update (updates.ts, applySimpleUpdate) replaces field values and never mutates
    // one in place, so references to the old values are a faithful snapshot: no copies, and old
    // keys are computed only for the indexes whose fields really changed.
    const saved = snapshotRefs(doc, update, position !== undefined);
    const simple = applySimpleUpdate(doc, update, false);
    if (simple === NOT_SIMPLE) return this.updateDocGeneral(doc, update, filter, position, affected);
    let changed = simple;
    if (position !== undefined) {
      doc._pos = position;
      changed = true;
    }
    if (!changed) return false;
    let moves: Array<Index | IndexKeys> | undefined;
    try {
      for (const ix of affected) {
        if (!rootsChanged(ix, doc, saved)) continue;
        const oldKeys = ix.keysOf(viewBefore(ix, doc, saved));
        const newKeys = ix.keysOf(doc);
        if (sameKeys(oldKeys, newKeys)) continue;
        if (ix.unique) ix.checkUnique(newKeys, doc, this.name);
        (moves ??= []).push(ix, oldKeys, newKeys);
      }
    } catch (err) {
      restoreRefs(doc, saved);
      throw err;
    }
    if (moves !== undefined) {
      for (let i = 0; i < moves.length; i += 3) {
        const ix = moves[i] as Index;
        ix.remove(moves[i + 1] as IndexKeys);
        ix.insert(moves[i + 2] as IndexKeys, doc._id);
      }
    }
    return true;
  }

  /** updateDoc for the other updates: old keys up front, deep copies of the touched fields. */
  private updateDocGeneral(doc: Doc, update: Update, filter: Filter | undefined, position: number | undefined, affected: Index[]): boolean {
    const oldKeys = affected.map((ix) => ix.keysOf(doc));
    // The fields the update touches, to put back if the new index entries are refused.
    const saved = snapshotFields(doc, update, position !== undefined);
    const moves: Array<{ ix: Index; oldKeys: IndexKeys; newKeys: IndexKeys }> = [];
    try {
      let changed = applyUpdate(doc, update, { isInsert: false, filter });
      if (position !== undefined) {
        doc._pos = position;
        changed = true;
      }
      if (!changed) return false;
      for (let i = 0; i < affected.length; i++) {
        const ix = affected[i];
        const newKeys = ix.keysOf(doc);
        if (sameKeys(oldKeys[i], newKeys)) continue;
        if (ix.unique) ix.checkUnique(newKeys, doc, this.name);
        moves.push({ ix, oldKeys: oldKeys[i], newKeys });
      }
    } catch (err) {
      restoreFields(doc, saved);
      throw err;
    }
    for (const { ix, oldKeys, newKeys } of moves) {
      ix.remove(oldKeys);
      ix.insert(newKeys, doc._id);
    }
    return true;
  }

  // ---- reads

  private output(docs: Doc[], options: FindOptions | undefined): Doc[] {
    const projection = compileProjection(options?.projection);
    return projection === null ? docs.map((d) => cloneValue(d)) : docs.map((d) => projection.apply(d));
  }

  /**
   * The stored documents matching `filter` in the requested order, after skip and limit (not
   * copies). `countOnly` lets a covered index range be counted without fetching documents.
   */
  private select(filter: Filter, options: FindOptions | undefined, countOnly = false): Selection {
    const data = this.data();
    if (data === undefined) return { docs: [], plan: { index: null, examined: 0 } };
    const sort: SortKey[] =
      options?.sort === undefined ? [] : Object.entries(options.sort as SortSpec).map(([field, dir]) => ({ field, dir: dir === -1 ? -1 : 1 }));
    const skip = Math.max(0, options?.skip ?? 0);
    const limit = options?.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    const a = analyze(filter);
    const filterFields = a.fields.size;

    // _id equality or $in: direct lookups.
    const idc = a.fields.get('_id');
    if (idc !== undefined && idc.points !== null) {
      const docs: Doc[] = [];
      const seen = new Set<unknown>();
      let examined = 0;
      const test = idc.exact && filterFields === 1 && !a.opaque ? null : compileFilter(filter);
      for (const id of idc.points) {
        if (seen.has(id)) continue;
        seen.add(id);
        const doc = data.docs.get(id as string);
        if (doc === undefined) continue;
        examined++;
        if (test === null || test.test(doc)) docs.push(doc);
      }
      const sorted = sort.length > 0 ? sortDocs(docs, sort) : docs;
      return { docs: sorted.slice(skip, skip + limit), plan: { index: '_id_', examined } };
    }

    // A query needs every index: a bulk-loading collection builds its deferred ones now.
    data.materialize();
    let best: IndexPlan | null = null;
    const hint = options?.hint;
    if (hint !== undefined) {
      // MongoDB refuses a hint naming no index; one that cannot serve the filter falls back here.
      const ix = data.indexes.find((i) => i.name === hint);
      if (ix === undefined)
        throw new Error(`error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index (${hint})`);
      best = planIndex(ix, a, sort, filterFields);
    }
    if (best === null) {
      for (const ix of data.indexes) {
        const p = planIndex(ix, a, sort, filterFields);
        if (p !== null && (best === null || p.score > best.score)) best = p;
      }
    }

    const isEmpty = Object.keys(filter).length === 0;
    const test = (best !== null && best.covered) || isEmpty ? null : compileFilter(filter);
    const out: Doc[] = [];
    let examined = 0;
    const ordered = best !== null ? best.ordered : sort.length === 0;
    const stopAt = ordered ? skip + limit : Infinity;
    let matched = 0;

    if (best !== null) {
      const dedupe = best.index.multikey ? new Set<string>() : null;
      if (countOnly && best.covered && dedupe === null) {
        let count = 0;
        for (const range of best.ranges) count += best.index.tree.countRange(range.start, range.end);
        return { docs: new Array(count), plan: { index: best.index.name, examined: 0 } };
      }
      for (const id of planIds(best)) {
        if (dedupe !== null) {
          if (dedupe.has(id)) continue;
          dedupe.add(id);
        }
        const doc = data.docs.get(id) as Doc;
        examined++;
        if (test !== null && !test.test(doc)) continue;
        if (++matched > skip || !ordered) out.push(doc);
        if (matched >= stopAt) break;
      }
    } else {
      for (const doc of data.docs.values()) {
        examined++;
        if (test !== null && !test.test(doc)) continue;
        if (++matched > skip || !ordered) out.push(doc);
        if (matched >= stopAt) break;
      }
    }
    const plan = { index: best === null ? null : best.index.name, examined };
    if (ordered) return { docs: out, plan };
    const sorted = sort.length > 0 ? sortDocs(out, sort) : out;
    return { docs: sorted.slice(skip, skip + limit), plan };
  }
}

export class MemoryReadStore implements ReadStore {
  readonly name = 'memory';
  private collections = new Map<string, CollectionData>();
  private handles = new Map<string, MemoryCollection>();

  collection(name: string): MemoryCollection {
    let h = this.handles.get(name);
    if (h === undefined) {
      h = new MemoryCollection(this, name);
      this.handles.set(name, h);
    }
    return h;
  }

  /** @internal Changes whenever a name may map to other collection state (handles cache it). */
  _generation = 0;

  /** @internal The state of a collection; created on first write, as MongoDB does. */
  _data(name: string, create: boolean): CollectionData | undefined {
    let data = this.collections.get(name);
    if (data === undefined && create) {
      data = new CollectionData();
      this.collections.set(name, data);
      this._generation++;
    }
    return data;
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    this.createIndexes(spec);
  }

  private createIndexes(spec: CollectionSpec): void {
    const data = this._data(spec.name, true) as CollectionData;
    for (const ixSpec of spec.indexes) {
      if (ixSpec.name === '_id_') continue;
      const byName = data.indexes.find((ix) => ix.name === ixSpec.name);
      if (byName !== undefined) {
        if (byName.sameSpec(ixSpec)) continue;
        throw new Error(`An index named ${ixSpec.name} already exists on ${spec.name} with a different key pattern or options`);
      }
      const sameKeys = data.indexes.find((ix) => ix.sameSpec({ ...ixSpec, unique: ix.unique }));
      if (sameKeys !== undefined) throw new Error(`Index ${ixSpec.name} already exists on ${spec.name} with a different name: ${sameKeys.name}`);
      const ix = new Index({ name: ixSpec.name, keys: { ...ixSpec.keys }, unique: ixSpec.unique === true });
      if (ix.unique) {
        for (const doc of data.docs.values()) {
          const keys = ix.keysOf(doc);
          ix.checkUnique(keys, doc, spec.name);
          ix.insert(keys, doc._id);
        }
      } else {
        ix.load(data.docs);
      }
      data.addIndex(ix);
    }
  }

  /**
   * Every collection but a rebuild's unfinished ones, with its index specs, its documents (the
   * live objects: a read-model snapshot serializes them before anything writes again) and the
   * entries of its up-to-date indexes.
   */
  exportCollections(): StoredCollection[] {
    const out: StoredCollection[] = [];
    for (const [name, data] of this.collections) {
      if (name.startsWith(REBUILD_PREFIX)) continue;
      out.push({
        name,
        indexes: data.indexes.map((ix) => ({ ...ix.spec, keys: { ...ix.spec.keys } })),
        docs: [...data.docs.values()],
        entries: data.maintained.map((ix) => ix.stored()),
      });
    }
    return out;
  }

  /**
   * Installs a collection read from a snapshot into this store, which must not hold it yet. Index
   * entries the snapshot kept are taken as they are (same documents, same code: the snapshot's
   * checks); any other index is deferred until buildIndexes, as in a bulk load.
   */
  restoreCollection(stored: StoredCollection): void {
    const { name, docs } = stored;
    if (this.collections.has(name)) throw new Error(`Cannot restore ${name}: the collection exists`);
    this.createIndexes({ name, indexes: stored.indexes });
    const data = this._data(name, true) as CollectionData;
    for (const doc of docs) {
      if (typeof doc._id !== 'string' || data.docs.has(doc._id)) throw new Error(`Cannot restore ${name}: missing or repeated _id`);
      data.docs.set(doc._id, doc);
    }
    const kept = new Map(stored.entries.map((e) => [e.name, e]));
    for (const ix of data.indexes) {
      const entries = kept.get(ix.name);
      if (entries === undefined) continue;
      if (entries.ids !== null && entries.keys.length !== entries.ids.length) throw new Error(`Cannot restore ${name}: index ${ix.name} is malformed`);
      ix.restore(entries);
    }
    data.deferExcept(
      data.indexes.filter((ix) => kept.has(ix.name)),
      name,
    );
  }

  /**
   * Bulk loading (a replay from far behind): until buildIndexes, writes to these collections
   * leave their non-unique indexes alone, which are then built in one sort each. A query that needs
   * an index builds its collection's at once, so reads stay correct meanwhile.
   */
  deferIndexes(names: string[]): void {
    for (const name of names) (this._data(name, true) as CollectionData).defer();
  }

  buildIndexes(names: string[]): void {
    for (const name of names) this.collections.get(name)?.materialize();
  }

  async dropCollection(name: string): Promise<void> {
    this.collections.delete(name);
    this._generation++;
  }

  async swapCollections(pairs: Array<[from: string, to: string]>): Promise<void> {
    const moved = pairs.map(([from, to]) => {
      if (from === to) throw new Error(`Cannot rename collection ${from} to itself`);
      const data = this.collections.get(from);
      if (data === undefined) throw new Error(`Cannot rename ${from}: the collection does not exist`);
      return data;
    });
    for (const [from] of pairs) this.collections.delete(from);
    pairs.forEach(([, to], i) => this.collections.set(to, moved[i]));
    this._generation++;
  }

  async listCollections(): Promise<string[]> {
    return [...this.collections.keys()].sort();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.collections.clear();
    this.handles.clear();
    this._generation++;
  }
}
