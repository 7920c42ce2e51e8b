// MongoDB update semantics on plain objects: a fast path of our own for the operators that
// projections use on replay (mingo's updater costs ~70-150 µs per call), with a faster path still
// for the commonest shape (top-level $set / $inc / $setOnInsert / $unset), and mingo's updater for
// the rest. Also the BSON comparison order, its string encoding for index keys, and the value copy
// shared with the memory adapter.
import { update as mingoUpdate } from 'mingo';
import { BoundedCache } from '../../events/kernel/cache.ts';
import type { Update } from './port.ts';
import { NO_FIELDS, hasFields, isRecord, type Obj } from './records.ts';

/** A malformed update, or one that does not fit the document (MongoDB rejects it as a write error). */
export class UpdateError extends Error {
  readonly code = 'bad_update';
  readonly status = 500;
}

/** A value that only sorts (MinKey, MaxKey, the end of the strings, the key of an empty array). */
export class KeyBound {
  constructor(
    readonly rank: number,
    readonly label: string,
  ) {}
}
export const MIN_KEY = new KeyBound(0, 'MinKey');
/** MongoDB indexes an empty array as `undefined`, which sorts before null. */
export const EMPTY_ARRAY_KEY = new KeyBound(0.5, 'EmptyArray');
export const STRING_END = new KeyBound(3.5, 'StringEnd');
export const MAX_KEY = new KeyBound(13, 'MaxKey');

// BSON type order: MinKey, null (and missing), numbers, strings, objects, arrays, binary,
// ObjectId, booleans, dates, timestamps, regular expressions, MaxKey.
export function typeRank(v: unknown): number {
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
    case 'undefined':
      return 1;
    case 'object':
      if (v === null) return 1;
      if (Array.isArray(v)) return 5;
      if (v instanceof KeyBound) return v.rank;
      if (v instanceof Date) return 9;
      if (v instanceof RegExp) return 11;
      if (v instanceof Uint8Array) return 6;
      return 4;
    case 'function':
    case 'symbol':
      return 4;
  }
}

function compareNumbers(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  // NaN sorts before every other number and equals itself.
  const an = a !== a;
  const bn = b !== b;
  return an === bn ? 0 : an ? -1 : 1;
}

/** Compares two values in MongoDB's BSON order (objects compare field by field, in field order). */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'string') {
    if (typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  } else if (typeof a === 'number' && typeof b === 'number') {
    return compareNumbers(a, b);
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 2:
      return compareNumbers(Number(a), Number(b));
    case 4:
      // Objects; functions and symbols too, as the objects of their own fields.
      return compareObjects(hasFields(a) ? a : NO_FIELDS, hasFields(b) ? b : NO_FIELDS);
    case 5:
      return Array.isArray(a) && Array.isArray(b) ? compareArrays(a, b) : 0;
    case 6:
      return a instanceof Uint8Array && b instanceof Uint8Array ? compareBytes(a, b) : 0;
    case 8:
      return a === b ? 0 : a ? 1 : -1;
    case 9:
      return a instanceof Date && b instanceof Date ? compareNumbers(a.getTime(), b.getTime()) : 0;
    case 11:
      return compareValues(String(a), String(b));
    default:
      return 0;
  }
}

function compareObjects(a: Obj, b: Obj): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]];
    const vb = b[kb[i]];
    const r = typeRank(va) - typeRank(vb);
    if (r !== 0) return r < 0 ? -1 : 1;
    if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    const c = compareValues(va, vb);
    if (c !== 0) return c;
  }
  return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** BSON equality: numbers by value, objects field by field in order (as MongoDB compares them). */
export function valuesEqual(a: unknown, b: unknown): boolean {
  return a === b || compareValues(a, b) === 0;
}

/** An object of the plain prototype (or none): a document or a sub-document, not a class instance. */
function hasPlainPrototype(v: object): v is Obj {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function isPlainObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && hasPlainPrototype(v);
}

/**
 * Deep copy of a JSON-like value. `undefined` inside objects and arrays becomes null, as the
 * MongoDB driver serialises it; class instances other than Date are shared (treated as immutable).
 */
export function cloneValue<T>(v: T): T {
  // The copy has the original's shape: the one place the store takes a value's type on trust
  // (undefined fields inside come back as null, as they do from MongoDB).
  return cloneUnknown(v) as T;
}

function cloneUnknown(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      out[i] = e === undefined ? null : typeof e === 'object' && e !== null ? cloneUnknown(e) : e;
    }
    return out;
  }
  if (v instanceof Date) return new Date(v.getTime());
  if (!hasPlainPrototype(v)) return v;
  const out: Obj = {};
  for (const k in v) {
    const e = v[k];
    const c = e === undefined ? null : typeof e === 'object' && e !== null ? cloneUnknown(e) : e;
    if (k === '__proto__') Object.defineProperty(out, k, { value: c, enumerable: true, writable: true, configurable: true });
    else out[k] = c;
  }
  return out;
}

