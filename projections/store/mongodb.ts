// The production read store: MongoDB (replica set or sharded cluster) through the official driver.
import {
  MongoClient,
  ObjectId,
  type Collection as MongoCollectionHandle,
  type Db,
  type FindOptions as MongoFindOptions,
  type UpdateResult as MongoUpdateResult,
} from 'mongodb';
import {
  typedCollection,
  DuplicateKeyError,
  type Collection,
  type CountOptions,
  type CollectionSpec,
  type Doc,
  type DocOf,
  type Filter,
  type FindOptions,
  type QueryPlan,
  type ReadStore,
  type Update,
  type UpdateResult,
} from './port.ts';
import { errorCode, isRecord } from './records.ts';

const DUPLICATE_KEY = 11000;
const NAMESPACE_NOT_FOUND = 26;
const NAMESPACE_EXISTS = 48;

function isDuplicateKey(err: unknown): boolean {
  const code = errorCode(err);
  return code === DUPLICATE_KEY || code === 11001;
}

/** Is this duplicate-key error about the _id (not about a secondary unique index)? */
function isIdDuplicate(err: unknown): boolean {
  if (!isRecord(err)) return false;
  if (isRecord(err.keyPattern)) {
    const keys = Object.keys(err.keyPattern);
    return keys.length === 1 && keys[0] === '_id';
  }
  return typeof err.message === 'string' && / index: _id_ /.test(err.message);
}

function translate(err: unknown): unknown {
  if (isDuplicateKey(err)) return new DuplicateKeyError(err instanceof Error ? err.message : 'duplicate key');
  return err;
}

function isReplacement(update: Update): boolean {
  const keys = Object.keys(update);
  return keys.length > 0 && keys.every((k) => k.charCodeAt(0) !== 36);
}

function findOptions(options: FindOptions | undefined): MongoFindOptions {
  const out: MongoFindOptions = {};
  if (options === undefined) return out;
  if (options.sort !== undefined && Object.keys(options.sort).length > 0) out.sort = options.sort;
  if (options.skip !== undefined && options.skip > 0) out.skip = options.skip;
  if (options.limit !== undefined && options.limit > 0) out.limit = options.limit;
  if (options.projection !== undefined && Object.keys(options.projection).length > 0) out.projection = options.projection;
  if (options.hint !== undefined) out.hint = options.hint;
  return out;
}

function result(r: MongoUpdateResult<Doc>): UpdateResult {
  return { matched: r.matchedCount, modified: r.modifiedCount, upserted: r.upsertedCount > 0 };
}

/** The index used by a winning plan (any depth, sharded or not); IDHACK is the _id index. */
function planIndexName(node: unknown): string | null {
  if (node === null || typeof node !== 'object') return null;
  if (Array.isArray(node)) {
    for (const e of node) {
      const found = planIndexName(e);
      if (found !== null) return found;
    }
    return null;
  }
  if (!isRecord(node)) return null; // (not null: answered above)
  const n = node;
  if (typeof n.indexName === 'string') return n.indexName;
  if (n.stage === 'IDHACK' || n.stage === 'EXPRESS_IDHACK' || n.stage === 'CLUSTERED_IXSCAN') return '_id_';
  for (const key of ['queryPlan', 'inputStage', 'inputStages', 'shards', 'winningPlan', 'thenStage', 'elseStage', 'outerStage', 'innerStage']) {
    if (key in n) {
      const found = planIndexName(n[key]);
      if (found !== null) return found;
    }
  }
  return null;
}

/** A new _id in the shape the memory adapter uses too: an ObjectId as a 24-hex string. */
function newId(): string {
  return new ObjectId().toHexString();
}

export class MongoCollection implements Collection {
  constructor(
    private readonly coll: MongoCollectionHandle<Doc>,
    readonly name: string,
  ) {}

  async findOne(filter: Filter, options?: FindOptions): Promise<Doc | null> {
    return this.coll.findOne(filter, findOptions(options));
  }

  async find(filter: Filter, options?: FindOptions): Promise<Doc[]> {
    return this.coll.find(filter, findOptions(options)).toArray();
  }

  async count(filter: Filter = {}, options?: CountOptions): Promise<number> {
    return this.coll.countDocuments(filter, {
      ...(options?.hint === undefined ? {} : { hint: options.hint }),
      ...(options?.limit === undefined ? {} : { limit: options.limit }),
    });
  }

  async insertOne(doc: Doc): Promise<void> {
    const copy = { ...doc, _id: doc._id ?? newId() };
    try {
      await this.coll.insertOne(copy);
    } catch (err) {
      throw translate(err);
    }
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    const upsert = options?.upsert === true;
    try {
      if (isReplacement(update)) {
        const replacement = upsert && !('_id' in filter) && !('_id' in update) ? { _id: newId(), ...update } : update;
        return result(await this.coll.replaceOne(filter, replacement, { upsert }));
      }
      let u = update;
      if (upsert && !('_id' in filter) && !hasIdWrite(update)) {
        u = { ...update, $setOnInsert: { ...fieldsOf(update.$setOnInsert), _id: newId() } };
      }
      return result(await this.coll.updateOne(filter, u, { upsert }));
    } catch (err) {
      throw translate(err);
    }
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    try {
      return result(await this.coll.updateMany(filter, update));
    } catch (err) {
      throw translate(err);
    }
  }

