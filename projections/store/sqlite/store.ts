// The SQLite read store: the in-memory engine's collections (memory/collection.ts: its planner, key
// encoding, mingo matching and update operators) with their documents and index entries in tables
// of one SQLite file instead of the heap. A collection is a table of documents (docs.ts) and one
// table per index (tree.ts); `_collections` names them, with each collection's index specs and
// multikey flags. Table names are numbers (t1, t2, ...): a rename (a rebuild's swap) only changes
// `_collections`.
//
// Durability: every write goes into one open transaction on the one connection (reads on it see it);
// commit() ends it and opens the next. Commits happen where the read models and their checkpoints
// (stored in the same file) agree: the projection runner reports each such point (checkpointed())
// and the store commits at most every GROUP_COMMIT_MS, grouping the batches between; a timer commits
// the rest (and writes from elsewhere: leases, workers) within GROUP_COMMIT_MS; close() commits.
// The timer runs between the runner's batches, never inside one: a batch is applied without
// waiting on I/O (the store's writes are synchronous). So a kill -9 loses at most the writes since
// the last commit, and a restart replays only what the committed checkpoints lack. WAL mode with
// synchronous=NORMAL: a commit writes the WAL without an fsync (the WAL checkpoint syncs), so a
// power loss may lose the last commits but never leaves a torn file, and a lost commit is replayed
// from the log as any uncommitted tail is.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { CLOSE, type CheckpointerData, type CheckpointerMessage, type CheckpointerReply } from '../../../events/store/sqlite-wire.ts';
import { startTsThread } from '../../../events/store/ts-thread.ts';
import { BoundedCache } from '../../../events/kernel/cache.ts';
import {
  typedCollection,
  type Collection,
  type CollectionSpec,
  type Doc,
  type DocOf,
  type Filter,
  type IndexSpec,
  type ReadStore,
  type Update,
  type UpdateResult,
} from '../port.ts';
import { CollectionData, MemoryCollection, type CollectionSource } from '../memory/collection.ts';
import { Index, type TreeSource } from '../memory/keys.ts';
import { SqliteDocs, type DocsSession } from './docs.ts';
import { SqliteTree } from './tree.ts';
import { isIndexSpec, isRecord } from '../records.ts';

/**
 * How often the open transaction is committed: the runner's batches are grouped into one commit at
 * most this often (checkpointed()), and writes from elsewhere are committed within it.
 */
const GROUP_COMMIT_MS = 250;

/** Pending documents of a collection written to its table between commits. */
const FLUSH_AT = 5000;

export interface SqliteReadStoreOptions {
  /** Parsed documents kept in memory, across collections (default 50,000). */
  cachedDocs?: number;
  /** SQLite's page cache in MiB (default 64). */
  pageCacheMb?: number;
  /**
   * Copy the WAL into the file from a thread of its own every this many ms (the event log's
   * checkpointer thread), instead of inside the commits of the runner (which would stall the
   * event loop for the copy); 0 (default): SQLite's own auto-checkpoint.
   */
  checkpointIntervalMs?: number;
  /** Commits group the runner's batches of this many ms (default GROUP_COMMIT_MS). */
  groupCommitMs?: number;
  /** The clock of the group commits (tests move it). */
  now?: () => number;
}

/** The connection's own auto-checkpoint threshold (pages) while the checkpointer thread runs. */
const WAL_BOUND_PAGES = 10_000;

interface StoredIndexMeta extends IndexSpec {
  table: string;
  multikeyFields: boolean[];
  /** A bulk load's deferred index (deferIndexes): its table is empty until buildIndexes fills it. */
  deferred?: boolean;
}

function isStoredIndexMeta(v: unknown): v is StoredIndexMeta {
  return (
    isIndexSpec(v) &&
    isRecord(v) &&
    typeof v.table === 'string' &&
    Array.isArray(v.multikeyFields) &&
    v.multikeyFields.every((b) => typeof b === 'boolean') &&
    (v.deferred === undefined || typeof v.deferred === 'boolean')
  );
}

/** A collection's index metadata as `_collections` holds it (JSON); anything else is a corrupt file. */
function parseIndexMeta(collection: string, text: string): StoredIndexMeta[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every(isStoredIndexMeta)) {
    throw new Error(`sqlite read store: the index metadata of collection ${collection} is malformed`);
  }
  return parsed;
}

interface Entry {
  data: CollectionData;
  docs: SqliteDocs;
  table: string;
  indexes: StoredIndexMeta[];
  /** How many multikey flags `_collections` holds set: a write that sets one more saves them (flags are never unset). */
  savedMultikey: number;
  /** Whether `_collections` holds the collection as bulk loading (some index deferred). */
  savedDeferred: boolean;
}