// Projections and queries use a small set of paths; the bound only guards against a caller
// that builds paths from data.
const pathCache = new BoundedCache<string, string[]>({ max: 20_000 });
const splitOnDots = (path: string) => path.split('.');
/** `a.b.c` -> ['a', 'b', 'c'], memoised. */
export function splitPath(path: string): string[] {
  return pathCache.remember(path, splitOnDots);
}

function arrayIndex(seg: string): number {
  const n = seg.length;
  if (n === 0 || n > 9) return -1;
  for (let i = 0; i < n; i++) {
    const c = seg.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  return Number(seg);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

// ---- undo log: every mutation records how to revert it, so a failing update leaves the
// document as it was (MongoDB applies an update atomically or not at all).
// The log is four parallel arrays (one entry per mutation at the same index), reused across updates.
const LENGTH = Symbol('length');
/** What a path's parent is: a (sub-)document or an array. */
type Container = Obj | unknown[];
const undoContainers: Container[] = [];
const undoKeys: Array<string | number | typeof LENGTH> = [];
const undoHad: boolean[] = [];
const undoOld: unknown[] = [];
let undoTop = 0;

function record(container: Container, key: string | number | typeof LENGTH, had: boolean, old: unknown): void {
  const i = undoTop;
  undoContainers[i] = container;
  undoKeys[i] = key;
  undoHad[i] = had;
  undoOld[i] = old;
  undoTop = i + 1;
}

function rollback(): void {
  for (let i = undoTop - 1; i >= 0; i--) {
    const c = undoContainers[i];
    const k = undoKeys[i];
    const old = undoOld[i];
    if (k === LENGTH) {
      if (Array.isArray(c) && typeof old === 'number') c.length = old;
    } else if (undoHad[i]) Reflect.set(c, k, old);
    else Reflect.deleteProperty(c, k);
  }
  clearUndoLog();
}

/** Drops the log's references to replaced values (and containers). */
function clearUndoLog(): void {
  undoContainers.length = 0;
  undoKeys.length = 0;
  undoHad.length = 0;
  undoOld.length = 0;
  undoTop = 0;
}

/** A value a path can descend into (Dates are leaves; any other object is read by its fields). */
function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null && !(v instanceof Date);
}

function getAt(parent: Container, key: string): unknown {
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    return i < 0 ? undefined : parent[i];
  }
  const v = parent[key];
  return typeof v === 'function' ? undefined : v;
}

function setAt(parent: Container, key: string, value: unknown, path: string): void {
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    if (i < 0) throw new UpdateError(`Cannot create field '${key}' in an array (path '${path}')`);
    if (i >= parent.length) {
      record(parent, LENGTH, true, parent.length);
      while (parent.length < i) parent.push(null);
      parent.push(value);
      return;
    }
    record(parent, i, true, parent[i]);
    parent[i] = value;
    return;
  }
  const old = parent[key];
  record(parent, key, old !== undefined && typeof old !== 'function', old);
  parent[key] = value;
}

/** The object holding the last segment of `segs`, creating missing intermediate objects. */
function parentForWrite(doc: Obj, segs: string[], path: string): Container {
  let cur: Container = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i];
    const next = getAt(cur, seg);
    if (next === undefined) {
      const created = {};
      setAt(cur, seg, created, path);
      cur = created;
    } else if (!isContainer(next)) {
      throw new UpdateError(`Cannot create field '${segs[i + 1]}' in element {${seg}: ${describe(next)}} (path '${path}')`);
    } else {
      cur = next;
    }
  }
  return cur;
}

/** The object holding the last segment of `segs`, or undefined when the path does not exist. */
function parentForRead(doc: Obj, segs: string[]): Container | undefined {
  let cur: Container = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    const next = getAt(cur, segs[i]);
    if (!isContainer(next)) return undefined;
    cur = next;
  }
  return cur;
}

function opSet(doc: Obj, path: string, raw: unknown): boolean {
  const value = raw === undefined ? null : raw;
  const segs = splitPath(path);
  const parent = parentForWrite(doc, segs, path);
  const key = segs[segs.length - 1];
  const old = getAt(parent, key);
  if (old !== undefined && (old === value || (typeof value === 'object' && valuesEqual(old, value)))) return false;
  setAt(parent, key, cloneValue(value), path);
  return true;
}

