// The embedded read store: collections in memory answering MongoDB queries. Documents live in a
// Map by _id; declared indexes are B-trees over compound keys in BSON order, each key encoded as
// one string (updates.ts, keyComponent) so the tree compares with plain string comparison, and
// request-path queries read a few index entries instead of scanning. mingo checks whatever the
// index bounds do not prove, and updates go through the fast applier in updates.ts (projection
// writes mostly through its simple-update path, which also lets index upkeep skip the indexes
// whose fields an update left as they were).
//
// By concern, in memory/: keys.ts (index keys and the Index), planner.ts (filter bounds, index
// choice, range scans), query.ts (sort, projection, compiled filters), collection.ts (a
// collection's data and its handle: reads and all-or-nothing writes), store.ts (the store).
export type { StoredIndex } from './memory/keys.ts';
export { MemoryReadStore, type StoredCollection } from './memory/store.ts';
export { KeyTree } from './trees.ts';
