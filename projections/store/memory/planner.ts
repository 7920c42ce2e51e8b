// Query planning of the in-memory read store: the per-field bounds a filter sets, the best index
// for them and the requested sort, and the _ids of that index's entries in the ranges, in order.
import type { Filter } from '../port.ts';
import type { IndexTree, KeyCursor } from '../trees.ts';
import { KEY_LAST, MAX_KEY, MIN_KEY, STRING_END, compareValues, keyComponent } from '../updates.ts';
import { isRecord } from '../records.ts';
import { compareKeys, isScalar, pushDistinct, type Index, type Obj } from './keys.ts';

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

/** A field's constraint that holds equality values. */
type PointConstraint = Constraint & { points: unknown[] };
const hasPoints = (c: Constraint | undefined): c is PointConstraint => c !== undefined && c.points !== null;

export interface FilterAnalysis {
  fields: Map<string, Constraint>;
  /** Some condition is not captured by the per-field bounds ($or, $ne, $regex, ...). */
  opaque: boolean;
  /**
   * Per field, the distinct values of a `$all` of strings, numbers and booleans on it (opaque to
   * the per-field bounds; an index intersection may answer it, see planIntersection).
   */
  alls: Map<string, unknown[]> | null;
}

function isKeyScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date;
}

export function isOperatorObject(v: unknown): v is Obj {
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
        for (const sub of cond) if (isRecord(sub)) analyzeInto(sub, out);
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
          if (op === '$all') noteAll(out, field, v);
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

/** Records the values of a `$all` of scalars (the first one on the field). */
function noteAll(out: FilterAnalysis, field: string, v: unknown): void {
  if (!Array.isArray(v) || v.length === 0 || !v.every(isScalar)) return;
  out.alls ??= new Map();
  if (out.alls.has(field)) return;
  const values: unknown[] = [];
  for (const x of v) pushDistinct(values, x);
  out.alls.set(field, values);
}

export function analyze(filter: Filter): FilterAnalysis {
  const out: FilterAnalysis = { fields: new Map(), opaque: false, alls: null };
  analyzeInto(filter, out);
  return out;
}

interface KeyRange {
  start: string;
  end: string;
  /** Length of the key prefix every entry of the range shares. */
  fixed: number;
}

export interface IndexPlan {
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

export interface SortKey {
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

export function planIndex(index: Index, a: FilterAnalysis, sort: SortKey[], filterFields: number): IndexPlan | null {
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
  const nextIn = hasPoints(next) ? next : undefined;
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
  for (let i = 0; i < usedFields && exact; i++) exact = a.fields.get(fields[i])?.exact === true;

  // Range bounds as encoded keys: a prefix alone sorts before every key extending it, and the
  // prefix plus KEY_LAST after every one of them.
  const dirs = index.dirs;
  let encodedPrefix = '';
  for (let i = 0; i < prefix.length; i++) encodedPrefix += keyComponent(prefix[i], dirs[i]);
  const ranges: KeyRange[] = [];
  if (nextIn !== undefined) {
    const points: unknown[] = [];
    for (const p of nextIn.points) pushDistinct(points, p);
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
export function* planIds(plan: IndexPlan): Generator<string> {
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
    let bestHead = '';
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h !== undefined && (best < 0 || compareKeys(h, bestHead) * sign < 0)) {
        best = i;
        bestHead = h;
      }
    }
    if (best < 0) return;
    yield ids[best];
    advance(best);
  }
}

/**
 * An index intersection (MongoDB's AND_SORTED): `{ field: { $all: [v1, v2, ...] } }` on the first
 * field of an index whose later components give the requested order, answered by walking the
 * range of each value in parallel and keeping the entries present in every range. The ranges fix
 * the first component, and the rest of their keys (the later components, _id last) sort the same
 * way in each, so a document in every range has the same key suffix in each.
 */
export interface IntersectionPlan {
  index: Index;
  /** One range per distinct value. */
  ranges: KeyRange[];
  /** Per range: the length of its value's key component, which every key of the range starts with. */
  heads: number[];
  reverse: boolean;
  /** The intersection is exactly the filter's matches (the filter is the `$all` alone). */
  covered: boolean;
  score: number;
}

/**
 * The intersection plan of `index` for the filter's `$all` on its first field (at least two
 * distinct values), or null when it cannot give the requested order in one range per value.
 */
export function planIntersection(index: Index, a: FilterAnalysis, sort: SortKey[], filter: Filter): IntersectionPlan | null {
  const field = index.fields[0];
  const values = a.alls?.get(field);
  if (values === undefined || values.length < 2 || a.fields.has(field)) return null;
  const ranges: KeyRange[] = [];
  const heads: number[] = [];
  let reverse = false;
  let score = 0;
  for (const v of values) {
    // Each value's range is the plan of the field's equality with it (with the other fields'
    // bounds on the later components).
    const fields = new Map(a.fields);
    fields.set(field, { ...newConstraint(), points: [v] });
    const p = planIndex(index, { fields, opaque: a.opaque, alls: null }, sort, a.fields.size + 1);
    if (p === null || !p.ordered || p.ranges.length !== 1) return null;
    ranges.push(p.ranges[0]);
    heads.push(keyComponent(v, index.dirs[0]).length);
    reverse = p.reverse;
    score = p.score;
  }
  // The values' documents hold each of them: with two distinct values, in an array of the field
  // itself (a top-level field: no path through arrays of documents), which `$all` then matches.
  const cond = filter[field];
  const covered = !field.includes('.') && Object.keys(filter).length === 1 && isOperatorObject(cond) && Object.keys(cond).length === 1;
  return { index, ranges, heads, reverse, covered, score: score + 1 };
}

/** A cursor steps this many entries towards a target before it seeks it through the tree. */
const STEPS_BEFORE_SEEK = 8;

/**
 * Compares the rest of `a` from `ai` with the rest of `b` from `bi` as strings compare, char by
 * char: no substring to allocate (a slice compares through a runtime call, many times slower),
 * and suffixes of neighbouring entries differ within their first components' chars.
 */
function compareFrom(a: string, ai: number, b: string, bi: number): number {
  const al = a.length - ai;
  const bl = b.length - bi;
  const n = al < bl ? al : bl;
  for (let j = 0; j < n; j++) {
    const d = a.charCodeAt(ai + j) - b.charCodeAt(bi + j);
    if (d !== 0) return d;
  }
  return al - bl;
}

/**
 * Calls `visit` with the _id of every entry present in each range of the plan, in index order
 * (reversed when the plan is), until it returns false. Returns the index entries read.
 */
export function intersectIds(plan: IntersectionPlan, visit: (id: string) => boolean): number {
  const tree = plan.index.tree;
  const { ranges, heads } = plan;
  const sign = plan.reverse ? -1 : 1;
  const n = ranges.length;
  const cursors: KeyCursor[] = [];
  for (let i = 0; i < n; i++) {
    const range = ranges[i];
    const c = tree.cursor(range.start, range.end, plan.reverse);
    if (c.key === undefined) return i;
    cursors.push(c);
  }
  let read = n;
  // Leapfrog: the target is the furthest suffix seen (the key `target` from `targetAt` on); each
  // cursor in turn moves to it or past it, and when all agree, their entry is in every range.
  // Every cursor holds an entry here (an empty range returned above).
  let target = cursors[0]?.key;
  if (target === undefined) return read;
  let targetAt = heads[0];
  let agreed = 1;
  let i = 0;
  for (;;) {
    i = i + 1 === n ? 0 : i + 1;
    const c = cursors[i];
    const head = heads[i];
    let key = c.key;
    if (key === undefined) return read;
    let cmp = compareFrom(key, head, target, targetAt) * sign;
    let steps = 0;
    while (cmp < 0) {
      if (++steps > STEPS_BEFORE_SEEK) c.seek(key.slice(0, head) + target.slice(targetAt));
      else c.next();
      const next = c.key;
      if (next === undefined) return read;
      read++;
      key = next;
      cmp = compareFrom(key, head, target, targetAt) * sign;
    }
    if (cmp > 0) {
      target = key;
      targetAt = head;
      agreed = 1;
      continue;
    }
    if (++agreed < n) continue;
    // Every range holds this entry.
    if (!visit(c.value())) return read;
    c.next();
    const next = c.key;
    if (next === undefined) return read;
    read++;
    target = next;
    targetAt = head;
    agreed = 1;
  }
}