function opUnset(doc: Obj, path: string): boolean {
  const segs = splitPath(path);
  const parent = parentForRead(doc, segs);
  if (parent === undefined) return false;
  const key = segs[segs.length - 1];
  if (Array.isArray(parent)) {
    const i = arrayIndex(key);
    if (i < 0 || i >= parent.length || parent[i] === null) return false;
    record(parent, i, true, parent[i]);
    parent[i] = null;
    return true;
  }
  const old = getAt(parent, key);
  if (old === undefined) return false;
  record(parent, key, true, old);
  delete parent[key];
  return true;
}

function opInc(doc: Obj, path: string, by: unknown): boolean {
  if (typeof by !== 'number') throw new UpdateError(`Cannot increment with non-numeric argument: {${path}: ${describe(by)}}`);
  const segs = splitPath(path);
  const parent = parentForWrite(doc, segs, path);
  const key = segs[segs.length - 1];
  const old = getAt(parent, key);
  if (old === undefined) {
    setAt(parent, key, by, path);
    return true;
  }
  if (typeof old !== 'number') throw new UpdateError(`Cannot apply $inc to a value of non-numeric type ${describe(old)} (path '${path}')`);
  if (by === 0) return false;
  setAt(parent, key, old + by, path);
  return true;
}

function opMinMax(doc: Obj, path: string, value: unknown, sign: 1 | -1): boolean {
  const segs = splitPath(path);
  const parent = parentForWrite(doc, segs, path);
  const key = segs[segs.length - 1];
  const old = getAt(parent, key);
  if (old !== undefined && compareValues(value, old) * sign <= 0) return false;
  setAt(parent, key, value === undefined ? null : cloneValue(value), path);
  return true;
}

function arrayTarget(doc: Obj, path: string, op: string): { parent: Container; key: string; arr: unknown[] | undefined } {
  const segs = splitPath(path);
  const parent = parentForWrite(doc, segs, path);
  const key = segs[segs.length - 1];
  const old = getAt(parent, key);
  if (old !== undefined && !Array.isArray(old)) {
    throw new UpdateError(`The field '${path}' must be an array but is of type ${describe(old)}; ${op} refused`);
  }
  return { parent, key, arr: old };
}

const PUSH_MODIFIERS = new Set(['$each', '$slice', '$position', '$sort']);

function sortValue(v: unknown, path: string[] | null): unknown {
  if (path === null) return v;
  let cur = v;
  for (const seg of path) {
    if (!isPlainObject(cur)) return null;
    cur = cur[seg];
  }
  return cur === undefined ? null : cur;
}

function pushSort(arr: unknown[], spec: unknown): void {
  if (spec === 1 || spec === -1) {
    arr.sort((a, b) => compareValues(a, b) * spec);
    return;
  }
  if (!isPlainObject(spec)) throw new UpdateError('The $sort in $push must be 1, -1 or a sort document');
  const keys = Object.keys(spec).map((k) => ({ path: splitPath(k), dir: spec[k] === -1 ? -1 : 1 }));
  arr.sort((a, b) => {
    for (const { path, dir } of keys) {
      const c = compareValues(sortValue(a, path), sortValue(b, path));
      if (c !== 0) return c * dir;
    }
    return 0;
  });
}

function opPush(doc: Obj, path: string, spec: unknown): boolean {
  let items: unknown[];
  let slice: number | undefined;
  let position: number | undefined;
  let sort: unknown;
  if (isPlainObject(spec) && '$each' in spec) {
    for (const k of Object.keys(spec)) if (!PUSH_MODIFIERS.has(k)) throw new UpdateError(`Unrecognized clause in $push: ${k}`);
    if (!Array.isArray(spec.$each)) throw new UpdateError('The argument to $each in $push must be an array');
    items = spec.$each;
    if (spec.$slice !== undefined) {
      if (typeof spec.$slice !== 'number' || !Number.isInteger(spec.$slice)) throw new UpdateError('The value for $slice must be an integer');
      slice = spec.$slice;
    }
    if (spec.$position !== undefined) {
      if (typeof spec.$position !== 'number' || !Number.isInteger(spec.$position)) throw new UpdateError('The value for $position must be an integer');
      position = spec.$position;
    }
    sort = spec.$sort;
  } else {
    items = [spec];
  }
  const { parent, key, arr } = arrayTarget(doc, path, '$push');
  if (arr !== undefined && slice === undefined && position === undefined && sort === undefined) {
    if (items.length === 0) return false;
    record(arr, LENGTH, true, arr.length);
    for (const it of items) arr.push(it === undefined ? null : cloneValue(it));
    return true;
  }
  const next = arr === undefined ? [] : arr.slice();
  const added = items.map((it) => (it === undefined ? null : cloneValue(it)));
  let at = position === undefined ? next.length : position < 0 ? Math.max(0, next.length + position) : Math.min(position, next.length);
  for (const it of added) next.splice(at++, 0, it);
  if (sort !== undefined) pushSort(next, sort);
  if (slice !== undefined) {
    if (slice >= 0) next.length = Math.min(next.length, slice);
    else next.splice(0, Math.max(0, next.length + slice));
  }
  if (arr !== undefined && valuesEqual(arr, next)) return false;
  setAt(parent, key, next, path);
  return true;
}

