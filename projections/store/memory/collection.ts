// A collection of the in-memory read store: its documents by _id and its indexes (CollectionData),
// and the Collection handle that reads them through the planner and writes them, keeping every
// maintained index right, all or nothing.
import {
  DuplicateKeyError,
  type Collection,
  type CountOptions,
  type Doc,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type QueryPlan,
  type Update,
  type UpdateResult,
} from '../port.ts';
import { NOT_SIMPLE, UpdateError, applySimpleUpdate, applyUpdate, cloneValue, simpleInsert, type ApplyOptions } from '../updates.ts';
import { isRecord } from '../records.ts';
import { Index, sameKeys, type DocMap, type IndexKeys, type Obj } from './keys.ts';
import {
  analyze,
  intersectIds,
  isOperatorObject,
  planIds,
  planIndex,
  planIntersection,
  type IndexPlan,
  type IntersectionPlan,
  type SortKey,
} from './planner.ts';
import { compileFilter, compileProjection, sortDocs } from './query.ts';

/** What a collection handle needs from its store (store.ts), which creates the handles. */
export interface CollectionSource {
  /** Changes whenever a name may map to other collection state (handles cache it). */
  readonly _generation: number;
  /** The state of a collection; created on first write, as MongoDB does. */
  _data(name: string, create: boolean): CollectionData | undefined;
  /** The state of a collection, created if it does not exist yet. */
  _writable(name: string): CollectionData;
}

