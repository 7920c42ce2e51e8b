// The documents of a collection of the SQLite read store: a table `(rid INTEGER PRIMARY KEY, id TEXT
// UNIQUE, doc BLOB)` (rid keeps insertion order, the order a Map iterates in) behind the DocMap the
// in-memory engine reads and writes (memory/keys.ts). The engine changes a stored document in place,
// so every document it is handed during a write is taken as changed (kept in `dirty`) and written
// back when the store flushes (at its commits, and when many are pending); until then reads find
// it in `dirty`. Parsed documents are kept in the store's one bounded cache, shared by collections.
import type { Database, Statement } from 'better-sqlite3';
import { deserialize, serialize } from 'node:v8';
import type { BoundedCache } from '../../../events/kernel/cache.ts';
import { isStackOverflow, stringifyAnyDepth, stringifyIteratively } from '../../../events/kernel/json.ts';
import type { Doc } from '../port.ts';
import type { DocMap } from '../memory/keys.ts';
import { isDoc } from '../records.ts';

/** Rows read per query of a scan. */
const SCAN_PAGE = 1000;

/** What the documents need of their store: whether a write is under way (its documents may change). */
export interface DocsSession {
  readonly writing: boolean;
  readonly cache: BoundedCache<string, Doc>;
}

/**
 * Whether JSON holds `value` exactly: only null, booleans, strings, finite numbers other than -0,
 * arrays without holes or undefined items, and plain objects without undefined values, at any
 * depth (walked without recursion). Read models built from the log's JSON events are; a Date, a
 * RegExp, a BigInt or a typed array is not, and keeps its type through v8.serialize instead.
 */
export function isExactJson(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null) continue;
    switch (typeof v) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v) || Object.is(v, -0)) return false;
        continue;
      case 'object':
        break;
      case 'bigint':
      case 'function':
      case 'symbol':
      case 'undefined':
        return false;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (v[i] === undefined) return false;
        stack.push(v[i]);
      }
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key in v) {
      const child: unknown = Reflect.get(v, key);
      if (child === undefined) return false;
      stack.push(child);
    }
  }
  return true;
}

/**
 * A document as stored: JSON text when JSON holds it exactly (isExactJson: several times faster to
 * write and read than v8.serialize), else v8.serialize's bytes, or, for a document too deep for it,
 * JSON text made without recursion.
 */
export function encodeDoc(doc: Doc): Buffer | string {
  if (isExactJson(doc)) {
    const text = stringifyAnyDepth(doc);
    if (text !== undefined) return text;
  }
  try {
    return serialize(doc);
  } catch (err) {
    if (!isStackOverflow(err)) throw err;
    const text = stringifyIteratively(doc);
    if (text === undefined) throw new Error(`sqlite read store: document ${doc._id} has no JSON form`, { cause: err });
    return text;
  }
}

/** The document `stored` holds; a stored value that is not one (a corrupt table) is an error. */
export function decodeDoc(stored: Buffer | string): Doc {
  const doc: unknown = typeof stored === 'string' ? JSON.parse(stored) : deserialize(stored);
  if (!isDoc(doc)) throw new Error('sqlite read store: a stored document is malformed (not an object with a string _id)');
  return doc;
}

export class SqliteDocs implements DocMap {
  private readonly dirty = new Map<string, Doc>();
  private count: number | null = null;
  private readonly s: {
    get: Statement<[string], Buffer | string>;
    has: Statement<[string], number>;
    put: Statement<[string, Buffer | string]>;
    delete: Statement<[string]>;
    count: Statement<[], number>;
    /** Raw rows: [rid, id, doc]. */
    page: Statement<[number, number], [number, string, Buffer | string]>;
    /** Raw rows: [rid, id]. */
    ids: Statement<[number, number], [number, string]>;
  };