function opAddToSet(doc: Obj, path: string, spec: unknown): boolean {
  let items: unknown[];
  if (isPlainObject(spec) && '$each' in spec) {
    if (!Array.isArray(spec.$each)) throw new UpdateError('The argument to $each in $addToSet must be an array');
    items = spec.$each;
  } else {
    items = [spec];
  }
  const { parent, key, arr } = arrayTarget(doc, path, '$addToSet');
  const target = arr ?? [];
  let changed = false;
  for (const raw of items) {
    const it = raw === undefined ? null : raw;
    const present = typeof it === 'object' && it !== null ? target.some((x) => valuesEqual(x, it)) : target.includes(it);
    if (present) continue;
    if (!changed && arr !== undefined) record(arr, LENGTH, true, arr.length);
    changed = true;
    target.push(cloneValue(it));
  }
  if (arr === undefined) {
    setAt(parent, key, target, path);
    return true;
  }
  return changed;
}

function isPrimitive(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function' && v !== undefined);
}

/** A field of an element matches a value the way a query does: equal, or an array holding it. */
function fieldMatches(field: unknown, v: unknown): boolean {
  if (v === null) return field === null || field === undefined || (Array.isArray(field) && field.includes(null));
  if (field === v) return true;
  return Array.isArray(field) && field.includes(v);
}

function elementMatches(x: unknown, v: unknown): boolean {
  return valuesEqual(x, v) || (Array.isArray(x) && x.some((e) => valuesEqual(e, v)));
}

/** The $pull conditions of the fast path; anything else goes to mingo. */
function pullPredicate(cond: unknown): ((x: unknown) => boolean) | null {
  if (!isPlainObject(cond)) {
    if (cond instanceof RegExp) return null;
    return (x) => valuesEqual(x, cond);
  }
  const keys = Object.keys(cond);
  if (keys.length === 0) return (x) => isPlainObject(x);
  const ops = keys.filter((k) => k.charCodeAt(0) === 36);
  if (ops.length === 0) {
    for (const k of keys) if (k.includes('.') || !isPrimitive(cond[k])) return null;
    return (x) => isPlainObject(x) && keys.every((k) => fieldMatches(x[k], cond[k]));
  }
  if (keys.length !== 1) return null;
  const v = cond[keys[0]];
  if (keys[0] === '$eq' && !(v instanceof RegExp) && !isPlainObject(v)) return (x) => elementMatches(x, v);
  if (keys[0] === '$in' && Array.isArray(v) && v.every((e) => !(e instanceof RegExp) && !isPlainObject(e))) {
    return (x) => v.some((e) => elementMatches(x, e));
  }
  return null;
}

function opPull(doc: Obj, path: string, pred: (x: unknown) => boolean): boolean {
  const segs = splitPath(path);
  const parent = parentForRead(doc, segs);
  if (parent === undefined) return false;
  const key = segs[segs.length - 1];
  const arr = getAt(parent, key);
  if (arr === undefined) return false;
  if (!Array.isArray(arr)) throw new UpdateError(`Cannot apply $pull to a non-array value (path '${path}')`);
  const next = arr.filter((x) => !pred(x));
  if (next.length === arr.length) return false;
  setAt(parent, key, next, path);
  return true;
}

const FAST_OPS = new Set(['$set', '$unset', '$inc', '$min', '$max', '$push', '$addToSet', '$pull', '$setOnInsert']);

function conflictAt(a: string, b: string): string | null {
  if (a === b) return a;
  if (a.length < b.length) return b.charCodeAt(a.length) === 46 && b.startsWith(a) ? a : null;
  return a.charCodeAt(b.length) === 46 && a.startsWith(b) ? b : null;
}

function checkConflicts(paths: string[], n: number): void {
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i; j++) {
      const at = conflictAt(paths[i], paths[j]);
      if (at !== null) throw new UpdateError(`Updating the path '${paths[i]}' would create a conflict at '${at}'`);
    }
  }
}

const PATH_FALLBACK = 1;
const PATH_ID = 2;
const pathFlags = new BoundedCache<string, number>({ max: 20_000 });