export class CollectionData {
  /** The documents by _id: a Map, unless a store gives its own (the SQLite store's table). */
  constructor(readonly docs: DocMap = new Map<string, Doc>()) {}

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
   * MongoDB's createIndexes on collection `name`: each index of `specs` it lacks is made by `make`
   * (which gives the index its storage), filled from the documents (a unique one refusing a
   * duplicate) and added. An index already there with the same spec is kept; one with that name
   * or those keys and another spec is an error. Answers the indexes added.
   */
  createIndexes(name: string, specs: IndexSpec[], make: (spec: IndexSpec) => Index): Index[] {
    const added: Index[] = [];
    for (const ixSpec of specs) {
      if (ixSpec.name === '_id_') continue;
      const byName = this.indexes.find((ix) => ix.name === ixSpec.name);
      if (byName !== undefined) {
        if (byName.sameSpec(ixSpec)) continue;
        throw new Error(`An index named ${ixSpec.name} already exists on ${name} with a different key pattern or options`);
      }
      const sameKeys = this.indexes.find((ix) => ix.sameSpec({ ...ixSpec, unique: ix.unique }));
      if (sameKeys !== undefined) throw new Error(`Index ${ixSpec.name} already exists on ${name} with a different name: ${sameKeys.name}`);
      const ix = make({ name: ixSpec.name, keys: { ...ixSpec.keys }, unique: ixSpec.unique === true });
      if (ix.unique) {
        for (const doc of this.docs.values()) {
          const keys = ix.keysOf(doc);
          ix.checkUnique(keys, doc, name);
          ix.insert(keys, doc._id);
        }
      } else {
        ix.load(this.docs);
      }
      this.addIndex(ix);
      added.push(ix);
    }
    return added;
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

/** A document of the store: its _id is a string (simpleInsert's is the one it was given). */
function isDoc(v: Obj): v is Doc {
  return typeof v._id === 'string';
}

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
      for (const sub of v) if (isRecord(sub)) seedFromFilter(sub, into);
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

/** The _id of an upserted document: the filter's, or a new one. */
function upsertId(seeded: unknown): string {
  if (seeded === undefined || seeded === null) return newObjectId();
  if (typeof seeded === 'string') return seeded;
  throw new UpdateError(`An upsert's _id must be a string, as every document's is (got ${typeof seeded})`);
}

const ABSENT = Symbol('absent');
/** Copies of the top-level fields an update may change: [name, value or ABSENT, ...]. */
type Snapshot = { whole: Doc } | { fields: unknown[] };

function snapshotFields(doc: Doc, update: Update, withPos: boolean): Snapshot {
  const fields: unknown[] = [];
  for (const op in update) {
    if (op.charCodeAt(0) !== 36 || op === '$rename') return { whole: cloneValue(doc) };
    const spec = update[op];
    if (!isRecord(spec)) continue; // a malformed update: applyUpdate refuses it before any write
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
    const k = saved[i];
    if (typeof k !== 'string') continue; // [name, value, ...]
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
    const k = f[i];
    if (typeof k !== 'string') continue; // [name, value, ...]
    if (f[i + 1] === ABSENT) delete doc[k];
    else doc[k] = f[i + 1];
  }
}

export class MemoryCollection implements Collection {
  constructor(
    private readonly store: CollectionSource,
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
    return this.data() ?? this.store._writable(this.name);
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
    const limit = options?.limit !== undefined && options.limit > 0 ? options.limit : undefined;
    if (Object.keys(filter).length === 0 && options?.hint === undefined) return limit === undefined ? data.docs.size : Math.min(limit, data.docs.size);
    return this.select(filter, { ...(options?.hint === undefined ? {} : { hint: options.hint }), ...(limit === undefined ? {} : { limit }) }, true).docs.length;
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
    // By _id alone (the commonest update of projections): a direct lookup, as findOne does.
    const id = idOnly(filter);
    const found = data === undefined ? undefined : id !== undefined ? data.docs.get(id) : this.select(filter, { limit: 1 }, false).docs[0];
    if (data !== undefined && found !== undefined) {
      const modified = this.updateDoc(data, found, update, filter, undefined);
      return { matched: 1, modified: modified ? 1 : 0, upserted: false };
    }
    if (options?.upsert !== true) return { matched: 0, modified: 0, upserted: false };
    const seed: Obj = {};
    seedFromFilter(filter, seed);
    const { _id, ...rest } = seed;
    const fresh: Doc = { _id: upsertId(_id), ...rest };
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
    const inserted = simpleInsert(id, update);
    let fresh: Doc;
    if (inserted !== NOT_SIMPLE && isDoc(inserted)) fresh = inserted;
    else {
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
      const spec = update[op];
      if (!isRecord(spec)) continue; // a malformed update: applyUpdate refuses it
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
      // [index, old keys, new keys, ...]
      for (let i = 0; i < moves.length; i += 3) {
        const ix = moves[i];
        const oldKeys = moves[i + 1];
        const newKeys = moves[i + 2];
        if (!(ix instanceof Index) || oldKeys instanceof Index || newKeys instanceof Index) continue;
        ix.remove(oldKeys);
        ix.insert(newKeys, doc._id);
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
    const sort: SortKey[] = options?.sort === undefined ? [] : Object.entries(options.sort).map(([field, dir]) => ({ field, dir: dir === -1 ? -1 : 1 }));
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
        if (typeof id !== 'string') continue; // no such _id: the documents' are strings
        const doc = data.docs.get(id);
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
    if (a.alls !== null) {
      // A `$all` on the first field of an index: its values' ranges intersected, when the hinted
      // index (or, without a hint, one that scores above the best single range) gives that.
      let inter: IntersectionPlan | null = null;
      for (const ix of data.indexes) {
        if (hint !== undefined && ix.name !== hint) continue;
        const p = planIntersection(ix, a, sort, filter);
        if (p !== null && (inter === null || p.score > inter.score)) inter = p;
      }
      if (inter !== null && (hint !== undefined || best === null || inter.score > best.score))
        return this.selectIntersection(data, inter, filter, skip, limit, countOnly);
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
        return { docs: new Array(Math.min(count, skip + limit) - Math.min(count, skip)), plan: { index: best.index.name, examined: 0 } };
      }
      /** One entry of the range: false once the page is full. */
      const visit = (id: string): boolean => {
        if (dedupe !== null) {
          if (dedupe.has(id)) return true;
          dedupe.add(id);
        }
        const doc = data.docs.get(id);
        if (doc === undefined) return true; // (an index entry always has its document)
        examined++;
        if (test !== null && !test.test(doc)) return true;
        if (++matched > skip || !ordered) out.push(doc);
        return matched < stopAt;
      };
      if (best.mergeFrom < 0 || best.ranges.length === 1) {
        // Ranges one after another, each scanned by the tree itself (planIds does the same through generators).
        for (const range of best.ranges) if (!best.index.tree.scan(range.start, range.end, best.reverse, visit)) break;
      } else {
        for (const id of planIds(best)) if (!visit(id)) break;
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

  /**
   * select through an index intersection: only the documents in every value's range are fetched
   * (none for a count of a filter the intersection covers), then tested against the filter.
   */
  private selectIntersection(data: CollectionData, plan: IntersectionPlan, filter: Filter, skip: number, limit: number, countOnly: boolean): Selection {
    const test = plan.covered ? null : compileFilter(filter);
    const stopAt = skip + limit;
    const out: Doc[] = [];
    let examined = 0;
    let matched = 0;
    let keysExamined: number;
    if (countOnly && plan.covered) {
      keysExamined = intersectIds(plan, () => ++matched < stopAt);
      return {
        docs: new Array(Math.max(0, matched - skip)),
        plan: { index: plan.index.name, examined: 0, stage: 'AND_SORTED', keysExamined },
      };
    }
    keysExamined = intersectIds(plan, (id) => {
      const doc = data.docs.get(id);
      if (doc === undefined) return true; // (an index entry always has its document)
      examined++;
      if (test !== null && !test.test(doc)) return true;
      if (++matched > skip) out.push(doc);
      return matched < stopAt;
    });
    return { docs: out, plan: { index: plan.index.name, examined, stage: 'AND_SORTED', keysExamined } };
  }
}