  constructor(
    db: Database,
    readonly table: string,
    private readonly session: DocsSession,
  ) {
    const t = `"${table}"`;
    this.s = {
      get: db.prepare<[string], Buffer | string>(`SELECT doc FROM ${t} WHERE id = ?`).pluck(),
      has: db.prepare<[string], number>(`SELECT 1 FROM ${t} WHERE id = ?`).pluck(),
      put: db.prepare<[string, Buffer | string]>(`INSERT INTO ${t} (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`),
      delete: db.prepare<[string]>(`DELETE FROM ${t} WHERE id = ?`),
      count: db.prepare<[], number>(`SELECT count(*) FROM ${t}`).pluck(),
      page: db.prepare<[number, number], [number, string, Buffer | string]>(`SELECT rid, id, doc FROM ${t} WHERE rid > ? ORDER BY rid LIMIT ?`).raw(true),
      ids: db.prepare<[number, number], [number, string]>(`SELECT rid, id FROM ${t} WHERE rid > ? ORDER BY rid LIMIT ?`).raw(true),
    };
  }

  /** Creates the table of a collection's documents (empty). */
  static create(db: Database, table: string, session: DocsSession): SqliteDocs {
    db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc BLOB NOT NULL)`);
    return new SqliteDocs(db, table, session);
  }

  private cacheKey(id: string): string {
    return `${this.table}\u0000${id}`;
  }

  get size(): number {
    this.count ??= (this.s.count.get() ?? 0) + [...this.dirty.keys()].filter((id) => this.s.has.get(id) === undefined).length;
    return this.count;
  }

  get pending(): number {
    return this.dirty.size;
  }

  get(id: string): Doc | undefined {
    let doc = this.dirty.get(id);
    if (doc !== undefined) return doc;
    const key = this.cacheKey(id);
    doc = this.session.cache.get(key);
    if (doc === undefined) {
      const stored = this.s.get.get(id);
      if (stored === undefined) return undefined;
      doc = decodeDoc(stored);
      this.session.cache.set(key, doc);
    }
    if (this.session.writing) this.dirty.set(id, doc);
    return doc;
  }

  has(id: string): boolean {
    return this.dirty.has(id) || this.session.cache.has(this.cacheKey(id)) || this.s.has.get(id) !== undefined;
  }

  set(id: string, doc: Doc): this {
    if (this.count !== null && !this.has(id)) this.count++;
    this.dirty.set(id, doc);
    this.session.cache.set(this.cacheKey(id), doc);
    return this;
  }

  delete(id: string): boolean {
    const pending = this.dirty.delete(id);
    this.session.cache.delete(this.cacheKey(id));
    const stored = this.s.delete.run(id).changes > 0;
    const existed = pending || stored;
    if (existed && this.count !== null) this.count--;
    return existed;
  }

  /** Writes the pending documents to the table; during a write they stay pending (they may change again). */
  flush(): void {
    if (this.dirty.size === 0) return;
    for (const [id, doc] of this.dirty) this.s.put.run(id, encodeDoc(doc));
    if (!this.session.writing) this.dirty.clear();
  }

  /** Forgets what is cached of the table (after a rollback or a drop). */
  forget(): void {
    this.dirty.clear();
    this.count = null;
  }

  *values(): Generator<Doc> {
    this.flush();
    const cache = this.session.cache;
    let after = -1;
    for (;;) {
      const rows = this.s.page.all(after, SCAN_PAGE);
      for (const [, id, stored] of rows) {
        const doc = this.dirty.get(id) ?? cache.get(this.cacheKey(id)) ?? decodeDoc(stored);
        if (this.session.writing) this.dirty.set(id, doc);
        yield doc;
      }
      if (rows.length < SCAN_PAGE) return;
      after = rows[rows.length - 1][0];
    }
  }

  *keys(): Generator<string> {
    this.flush();
    let after = -1;
    for (;;) {
      const rows = this.s.ids.all(after, SCAN_PAGE);
      for (const row of rows) yield row[1];
      if (rows.length < SCAN_PAGE) return;
      after = rows[rows.length - 1][0];
    }
  }
}