/** How many fields of the collection's indexes are multikey. */
function multikeyCount(data: CollectionData): number {
  let n = 0;
  for (const ix of data.indexes) for (const multi of ix.multikeyFields) if (multi) n++;
  return n;
}

/** A table of `n` entries in key order, for Index.load and restores. */
function fillTree(tree: SqliteTree, keys: string[], vals: string[] | null, derive: (key: string) => string): SqliteTree {
  tree.clear();
  for (let i = 0; i < keys.length; i++) tree.set(keys[i], vals === null ? derive(keys[i]) : vals[i]);
  return tree;
}

function treesFor(db: Database.Database, table: string): TreeSource {
  return {
    open: () => SqliteTree.create(db, table),
    empty: () => {
      const tree = SqliteTree.create(db, table);
      tree.clear();
      return tree;
    },
    fromSorted: (keys, vals, derive) => fillTree(SqliteTree.create(db, table), keys, vals, derive),
  };
}

/**
 * Copies the store in `source` as of its last commit into `target` (absent or empty), without
 * blocking the process that writes it (VACUUM INTO on a read-only connection); nothing when
 * `source` does not exist.
 */
export function copySqliteReadStore(source: string, target: string): void {
  if (!existsSync(source)) return;
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.prepare('VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
}

/** The collection handle: the memory engine's, each write marked as one (its documents are written back). */
class SqliteCollection extends MemoryCollection {
  constructor(
    private readonly owner: SqliteReadStore,
    name: string,
  ) {
    super(owner, name);
  }

  override insertOne(doc: Doc): Promise<void> {
    return this.owner._write(this.name, () => super.insertOne(doc));
  }

  override updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    return this.owner._write(this.name, () => super.updateOne(filter, update, options));
  }

  override updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.owner._write(this.name, () => super.updateMany(filter, update));
  }

  override deleteOne(filter: Filter): Promise<number> {
    return this.owner._write(this.name, () => super.deleteOne(filter));
  }

  override deleteMany(filter: Filter): Promise<number> {
    return this.owner._write(this.name, () => super.deleteMany(filter));
  }

  override applyAtSync(id: string, position: number, update: Update): boolean {
    return this.owner._write(this.name, () => super.applyAtSync(id, position, update));
  }
}

export class SqliteReadStore implements ReadStore, CollectionSource, DocsSession {
  readonly name = 'sqlite';
  readonly cache: BoundedCache<string, Doc>;
  private readonly db: Database.Database;
  private readonly entries = new Map<string, Entry>();
  private readonly handles = new Map<string, SqliteCollection>();
  private depth = 0;
  private uncommitted = false;
  private closed = false;
  private committedAt = Number.NEGATIVE_INFINITY;
  private readonly groupCommitMs: number;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private checkpointer: Worker | null = null;
  private checkpointerExited: Promise<void> = Promise.resolve();

  /** @internal Changes whenever a name may map to other collection state (handles cache it). */
  _generation = 0;