/** Validates a path once: 1 = positional (mingo), 2 = touches _id; throws when it is malformed. */
function flagsOf(path: string): number {
  let f = pathFlags.get(path);
  if (f !== undefined) return f;
  if (path.length === 0 || path.includes('..') || path.charCodeAt(0) === 46 || path.charCodeAt(path.length - 1) === 46) {
    throw new UpdateError(`An update path '${path}' is not valid`);
  }
  if (path.includes('__proto__')) throw new UpdateError(`An update path '${path}' is not allowed`);
  f = (path.includes('$') ? PATH_FALLBACK : 0) | (path === '_id' || path.startsWith('_id.') ? PATH_ID : 0);
  pathFlags.set(path, f);
  return f;
}

const pathList: string[] = [];

export interface ApplyOptions {
  /** True when the document is being created by an upsert ($setOnInsert applies). */
  isInsert: boolean;
  /** The filter that selected the document (needed only by the positional `$` operator). */
  filter?: Record<string, unknown>;
}

/**
 * Applies a MongoDB update document to `doc` in place; returns whether the document changed.
 * Throws UpdateError (leaving `doc` untouched) when MongoDB would reject the update.
 */
export function applyUpdate(doc: Record<string, unknown>, update: Update, opts: ApplyOptions): boolean {
  const r = applySimpleUpdate(doc, update, opts.isInsert);
  return r === NOT_SIMPLE ? applyUpdateGeneral(doc, update, opts) : r;
}

// ---- the simple-update fast path: $set / $setOnInsert / $inc / $unset of top-level fields,
// the shape of almost every projection write. Such an update cannot conflict inside one
// operator, and every way it can fail is checked before the first write, so it needs neither
// path splitting, nor the conflict matrix, nor the undo log. Anything else (or anything that
// would fail) returns NOT_SIMPLE and takes the general path below, which gives the same result.

/** The result of applySimpleUpdate when the update is not of the simple shape. */
export const NOT_SIMPLE = 2;

const OP_SET = 1;
const OP_SET_ON_INSERT = 2;
const OP_INC = 3;
const OP_UNSET = 4;

function simpleOp(op: string): number {
  switch (op) {
    case '$set':
      return OP_SET;
    case '$inc':
      return OP_INC;
    case '$setOnInsert':
      return OP_SET_ON_INSERT;
    case '$unset':
      return OP_UNSET;
    default:
      return 0;
  }
}

const simpleFields = new BoundedCache<string, boolean>({ max: 20_000 });
const isSimpleFieldNow = (path: string) => path.length > 0 && !path.includes('.') && !path.includes('$') && path !== '_id' && path !== '__proto__';

/** A top-level field name that needs none of the general path's checks (memoised). */
function isSimpleField(path: string): boolean {
  return simpleFields.remember(path, isSimpleFieldNow);
}

/** The stored value of a top-level field as the general path reads it (functions are absent). */
function ownValue(doc: Obj, key: string): unknown {
  const v = doc[key];
  return typeof v === 'function' ? undefined : v;
}

/**
 * Is `update` a simple update (see above) that applies to `doc` without error? `doc` null: a
 * document that holds only its _id.
 */
function isSimpleUpdate(update: Update, doc: Obj | null): boolean {
  let ops = 0;
  for (const op in update) {
    const kind = simpleOp(op);
    if (kind === 0) return false;
    const spec = update[op];
    if (!isPlainObject(spec)) return false;
    for (const path in spec) {
      if (!isSimpleField(path)) return false;
      if (ops > 0 && hasSameField(update, op, path)) return false;
      if (kind === OP_INC) {
        if (typeof spec[path] !== 'number') return false;
        if (doc !== null) {
          const old = ownValue(doc, path);
          if (old !== undefined && typeof old !== 'number') return false;
        }
      }
    }
    ops++;
  }
  return ops > 0;
}

/**
 * Applies a simple update (see above) to `doc`; returns whether it changed the document, or
 * NOT_SIMPLE (having changed nothing) when the update needs the general path.
 */
export function applySimpleUpdate(doc: Obj, update: Update, isInsert: boolean): boolean | typeof NOT_SIMPLE {
  if (!isSimpleUpdate(update, doc)) return NOT_SIMPLE;

  // Application: in operator order, then field order (the order the general path writes in).
  let changed = false;
  for (const op in update) {
    const spec = update[op];
    if (!isRecord(spec)) continue; // checked by isSimpleUpdate
    switch (simpleOp(op)) {
      case OP_SET_ON_INSERT:
        if (!isInsert) break;
      // falls through
      case OP_SET:
        for (const k in spec) {
          const raw = spec[k];
          const value = raw === undefined ? null : raw;
          const old = ownValue(doc, k);
          if (old !== undefined && (old === value || (typeof value === 'object' && valuesEqual(old, value)))) continue;
          doc[k] = typeof value === 'object' && value !== null ? cloneValue(value) : value;
          changed = true;
        }
        break;
      case OP_INC:
        for (const k in spec) {
          const by = spec[k];
          if (typeof by !== 'number') continue; // checked by isSimpleUpdate
          // isSimpleUpdate checked the field is a number or absent (a function reads as absent).
          const old = doc[k];
          if (typeof old !== 'number') doc[k] = by;
          else if (by === 0) continue;
          else doc[k] = old + by;
          changed = true;
        }
        break;
      case OP_UNSET:
        for (const k in spec) {
          if (ownValue(doc, k) === undefined) continue;
          delete doc[k];
          changed = true;
        }
        break;
    }
  }
  return changed;
}

