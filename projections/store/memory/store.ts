// The in-memory read store: its collections by name, their handles, and what read-model snapshots
// and bulk loads (a replay from far behind) need beyond the ReadStore port.
import { REBUILD_PREFIX, typedCollection, type Collection, type CollectionSpec, type Doc, type DocOf, type IndexSpec, type ReadStore } from '../port.ts';
import { CollectionData, MemoryCollection, type CollectionSource } from './collection.ts';
import { Index, type StoredIndex } from './keys.ts';

/** A collection as a read-model snapshot keeps it. */
export interface StoredCollection {
  name: string;
  indexes: IndexSpec[];
  docs: Doc[];
  /** The entries of indexes that were up to date; the others are rebuilt from the documents. */
  entries: StoredIndex[];
}

export class MemoryReadStore implements ReadStore, CollectionSource {
  readonly name = 'memory';
  private collections = new Map<string, CollectionData>();
  private handles = new Map<string, MemoryCollection>();

  collection<N extends string>(name: N): Collection<DocOf<N>> {
    return typedCollection(this.handle(name));
  }

  private handle(name: string): MemoryCollection {
    let h = this.handles.get(name);
    if (h === undefined) {
      h = new MemoryCollection(this, name);
      this.handles.set(name, h);
    }
    return h;
  }

  /** @internal Changes whenever a name may map to other collection state (handles cache it). */
  _generation = 0;

  /** @internal The state of a collection; created on first write, as MongoDB does. */
  _data(name: string, create: boolean): CollectionData | undefined {
    return create ? this._writable(name) : this.collections.get(name);
  }

  /** @internal The state of a collection, created if it does not exist yet. */
  _writable(name: string): CollectionData {
    let data = this.collections.get(name);
    if (data === undefined) {
      data = new CollectionData();
      this.collections.set(name, data);
      this._generation++;
    }
    return data;
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    this.createIndexes(spec);
  }

  private createIndexes(spec: CollectionSpec): void {
    this._writable(spec.name).createIndexes(spec.name, spec.indexes, (ixSpec) => new Index(ixSpec));
  }

  /**
   * Every collection but a rebuild's unfinished ones, with its index specs, its documents (the
   * live objects: a read-model snapshot serializes them before anything writes again) and the
   * entries of its up-to-date indexes.
   */
  exportCollections(): StoredCollection[] {
    const out: StoredCollection[] = [];
    for (const [name, data] of this.collections) {
      if (name.startsWith(REBUILD_PREFIX)) continue;
      out.push({
        name,
        indexes: data.indexes.map((ix) => ({ ...ix.spec, keys: { ...ix.spec.keys } })),
        docs: [...data.docs.values()],
        entries: data.maintained.map((ix) => ix.stored()),
      });
    }
    return out;
  }

  /**
   * Installs a collection read from a snapshot into this store, which must not hold it yet. Index
   * entries the snapshot kept are taken as they are (same documents, same code: the snapshot's
   * checks); any other index is deferred until buildIndexes, as in a bulk load.
   */
  restoreCollection(stored: StoredCollection): void {
    const { name, docs } = stored;
    if (this.collections.has(name)) throw new Error(`Cannot restore ${name}: the collection exists`);
    this.createIndexes({ name, indexes: stored.indexes });
    const data = this._writable(name);
    for (const doc of docs) {
      if (typeof doc._id !== 'string' || data.docs.has(doc._id)) throw new Error(`Cannot restore ${name}: missing or repeated _id`);
      data.docs.set(doc._id, doc);
    }
    const kept = new Map(stored.entries.map((e) => [e.name, e]));
    for (const ix of data.indexes) {
      const entries = kept.get(ix.name);
      if (entries === undefined) continue;
      if (entries.ids !== null && entries.keys.length !== entries.ids.length) throw new Error(`Cannot restore ${name}: index ${ix.name} is malformed`);
      ix.restore(entries);
    }
    data.deferExcept(
      data.indexes.filter((ix) => kept.has(ix.name)),
      name,
    );
  }

  /**
   * Bulk loading (a replay from far behind): until buildIndexes, writes to these collections
   * leave their non-unique indexes alone, which are then built in one sort each. A query that needs
   * an index builds its collection's at once, so reads stay correct meanwhile.
   */
  deferIndexes(names: string[]): void {
    for (const name of names) this._writable(name).defer();
  }

  buildIndexes(names: string[]): void {
    for (const name of names) this.collections.get(name)?.materialize();
  }

  async dropCollection(name: string): Promise<void> {
    this.collections.delete(name);
    this._generation++;
  }

  async swapCollections(pairs: Array<[from: string, to: string]>): Promise<void> {
    const moved = pairs.map(([from, to]) => {
      if (from === to) throw new Error(`Cannot rename collection ${from} to itself`);
      const data = this.collections.get(from);
      if (data === undefined) throw new Error(`Cannot rename ${from}: the collection does not exist`);
      return data;
    });
    for (const [from] of pairs) this.collections.delete(from);
    pairs.forEach(([, to], i) => this.collections.set(to, moved[i]));
    this._generation++;
  }

  async listCollections(): Promise<string[]> {
    return [...this.collections.keys()].sort();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.collections.clear();
    this.handles.clear();
    this._generation++;
  }
}
