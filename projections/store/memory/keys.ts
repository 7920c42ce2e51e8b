// Index keys of the in-memory read store: the key values of indexed paths (one entry per distinct
// array element), their encoding as one string per entry (updates.ts, keyComponent: the tree
// compares with plain string comparison), and the Index that keeps a collection's entries in a
// B-tree (trees.ts).
import { DuplicateKeyError, type Doc, type IndexSpec } from '../port.ts';
import { KeyTree, type IndexTree } from '../trees.ts';
import { isRecord } from '../records.ts';
import { EMPTY_ARRAY_KEY, keyComponent, valuesEqual } from '../updates.ts';

export type Obj = Record<string, unknown>;

/** A string, number (not NaN) or boolean: the values a simple filter tests and a `$all` an index intersection answers may hold. */
export type Scalar = string | number | boolean;
export const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));

/** Distinct values of an indexed path that runs through arrays (one index entry per value). */
export class Multi {
  constructor(readonly values: unknown[]) {}
}

export function pushDistinct(out: unknown[], v: unknown): void {
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
      if (isRecord(e) && !Array.isArray(e)) {
        collectPathValues(e[segs[i]], segs, i + 1, out);
        any = true;
      }
    }
    if (!any && idx < 0) pushDistinct(out, null);
    return;
  }
  if (!isRecord(cur)) {
    pushDistinct(out, null);
    return;
  }
  collectPathValues(cur[segs[i]], segs, i + 1, out);
}

/** The key value of a path: missing -> null, [] -> EMPTY_ARRAY_KEY, arrays -> Multi. */
export function pathKeyValue(doc: Obj, segs: string[]): unknown {
  let cur: unknown = doc;
  for (let i = 0; i < segs.length; i++) {
    if (!isRecord(cur)) return null;
    if (Array.isArray(cur)) {
      const out: unknown[] = [];
      collectPathValues(cur, segs, i, out);
      return out.length === 1 ? out[0] : new Multi(out);
    }
    cur = cur[segs[i]];
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

/**
 * The index entries of one document: one key, or several when an indexed field holds an array
 * with several distinct values (`field` is that field's position).
 */
export class MultiKeys {
  constructor(
    readonly keys: string[],
    readonly field: number,
  ) {}
}
export type IndexKeys = string | MultiKeys;

export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** _ids whose key component is 0x16, the _id itself, 0x00 (see updates.ts, stringPayload). */
// eslint-disable-next-line no-control-regex -- the code units the key encoding leaves as they are include control characters
const PLAIN_ID = /^[\u0002-\u0015\u0017-\u00ef]*$/;

/**
 * A collection's documents by _id: a Map in memory; the SQLite store (sqlite/docs.ts) gives one
 * backed by a table. Iteration is in insertion order.
 */
export interface DocMap {
  readonly size: number;
  get(id: string): Doc | undefined;
  has(id: string): boolean;
  set(id: string, doc: Doc): unknown;
  delete(id: string): boolean;
  values(): Iterable<Doc>;
  keys(): Iterable<string>;
}

/**
 * Where an index keeps its entries: B-trees in memory (the default); the SQLite store gives
 * tables (sqlite/tree.ts). `open` is the tree as it stands (empty when new), `empty` a cleared
 * one, `fromSorted` one holding exactly these entries.
 */
export interface TreeSource {
  open(derive: (key: string) => string): IndexTree;
  empty(derive: (key: string) => string): IndexTree;
  fromSorted(keys: string[], vals: string[] | null, derive: (key: string) => string): IndexTree;
}

export const MEMORY_TREES: TreeSource = {
  open: (derive) => new KeyTree(derive),
  empty: (derive) => new KeyTree(derive),
  fromSorted: (keys, vals, derive) => KeyTree.fromSorted(keys, vals, derive),
};

/** Is every _id of these documents plain (PLAIN_ID), so that it can be read back from a key's end? */
function allPlainIds(docs: DocMap): boolean {
  for (const id of docs.keys()) if (typeof id !== 'string' || !PLAIN_ID.test(id)) return false;
  return true;
}

/** The _id at the end of a key, when that _id is plain (PLAIN_ID). */
const plainIdOfKey = (key: string): string => key.slice(key.lastIndexOf('\u0016') + 1, -1);

/** The _id `load` noted for an entry's key (it notes one for every key it sorts). */
function idOfKey(idOf: Map<string, string>, key: string): string {
  const id = idOf.get(key);
  if (id === undefined) throw new Error(`Index entry ${JSON.stringify(key)} has no _id`);
  return id;
}

/** The key component of an _id (always the last component, ascending). */
function idComponent(id: unknown): string {
  return keyComponent(id, 1);
}

export class Index {
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

  constructor(
    readonly spec: IndexSpec,
    private readonly trees: TreeSource = MEMORY_TREES,
  ) {
    this.fields = Object.keys(spec.keys);
    this.paths = this.fields.map((f) => f.split('.'));
    this.dirs = [...this.fields.map((f) => (spec.keys[f] === -1 ? -1 : 1)), 1];
    this.roots = new Set(this.paths.map((p) => p[0]));
    this.rootList = [...this.roots];
    this.multikeyFields = this.fields.map(() => false);
    this.topLevel = this.paths.every((p) => p.length === 1) ? this.fields.slice() : null;
    this.tree = trees.open(plainIdOfKey);
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
    this.tree = this.trees.empty(plainIdOfKey);
  }

  /**
   * Builds the index from scratch for these documents: every key, one sort, then the tree loaded
   * leaf by leaf (much cheaper than inserting the keys one by one into a growing tree). For
   * non-unique indexes: keys end with the _id, so they never collide.
   */
  load(docs: DocMap): void {
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
        ? this.trees.fromSorted(keys, null, plainIdOfKey)
        : this.trees.fromSorted(
            keys,
            keys.map((k) => idOfKey(idOf, k)),
            plainIdOfKey,
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
    this.tree = this.trees.fromSorted(stored.keys, stored.ids, plainIdOfKey);
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

export function sameKeys(a: IndexKeys, b: IndexKeys): boolean {
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