/**
 * The document an upsert of a simple update creates when no document `id` exists: the same
 * document as applying the update to `{ _id: id }` with isInsert, built faster (the first
 * operator's fields are copied in one go). NOT_SIMPLE when the update needs the general path.
 */
export function simpleInsert(id: unknown, update: Update): Obj | typeof NOT_SIMPLE {
  if (!isSimpleUpdate(update, null)) return NOT_SIMPLE;
  let doc: Obj | undefined;
  for (const op in update) {
    const spec = update[op];
    if (!isRecord(spec)) continue; // checked by isSimpleUpdate
    const kind = simpleOp(op);
    if (kind === OP_UNSET) continue;
    if (doc === undefined) {
      // One copy of every field (V8 copies an object's properties far faster than it adds
      // them one at a time), then the values that must not be shared or stored as undefined.
      doc = { _id: id, ...spec };
      if (kind === OP_INC) continue;
      for (const k in spec) {
        const v = spec[k];
        if (v === undefined) doc[k] = null;
        else if (typeof v === 'object' && v !== null) doc[k] = cloneValue(v);
      }
      continue;
    }
    for (const k in spec) {
      const v = spec[k];
      doc[k] = v === undefined ? null : typeof v === 'object' && v !== null ? cloneValue(v) : v;
    }
  }
  return doc ?? { _id: id };
}

/** Does an operator before `op` in `update` name `path` too (a conflict)? */
function hasSameField(update: Update, op: string, path: string): boolean {
  for (const other in update) {
    if (other === op) return false;
    if (Object.prototype.hasOwnProperty.call(update[other], path)) return true;
  }
  return false;
}

/** applyUpdate without the fast path: every operator, positional paths, conflict checks. */
export function applyUpdateGeneral(doc: Record<string, unknown>, update: Update, opts: ApplyOptions): boolean {
  let hasOp = false;
  let hasField = false;
  let fast = true;
  let n = 0;
  for (const op in update) {
    if (op.charCodeAt(0) !== 36) {
      hasField = true;
      continue;
    }
    hasOp = true;
    if (!FAST_OPS.has(op)) fast = false;
    const spec = update[op];
    if (!isPlainObject(spec)) throw new UpdateError(`Modifiers operate on fields but we found ${describe(spec)} for ${op}`);
    for (const path in spec) {
      const flags = flagsOf(path);
      if (flags !== 0) {
        if (flags & PATH_FALLBACK) fast = false;
        if (flags & PATH_ID) checkIdUpdate(doc, op, path, spec[path], opts);
      }
      if (op === '$pull' && fast && pullPredicate(spec[path]) === null) fast = false;
      pathList[n++] = path;
    }
  }
  if (hasOp && hasField) throw new UpdateError('An update document mixes operators and plain fields');
  if (!hasOp) return hasField ? replaceDocument(doc, update) : false;
  if (n > 1) checkConflicts(pathList, n);
  if (!fast) return fallbackUpdate(doc, update, opts);

  let changed = false;
  try {
    for (const op in update) {
      const spec = update[op];
      if (!isRecord(spec)) continue; // checked above
      switch (op) {
        case '$set':
          for (const p in spec) changed = opSet(doc, p, spec[p]) || changed;
          break;
        case '$setOnInsert':
          if (opts.isInsert) for (const p in spec) changed = opSet(doc, p, spec[p]) || changed;
          break;
        case '$unset':
          for (const p in spec) changed = opUnset(doc, p) || changed;
          break;
        case '$inc':
          for (const p in spec) changed = opInc(doc, p, spec[p]) || changed;
          break;
        case '$min':
          for (const p in spec) changed = opMinMax(doc, p, spec[p], -1) || changed;
          break;
        case '$max':
          for (const p in spec) changed = opMinMax(doc, p, spec[p], 1) || changed;
          break;
        case '$push':
          for (const p in spec) changed = opPush(doc, p, spec[p]) || changed;
          break;
        case '$addToSet':
          for (const p in spec) changed = opAddToSet(doc, p, spec[p]) || changed;
          break;
        case '$pull':
          for (const p in spec) {
            const pred = pullPredicate(spec[p]); // not null: checked above
            if (pred !== null) changed = opPull(doc, p, pred) || changed;
          }
          break;
      }
    }
  } catch (err) {
    rollback();
    throw err;
  }
  // Drop references to replaced values unless the log is small (then they are overwritten soon).
  if (undoTop > 16) clearUndoLog();
  undoTop = 0;
  return changed;
}

