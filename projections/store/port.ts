// The read-store port: MongoDB semantics. Adapters: in-memory (embedded default, mingo + own
// indexes) and MongoDB. Both pass test/projections/store/contract.ts.

/** What every document has: its id. A read model's document type extends it. */
export interface DocBase {
  _id: string;
}

/** A document of no declared type: what the adapters, snapshots and the wire handle. */
export type Doc = { _id: string; [field: string]: unknown };

/**
 * The document type of each read model, by collection name. A projection declares its documents'
 * type beside itself and registers it here by module augmentation (TypeScript's declaration
 * merging), so `store.collection('follows')` is a `Collection<FollowDoc>` wherever it is called,
 * without the caller importing the projection (queries/ may import projections/store/ only):
 *
 *     declare module '../store/port.ts' {
 *       interface ReadModels { follows: FollowDoc }
 *     }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by module augmentation
export interface ReadModels {}

/** The name of a registered read model. */
export type ReadModelName = keyof ReadModels & string;

/** The document type of registered read model `N` (what queries name it by: they do not import projections). */
export type ReadModel<N extends ReadModelName> = ReadModels[N];

/** The document type of collection `N`: its registered read model's, or Doc for any other name. */
export type DocOf<N extends string> = N extends ReadModelName ? ReadModels[N] : Doc;

/** A MongoDB query document. */
export type Filter = Record<string, unknown>;

/** Fields an update writes: the document's own, or dotted paths into them. */
export type UpdateFields<T> = { [K in Exclude<keyof T, '_id'>]?: T[K] } & { [path: `${string}.${string}`]: unknown };

/**
 * A MongoDB update document: operators ($set, $inc, $push, ...) or a whole replacement document.
 * For a read model's collection, `$set` and `$setOnInsert` are checked against its document type, so
 * a field a projection writes is declared there; an untyped collection takes any update.
 */
export type Update<T = Doc> = Doc extends T ? Record<string, unknown> : TypedUpdate<T>;

export type TypedUpdate<T> = {
  $set?: UpdateFields<T>;
  $setOnInsert?: UpdateFields<T>;
  [operator: `$${string}`]: unknown;
};
export type SortSpec = Record<string, 1 | -1>;

export interface IndexSpec {
  name: string;
  keys: SortSpec;
  unique?: boolean;
}

/** Names of the fresh collections a rebuild fills before it swaps them in (see ProjectionRunner.rebuild). */
export const REBUILD_PREFIX = '_rebuild_';

export interface CollectionSpec {
  name: string;
  indexes: IndexSpec[];
}

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  /** Inclusion (1) or exclusion (0) projection. */
  projection?: Record<string, 0 | 1>;
  /**
   * The name of the index to answer with (MongoDB's `hint`), where a heuristic planner would pick
   * a worse one (several indexes match; only the caller knows which is selective).
   */
  hint?: string;
}

export interface CountOptions {
  hint?: string;
  /** Counts at most this many documents (MongoDB's `countDocuments` limit): a capped count stops scanning there. */
  limit?: number;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upserted: boolean;
}

/** How a query was answered; used by tests to prove that request-path reads are index-served. */
export interface QueryPlan {
  index: string | null;
  /** Documents examined (in memory) or `totalDocsExamined` (MongoDB). */
  examined: number;
  /** In memory, an index intersection only ('AND_SORTED', MongoDB's name): the stage answering. */
  stage?: string;
  /** In memory, an index intersection only: the index entries its walk read. */
  keysExamined?: number;
}

export class DuplicateKeyError extends Error {
  readonly code = 'duplicate_key';
  readonly status = 409;
}

/**
 * A collection of documents of type `T`. Reads answer `T` as the projection wrote it (a `projection`
 * option leaves fields out, as MongoDB's driver types do too); writes are checked against `T`.
 */
export interface Collection<T extends DocBase = Doc> {
  readonly name: string;
  findOne(filter: Filter, options?: FindOptions): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter?: Filter, options?: CountOptions): Promise<number>;
  insertOne(doc: T): Promise<void>;
  updateOne(filter: Filter, update: Update<T>, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update<T>): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * The projection write: applies `update` to the document `id` (upserting it) only when the
   * document's `_pos` is lower than `position`, and sets `_pos` to `position`. Returns false when
   * the document had already seen that position (an at-least-once redelivery).
   */
  applyAt(id: string, position: number, update: Update<T>): Promise<boolean>;
  explain(filter: Filter, options?: FindOptions): Promise<QueryPlan>;
}

export interface ReadStore {
  readonly name: string;
  /** The collection `name`, typed by its registered read model (ReadModels), else untyped. */
  collection<N extends string>(name: N): Collection<DocOf<N>>;
  /** Creates the collection's declared indexes (idempotent). */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  dropCollection(name: string): Promise<void>;
  /** Renames each `from` to its `to`, replacing the target. Embedded: atomic as a whole; MongoDB: per collection. */
  swapCollections(pairs: Array<[from: string, to: string]>): Promise<void>;
  listCollections(): Promise<string[]>;
  /**
   * Optional bulk loading for a replay from far behind: writes to these collections may leave
   * their non-unique indexes stale until buildIndexes (a query that needs one builds it first).
   * The embedded store implements it; MongoDB maintains its indexes itself.
   */
  deferIndexes?(collections: string[]): void;
  buildIndexes?(collections: string[]): void;
  /**
   * Optional: makes the writes so far durable. The SQLite store keeps its writes in one open
   * transaction until then, so that what a crash loses is only what the checkpoints do not cover.
   * MongoDB and memory have none.
   */
  commit?(): void;
  /**
   * Optional: the projection runner has applied a batch and moved its checkpoints, a point at which
   * the read models and their checkpoints agree. A store that commits (SQLite) commits at such
   * points, grouping batches that come close together into one commit.
   */
  checkpointed?(): void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An adapter's untyped collection as the collection of read model `N`. The adapters store what the
 * projections write and hand it back as it is, so the projection's declared type holds; this is the
 * one place the port takes it on trust (MongoDB's driver does the same with `Collection<TSchema>`).
 */
export function typedCollection<N extends string>(collection: Collection): Collection<DocOf<N>> {
  return collection as unknown as Collection<DocOf<N>>;
}