  async deleteOne(filter: Filter): Promise<number> {
    return (await this.coll.deleteOne(filter)).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    return (await this.coll.deleteMany(filter)).deletedCount;
  }

  async applyAt(id: string, position: number, update: Update): Promise<boolean> {
    const filter = { _id: id, $or: [{ _pos: { $lt: position } }, { _pos: { $exists: false } }] };
    try {
      if (isReplacement(update)) {
        await this.coll.replaceOne(filter, { ...update, _id: id, _pos: position }, { upsert: true });
      } else {
        const set = { ...fieldsOf(update.$set), _pos: position };
        await this.coll.updateOne(filter, { ...update, $set: set }, { upsert: true });
      }
      return true;
    } catch (err) {
      // The filter missed because the document already holds this position or a later one, and
      // the upsert then collided with it on _id: an at-least-once redelivery.
      if (isDuplicateKey(err) && isIdDuplicate(err)) return false;
      throw translate(err);
    }
  }

  async explain(filter: Filter, options?: FindOptions): Promise<QueryPlan> {
    const doc = await this.coll.find(filter, findOptions(options)).explain('executionStats');
    const planner: unknown = doc.queryPlanner;
    const stats: unknown = doc.executionStats;
    return {
      index: planIndexName(isRecord(planner) ? (planner.winningPlan ?? null) : null),
      examined: Number((isRecord(stats) ? stats.totalDocsExamined : undefined) ?? 0),
    };
  }
}

/** An operator's fields to copy into a new spec (none when it is absent). */
function fieldsOf(spec: unknown): Record<string, unknown> | undefined {
  return isRecord(spec) ? spec : undefined;
}

function hasIdWrite(update: Update): boolean {
  for (const op of ['$set', '$setOnInsert']) {
    const spec = update[op];
    if (spec !== null && typeof spec === 'object' && '_id' in spec) return true;
  }
  return false;
}

export interface MongoReadStoreOptions {
  /** How long to wait for a reachable server before an operation fails (default 3 s). */
  serverSelectionTimeoutMS?: number;
}

export class MongoReadStore implements ReadStore {
  readonly name = 'mongodb';
  private readonly handles = new Map<string, MongoCollection>();

  private constructor(
    private readonly client: MongoClient,
    /** The database holding the read models (exposed for tests and operators' tools). */
    readonly db: Db,
    private readonly timeoutMs: number,
  ) {}

  static async connect(url: string, dbName?: string, options: MongoReadStoreOptions = {}): Promise<MongoReadStore> {
    const timeoutMs = options.serverSelectionTimeoutMS ?? 3000;
    const client = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, ignoreUndefined: false });
    await client.connect();
    return new MongoReadStore(client, client.db(dbName), timeoutMs);
  }

  collection<N extends string>(name: N): Collection<DocOf<N>> {
    return typedCollection(this.handle(name));
  }

  private handle(name: string): MongoCollection {
    let h = this.handles.get(name);
    if (h === undefined) {
      h = new MongoCollection(this.db.collection<Doc>(name), name);
      this.handles.set(name, h);
    }
    return h;
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const existing = await this.db.listCollections({ name: spec.name }, { nameOnly: true }).toArray();
    if (existing.length === 0) {
      try {
        await this.db.createCollection(spec.name);
      } catch (err) {
        if (errorCode(err) !== NAMESPACE_EXISTS) throw err;
      }
    }
    const indexes = spec.indexes.filter((ix) => ix.name !== '_id_');
    if (indexes.length === 0) return;
    await this.db
      .collection(spec.name)
      .createIndexes(indexes.map((ix) => ({ key: { ...ix.keys }, name: ix.name, ...(ix.unique === true ? { unique: true } : {}) })));
  }

  async dropCollection(name: string): Promise<void> {
    try {
      await this.db.dropCollection(name);
    } catch (err) {
      if (errorCode(err) !== NAMESPACE_NOT_FOUND) throw err;
    }
  }

  async swapCollections(pairs: Array<[from: string, to: string]>): Promise<void> {
    for (const [from, to] of pairs) await this.db.renameCollection(from, to, { dropTarget: true });
  }

  async listCollections(): Promise<string[]> {
    const infos = await this.db.listCollections({}, { nameOnly: true }).toArray();
    return infos
      .map((c) => c.name)
      .filter((n) => !n.startsWith('system.'))
      .sort();
  }

  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`MongoDB did not answer a ping within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.db.command({ ping: 1 }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