function checkIdUpdate(doc: Obj, op: string, path: string, value: unknown, opts: ApplyOptions): void {
  if (op === '$setOnInsert' && !opts.isInsert) return;
  const settable = op === '$set' || op === '$setOnInsert';
  if (settable && path === '_id' && (doc._id === undefined || valuesEqual(doc._id, value))) return;
  throw new UpdateError(`Performing an update on the path '${path}' would modify the immutable field '_id'`);
}

function replaceDocument(doc: Obj, replacement: Obj): boolean {
  if (replacement._id !== undefined && doc._id !== undefined && !valuesEqual(replacement._id, doc._id)) {
    throw new UpdateError('The _id field cannot be changed by a replacement document');
  }
  const next: Obj = doc._id === undefined ? {} : { _id: doc._id };
  for (const k in replacement) if (k !== '_id' || doc._id === undefined) next[k] = cloneValue(replacement[k]);
  if (valuesEqual(doc, next)) return false;
  replaceFields(doc, next);
  return true;
}

function replaceFields(doc: Obj, from: Obj): void {
  for (const k of Object.keys(doc)) delete doc[k];
  for (const k of Object.keys(from)) {
    if (k === '__proto__') Object.defineProperty(doc, k, { value: from[k], enumerable: true, writable: true, configurable: true });
    else doc[k] = from[k];
  }
}

function fallbackUpdate(doc: Obj, update: Update, opts: ApplyOptions): boolean {
  const { $setOnInsert, ...rest } = update;
  const work = cloneValue(doc);
  let changed = false;
  if (opts.isInsert && $setOnInsert !== undefined) changed = applyUpdate(work, { $set: $setOnInsert }, opts);
  try {
    const modified = mingoUpdate(work, rest, undefined, opts.filter, { cloneMode: 'deep' });
    changed = modified.length > 0 || changed;
  } catch (err) {
    throw new UpdateError(err instanceof Error ? err.message : String(err));
  }
  if (!changed) return false;
  if (!valuesEqual(work._id, doc._id)) throw new UpdateError("Performing an update on the path '_id' would modify the immutable field '_id'");
  replaceFields(doc, work);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Index keys: BSON order as plain string order. A compound index key is the concatenation of
// one encoded component per indexed field (and the _id last), so the B-tree compares keys with
// the engine's string comparison instead of walking arrays of values. Each component is
// prefix-free (no encoding is a proper prefix of another) and order-preserving; a descending
// component is complemented (every char c becomes 0xff - c), which reverses its order. All
// chars are below 0x100, so keys are one-byte strings, which V8 compares fastest.
//
//   component := tag payload           tag = 0x10 + 2 * typeRank (0x10 MinKey ... 0x2a MaxKey)
//   number    := 8 bytes, IEEE 754 big-endian, sign bit flipped (all bits when negative);
//                -0 is 0, NaN is eight 0x00 (below -Infinity)
//   string    := each UTF-16 unit u: u < 2 -> 0x01 (u + 1); u < 0xf0 -> u; else 0xf0 hi lo;
//                then 0x00
//   boolean   := 0x00 | 0x01            date := number (getTime)     regexp := string (source)
//   object    := per field: 0x02 tag(value) string(name) component(value); then 0x01
//   array     := per element: 0x02 component(element); then 0x01
//   binary    := number(length) bytes
//   MinKey, MaxKey, the end of the strings, the key of an empty array: the tag alone

/** Sorts after every key that extends the same prefix (a range's open upper end). */
export const KEY_LAST = '\u00ff';

const TAG_NULL = '\u0012';
const TAG_STRING = '\u0016';
const TAG_OBJECT = '\u0018';
const TAG_ARRAY = '\u001a';
const TAG_REGEXP = '\u0026';
const KEY_FALSE = '\u0020\u0000';
const KEY_TRUE = '\u0020\u0001';
const KEY_FALSE_DESC = '\u00df\u00ff';
const KEY_TRUE_DESC = '\u00df\u00fe';
const KEY_NULL_DESC = '\u00ed';

function tagOf(rank: number): string {
  return String.fromCharCode(0x10 + rank * 2);
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const NAN_KEY = '\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000';

/** tag + 8 order-preserving bytes; `mask` 0xff complements them (descending). */
function numberKey(tag: number, v: number, mask: number): string {
  if (v !== v) return mask === 0 ? String.fromCharCode(tag) + NAN_KEY : complementKey(String.fromCharCode(tag) + NAN_KEY);
  f64[0] = v === 0 ? 0 : v;
  const b = f64Bytes;
  let b0, b1, b2, b3, b4, b5, b6, b7;
  if (LITTLE_ENDIAN) {
    b0 = b[7];
    b1 = b[6];
    b2 = b[5];
    b3 = b[4];
    b4 = b[3];
    b5 = b[2];
    b6 = b[1];
    b7 = b[0]; // prettier-ignore
  } else {
    b0 = b[0];
    b1 = b[1];
    b2 = b[2];
    b3 = b[3];
    b4 = b[4];
    b5 = b[5];
    b6 = b[6];
    b7 = b[7]; // prettier-ignore
  }
  // Positive: flip the sign bit. Negative: flip every bit. Then the direction's mask.
  const x = b0 & 0x80 ? 0xff ^ mask : mask;
  b0 = b0 & 0x80 ? b0 ^ 0xff ^ mask : b0 ^ 0x80 ^ mask;
  return String.fromCharCode(tag ^ mask, b0, b1 ^ x, b2 ^ x, b3 ^ x, b4 ^ x, b5 ^ x, b6 ^ x, b7 ^ x);
}

/** The string payload (terminated); the string itself plus 0x00 when no unit needs escaping. */
function stringPayload(s: string): string {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 2 || c >= 0xf0) return escapedStringPayload(s);
  }
  return s + '\u0000';
}

