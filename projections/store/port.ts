// The read-store port: MongoDB semantics. Adapters: in-memory (embedded default, mingo + own
// indexes) and MongoDB. Both pass test/projections/store/contract.ts.

export type Doc = { _id: string; [field: string]: unknown };
/** A MongoDB query document. */
export type Filter = Record<string, unknown>;
/** A MongoDB update document made of operators ($set, $inc, $push, ...). */
export type Update = Record<string, unknown>;
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

export interface Collection {
  readonly name: string;
  findOne(filter: Filter, options?: FindOptions): Promise<Doc | null>;
  find(filter: Filter, options?: FindOptions): Promise<Doc[]>;
  count(filter?: Filter, options?: CountOptions): Promise<number>;
  insertOne(doc: Doc): Promise<void>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * The projection write: applies `update` to the document `id` (upserting it) only when the
   * document's `_pos` is lower than `position`, and sets `_pos` to `position`. Returns false when
   * the document had already seen that position (an at-least-once redelivery).
   */
  applyAt(id: string, position: number, update: Update): Promise<boolean>;
  explain(filter: Filter, options?: FindOptions): Promise<QueryPlan>;
}

export interface ReadStore {
  readonly name: string;
  collection(name: string): Collection;
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
  ping(): Promise<void>;
  close(): Promise<void>;
}
