// The SQLite read store (READ_STORE=sqlite): the in-memory engine's planner, key encoding, matching
// and update operators over documents and index entries kept in tables of one SQLite file, durable
// with the projections' checkpoints. By concern, in sqlite/: docs.ts (a collection's documents),
// tree.ts (an index's entries), store.ts (the store: tables, transactions, renames).
export { SqliteReadStore, copySqliteReadStore, type SqliteReadStoreOptions } from './sqlite/store.ts';