function escapedStringPayload(s: string): string {
  const units: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 2) units.push(1, c + 1);
    else if (c < 0xf0) units.push(c);
    else units.push(0xf0, c >>> 8, c & 0xff);
  }
  units.push(0);
  return fromUnits(units);
}

function fromUnits(units: number[]): string {
  let out = '';
  for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode.apply(null, units.slice(i, i + 8192));
  return out;
}

const complementUnits: number[] = [];
/** Every char c of an encoded key becomes 0xff - c: the same order, reversed. */
export function complementKey(s: string): string {
  const n = s.length;
  if (n > 8192) {
    const units = new Array<number>(n);
    for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i) ^ 0xff;
    return fromUnits(units);
  }
  const units = complementUnits;
  units.length = n;
  for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i) ^ 0xff;
  return String.fromCharCode.apply(null, units);
}

/** The ascending key component of a value (see the grammar above). */
function keyOf(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return TAG_STRING + stringPayload(v);
    case 'number':
      return numberKey(0x14, v, 0);
    case 'boolean':
      return v ? KEY_TRUE : KEY_FALSE;
    case 'undefined':
      return TAG_NULL;
    case 'bigint':
      return numberKey(0x14, Number(v), 0);
    case 'object': {
      if (v === null) return TAG_NULL;
      if (Array.isArray(v)) {
        let out = TAG_ARRAY;
        for (let i = 0; i < v.length; i++) out += '\u0002' + keyOf(v[i]);
        return out + '\u0001';
      }
      if (v instanceof KeyBound) return tagOf(v.rank);
      if (v instanceof Date) return numberKey(0x22, v.getTime(), 0);
      if (v instanceof RegExp) return TAG_REGEXP + stringPayload(String(v));
      if (v instanceof Uint8Array) {
        const units = Array.from(v);
        return numberKey(0x1c, v.length, 0) + fromUnits(units);
      }
      return objectKey(hasFields(v) ? v : NO_FIELDS);
    }
    case 'function':
    case 'symbol':
      // compareValues treats them as objects (of their own keys).
      return objectKey(hasFields(v) ? v : NO_FIELDS);
  }
}

function objectKey(o: Obj): string {
  let out = TAG_OBJECT;
  for (const k of Object.keys(o)) {
    const v = o[k];
    out += '\u0002' + tagOf(typeRank(v)) + stringPayload(k) + keyOf(v);
  }
  return out + '\u0001';
}

/**
 * The key component of `v` in an index field of direction `dir` (1 or -1). Equal values (in
 * compareValues' sense) give equal strings; otherwise the strings compare as the values do
 * (reversed for -1), whatever follows them in a compound key.
 */
export function keyComponent(v: unknown, dir: number): string {
  if (dir !== -1) return keyOf(v);
  switch (typeof v) {
    case 'number':
      return numberKey(0x14, v, 0xff);
    case 'boolean':
      return v ? KEY_TRUE_DESC : KEY_FALSE_DESC;
    case 'undefined':
      return KEY_NULL_DESC;
    case 'object':
      if (v === null) return KEY_NULL_DESC;
      if (v instanceof Date) return numberKey(0x22, v.getTime(), 0xff);
      break;
    case 'string':
    case 'bigint':
    case 'function':
    case 'symbol':
      break;
  }
  return complementKey(keyOf(v));
}