  /** Opens (creating when absent) the store in `path` (':memory:' for one without a file). */
  constructor(
    readonly path: string,
    options: SqliteReadStoreOptions = {},
  ) {
    this.cache = new BoundedCache<string, Doc>({ max: options.cachedDocs ?? 50_000 });
    this.groupCommitMs = options.groupCommitMs ?? GROUP_COMMIT_MS;
    this.now = options.now ?? Date.now;
    this.db = new Database(path);
    if (path !== ':memory:') this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`cache_size = ${-1024 * (options.pageCacheMb ?? 64)}`);
    this.db.pragma('temp_store = MEMORY');
    this.db.exec(`CREATE TABLE IF NOT EXISTS _collections (name TEXT PRIMARY KEY, doc_table TEXT NOT NULL, indexes TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS _store (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
    const collections = this.db.prepare<[], { name: string; doc_table: string; indexes: string }>('SELECT name, doc_table, indexes FROM _collections');
    for (const row of collections.all()) this.open(row.name, row.doc_table, parseIndexMeta(row.name, row.indexes));
    const interval = options.checkpointIntervalMs ?? 0;
    if (path !== ':memory:' && interval > 0) this.startCheckpointer(path, interval);
    this.db.exec('BEGIN');
    this.timer = setInterval(() => {
      if (this.uncommitted && this.depth === 0) this.commit();
    }, this.groupCommitMs).unref();
  }

  private startCheckpointer(path: string, intervalMs: number): void {
    this.db.pragma(`wal_autocheckpoint = ${WAL_BOUND_PAGES}`);
    const data: CheckpointerData = { path, synchronous: 'NORMAL', intervalMs };
    const thread = startTsThread(new URL('../../../events/store/sqlite-checkpointer.thread.ts', import.meta.url), data);
    thread.unref();
    // A checkpointer that fails costs only speed: the connection's bounded auto-checkpoint remains.
    thread.on('message', (failure: CheckpointerReply) =>
      process.emitWarning(`sqlite read store: background checkpoints stopped (${failure.code}: ${failure.message})`),
    );
    thread.on('error', (error) => process.emitWarning(`sqlite read store: checkpointer thread failed: ${error.message}`));
    this.checkpointerExited = new Promise((resolve) => thread.once('exit', () => resolve()));
    this.checkpointer = thread;
  }

  get writing(): boolean {
    return this.depth > 0;
  }

  private open(name: string, table: string, indexes: StoredIndexMeta[]): Entry {
    const docs = new SqliteDocs(this.db, table, this);
    const data = new CollectionData(docs);
    for (const meta of indexes) {
      const ix = new Index({ name: meta.name, keys: meta.keys, unique: meta.unique === true }, treesFor(this.db, meta.table));
      meta.multikeyFields.forEach((m, i) => (ix.multikeyFields[i] = m));
      ix.multikey = ix.multikeyFields.some(Boolean);
      data.addIndex(ix);
    }
    // A bulk load that a stop or a crash interrupted stays one: its deferred indexes are built by
    // buildIndexes (which the runner's start calls), or by the first query that needs them.
    const ready = data.indexes.filter((_, i) => indexes[i].deferred !== true);
    if (ready.length < data.indexes.length) data.deferExcept(ready, name);
    const entry: Entry = { data, docs, table, indexes, savedMultikey: multikeyCount(data), savedDeferred: data.deferred };
    this.entries.set(name, entry);
    return entry;
  }

  private nextTable(): string {
    const value = this.db
      .prepare<[], number>(`INSERT INTO _store (key, value) VALUES ('tables', 1) ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`)
      .pluck()
      .get();
    if (value === undefined) throw new Error('sqlite read store: numbering a table returned no row');
    return `t${value}`;
  }

  private saveMeta(name: string, entry: Entry): void {
    for (const meta of entry.indexes) {
      const ix = entry.data.indexes.find((i) => i.name === meta.name);
      if (ix === undefined) continue;
      meta.multikeyFields = ix.multikeyFields.slice();
      if (entry.data.maintained.includes(ix)) delete meta.deferred;
      else meta.deferred = true;
    }
    entry.savedMultikey = multikeyCount(entry.data);
    entry.savedDeferred = entry.data.deferred;
    this.db
      .prepare(
        'INSERT INTO _collections (name, doc_table, indexes) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET doc_table = excluded.doc_table, indexes = excluded.indexes',
      )
      .run(name, entry.table, JSON.stringify(entry.indexes));
    this.uncommitted = true;
  }

  collection<N extends string>(name: N): Collection<DocOf<N>> {
    let h = this.handles.get(name);
    if (h === undefined) {
      h = new SqliteCollection(this, name);
      this.handles.set(name, h);
    }
    return typedCollection(h);
  }

  /** @internal The state of a collection; created on first write, as MongoDB does. */
  _data(name: string, create: boolean): CollectionData | undefined {
    return create ? this._writable(name) : this.entries.get(name)?.data;
  }

  /** @internal The state of a collection, created if it does not exist yet. */
  _writable(name: string): CollectionData {
    return (this.entries.get(name) ?? this.create(name)).data;
  }

  private create(name: string): Entry {
    const table = this.nextTable();
    SqliteDocs.create(this.db, table, this);
    const entry = this.open(name, table, []);
    this.saveMeta(name, entry);
    this._generation++;
    return entry;
  }

  /** @internal Runs a write of collection `name`: its documents are written back, its multikey flags kept. */
  _write<T>(name: string, write: () => T): T {
    this.depth++;
    try {
      return write();
    } finally {
      if (--this.depth === 0) this.afterWrite(name);
    }
  }

  private afterWrite(name: string): void {
    this.uncommitted = true;
    const entry = this.entries.get(name);
    if (entry === undefined) return;
    // A write's documents stay pending until the next commit (docs.ts), so a document written many
    // times between commits is encoded once; a long run without commits (a rebuild's shadow)
    // writes them out every FLUSH_AT documents.
    if (entry.docs.pending >= FLUSH_AT) entry.docs.flush();
    if (entry.indexes.length > 0 && multikeyCount(entry.data) !== entry.savedMultikey) this.saveMeta(name, entry);
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const entry = this.entries.get(spec.name) ?? this.create(spec.name);
    // Each new index's table, in the order the indexes are made (and added).
    const tables: string[] = [];
    const added = entry.data.createIndexes(spec.name, spec.indexes, (ixSpec) => {
      const table = this.nextTable();
      tables.push(table);
      // Filled from the documents as stored: pending writes first.
      entry.docs.flush();
      return new Index(ixSpec, treesFor(this.db, table));
    });
    added.forEach((ix, i) => entry.indexes.push({ ...ix.spec, table: tables[i], multikeyFields: ix.multikeyFields.slice() }));
    if (added.length > 0) this.saveMeta(spec.name, entry);
  }

  private dropTables(entry: Entry): void {
    entry.docs.forget();
    this.db.exec(`DROP TABLE IF EXISTS "${entry.table}"`);
    for (const meta of entry.indexes) this.db.exec(`DROP TABLE IF EXISTS "${meta.table}"`);
  }

  async dropCollection(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (entry === undefined) return;
    this.dropTables(entry);
    this.db.prepare('DELETE FROM _collections WHERE name = ?').run(name);
    this.entries.delete(name);
    this._generation++;
    this.uncommitted = true;
  }

  async swapCollections(pairs: Array<[from: string, to: string]>): Promise<void> {
    const moved = pairs.map(([from, to]) => {
      if (from === to) throw new Error(`Cannot rename collection ${from} to itself`);
      const entry = this.entries.get(from);
      if (entry === undefined) throw new Error(`Cannot rename ${from}: the collection does not exist`);
      return entry;
    });
    for (const [from] of pairs) {
      this.entries.delete(from);
      this.db.prepare('DELETE FROM _collections WHERE name = ?').run(from);
    }
    pairs.forEach(([, to], i) => {
      const replaced = this.entries.get(to);
      if (replaced !== undefined && !moved.includes(replaced)) this.dropTables(replaced);
      this.entries.set(to, moved[i]);
      this.saveMeta(to, moved[i]);
    });
    this._generation++;
    // One commit: the swap is durable as a whole.
    this.commit();
  }

  async listCollections(): Promise<string[]> {
    return [...this.entries.keys()].sort();
  }

  /**
   * Bulk loading (a replay from far behind) into collections still empty: until buildIndexes,
   * writes leave their non-unique indexes alone, which are then written in key order, one sort
   * each. A collection that holds documents is not deferred: building its indexes again would cost
   * the whole collection, not the replay. The deferred state is stored with the collection, so a
   * bulk load cut short by a stop or a crash is finished by the next start.
   */
  deferIndexes(names: string[]): void {
    for (const name of names) {
      const entry = this.entries.get(name) ?? this.create(name);
      if (entry.data.deferred || entry.docs.size > 0) continue;
      entry.data.defer();
      this.saveMeta(name, entry);
    }
  }

  buildIndexes(names: string[]): void {
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry === undefined || !entry.data.deferred) continue;
      entry.data.materialize();
      this.saveMeta(name, entry);
    }
  }

  /** Writes the pending documents and commits the open transaction. */
  commit(): void {
    if (this.closed || this.depth > 0) return;
    for (const [name, entry] of this.entries) {
      entry.docs.flush();
      // A query that needed a deferred index built it (memory/collection.ts): recorded here.
      if (entry.data.deferred !== entry.savedDeferred) this.saveMeta(name, entry);
    }
    this.db.exec('COMMIT');
    this.db.exec('BEGIN');
    this.uncommitted = false;
    this.committedAt = this.now();
  }

  /**
   * The runner has moved its checkpoints: commits if the last commit is groupCommitMs old, else
   * leaves it to the timer, so that a burst of batches is one commit (each document written once).
   */
  checkpointed(): void {
    if (this.now() - this.committedAt >= this.groupCommitMs) this.commit();
  }

  /** Documents written but not yet in their tables (none between writes). */
  private pending(): number {
    let n = 0;
    for (const entry of this.entries.values()) n += entry.docs.pending;
    return n;
  }

  /** For the bench and tests: the file's size and what is held in memory. */
  stats(): { pages: number; pageSize: number; cachedDocs: number; pendingDocs: number } {
    return {
      pages: this.pragmaNumber('page_count'),
      pageSize: this.pragmaNumber('page_size'),
      cachedDocs: this.cache.size,
      pendingDocs: this.pending(),
    };
  }

  private pragmaNumber(name: string): number {
    const value = this.db.pragma(name, { simple: true });
    if (typeof value !== 'number') throw new Error(`sqlite read store: pragma ${name} is not a number`);
    return value;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('The read store is closed');
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.commit();
    this.db.exec('COMMIT');
    this.closed = true;
    clearInterval(this.timer);
    if (this.checkpointer !== null) {
      this.checkpointer.ref();
      this.checkpointer.postMessage(CLOSE satisfies CheckpointerMessage);
      await this.checkpointerExited;
      this.checkpointer = null;
    }
    this.db.close();
    this.entries.clear();
    this.handles.clear();
    this.cache.clear();
    this._generation++;
  }
}
