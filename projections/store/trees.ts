// The trees behind the embedded store's indexes: ordered maps from encoded index keys (one-byte
// strings, see updates.ts keyComponent) to document _ids.

/** What an index needs of its tree: ordered entries, range counts and point lookups. */
export interface IndexTree {
  readonly size: number;
  set(key: string, value: string): void;
  delete(key: string): boolean;
  /** The entries from the first key >= `from` on, ascending. */
  entries(from: string): Generator<[string, string]>;
  /** The entries from the last key <= `from` back, descending. */
  entriesReversed(from: string): Generator<[string, string]>;
  /** The number of keys in [lo, hi]. */
  countRange(lo: string, hi: string): number;
  /**
   * Calls `visit` with the value of every key in [lo, hi], ascending (descending when `reverse`),
   * until it returns false: the range scan of queries, without a generator or a pair per entry.
   * False when `visit` stopped it.
   */
  scan(lo: string, hi: string, reverse: boolean, visit: (value: string) => boolean): boolean;
  /** The first entry whose key is >= `key` (or > `key` when `strict`). */
  pairFrom(key: string, strict: boolean): [string, string] | undefined;
  /**
   * A cursor over the keys in [lo, hi], ascending (descending when `reverse`), that can also leap
   * forward (seek): what an index intersection walks its ranges with.
   */
  cursor(lo: string, hi: string, reverse: boolean): KeyCursor;
  /**
   * Every key and its value, in key order (what fromSorted takes back); vals is null when every
   * value is the one the tree's derive function reads from its key.
   */
  sorted(): { keys: string[]; vals: string[] | null };
}

/**
 * A position in a key range of a tree, moving one way (ascending, or descending when reversed).
 * The tree must not change while a cursor is in use (the store's reads are synchronous).
 */
export interface KeyCursor {
  /** The current key; undefined once past the range. */
  readonly key: string | undefined;
  /** The current key's value (its document's _id). */
  value(): string;
  /** Moves to the next key of the range. */
  next(): void;
  /**
   * Moves to the first key at or after `target` in the cursor's direction (>= ascending, <=
   * descending); never moves back.
   */
  seek(target: string): void;
}

// ---------------------------------------------------------------------------------------------
// Index trees: a B+ tree from unique string keys (the encoded index keys) to string values (the
// documents' _ids), with leaves linked both ways for range scans. Written for this store rather
// than taken from a general library: keys compare with the engine's `<` inline, and a node that
// overflows where the insertion happened at one of its ends splits there, so the one-end inserts
// of replay (an increasing seq, newest first) leave full nodes behind. Deletes unlink the nodes
// they empty and leave others as they are (deletes are rare next to inserts in a read model).

const NODE_MAX = 32;
/** The values of every leaf of a tree that derives its values from its keys (never written). */
const DERIVED: string[] = [];
Object.freeze(DERIVED);

class Leaf {
  prev: Leaf | null = null;
  next: Leaf | null = null;
  constructor(
    readonly keys: string[],
    /** DERIVED while the tree derives its values from the keys. */
    public vals: string[],
  ) {}
}

class Branch {
  /** seps[i] divides kids[i] (keys below it) from kids[i + 1] (keys from it on). */
  constructor(
    readonly seps: string[],
    readonly kids: Array<Leaf | Branch>,
  ) {}
}

interface Split {
  sep: string;
  right: Leaf | Branch;
}

/** [from, to) runs splitting `n` items into as few nodes as NODE_MAX allows, of even sizes. */
function chunks(n: number): Array<[number, number]> {
  const count = Math.ceil(n / NODE_MAX);
  const out: Array<[number, number]> = [];
  for (let i = 0; i < count; i++) out.push([Math.floor((i * n) / count), Math.floor(((i + 1) * n) / count)]);
  return out;
}

/** Position of the first key >= key. */
function lowerBound(keys: string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Position of the first key > key. */
function upperBound(keys: string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A B+ tree of encoded keys. Given a derive function (the store's: an index key ends with its
 * document's _id), it stores no values while every value is the one derived from its key, and
 * derives them when read; the first value that differs makes it store them all from then on.
 * @internal Exported for its tests.
 */
export class KeyTree implements IndexTree {
  private root: Leaf | Branch;
  /** The leftmost and rightmost leaves: no separator bounds them from below (above). */
  private first: Leaf;
  private last: Leaf;
  size = 0;
  /** Set while the values are derived from the keys (every leaf's vals is then DERIVED). */
  private derive: ((key: string) => string) | null;

  constructor(derive: ((key: string) => string) | null = null) {
    this.derive = derive;
    this.root = this.first = this.last = new Leaf([], derive === null ? [] : DERIVED);
  }

  /**
   * A tree of sorted, distinct keys, built bottom-up: full leaves, then each level of branches.
   * `vals` null: every value is derive(key).
   */
  static fromSorted(keys: string[], vals: string[] | null, derive: ((key: string) => string) | null = null): KeyTree {
    if (vals === null && derive === null) throw new Error('fromSorted: values or a derive function');
    const tree = new KeyTree(vals === null ? derive : null);
    const n = keys.length;
    if (n === 0) return tree;
    const leaves: Leaf[] = [];
    let prev: Leaf | null = null;
    for (const [from, to] of chunks(n)) {
      const leaf = new Leaf(keys.slice(from, to), vals === null ? DERIVED : vals.slice(from, to));
      leaf.prev = prev;
      if (prev !== null) prev.next = leaf;
      prev = leaf;
      leaves.push(leaf);
    }
    tree.first = leaves[0];
    tree.last = leaves[leaves.length - 1];
    // Each node's smallest key: the separator in front of it in its parent.
    let lows = leaves.map((leaf) => leaf.keys[0]);
    let level: Array<Leaf | Branch> = leaves;
    while (level.length > 1) {
      const up: Branch[] = [];
      const upLows: string[] = [];
      for (const [from, to] of chunks(level.length)) {
        up.push(new Branch(lows.slice(from + 1, to), level.slice(from, to)));
        upLows.push(lows[from]);
      }
      level = up;
      lows = upLows;
    }
    tree.root = level[0];
    tree.size = n;
    return tree;
  }

  sorted(): { keys: string[]; vals: string[] | null } {
    const keys: string[] = [];
    const vals: string[] | null = this.derive === null ? [] : null;
    for (let leaf: Leaf | null = this.first; leaf !== null; leaf = leaf.next) {
      for (let i = 0; i < leaf.keys.length; i++) {
        keys.push(leaf.keys[i]);
        vals?.push(leaf.vals[i]);
      }
    }
    return { keys, vals };
  }

  /** Stores every value from now on (a value differs from the one its key derives). */
  private storeValues(derive: (key: string) => string): void {
    for (let leaf: Leaf | null = this.first; leaf !== null; leaf = leaf.next) leaf.vals = leaf.keys.map(derive);
    this.derive = null;
  }

  /** Adds an entry, or replaces the value of an existing key. */
  set(key: string, value: string): void {
    const derive = this.derive;
    if (derive !== null && derive(key) !== value) this.storeValues(derive);
    const stored = this.derive === null;
    // A key below every key goes first in the leftmost leaf, a key above every key last in the
    // rightmost one, without a descent (the inserts of replay, newest first or last).
    const first = this.first;
    let n = first.keys.length;
    if (n > 0 && n < NODE_MAX && key < first.keys[0]) {
      first.keys.unshift(key);
      if (stored) first.vals.unshift(value);
      this.size++;
      return;
    }
    const last = this.last;
    n = last.keys.length;
    if (n > 0 && n < NODE_MAX && key > last.keys[n - 1]) {
      last.keys.push(key);
      if (stored) last.vals.push(value);
      this.size++;
      return;
    }
    const split = this.insert(this.root, key, value);
    if (split !== null) this.root = new Branch([split.sep], [this.root, split.right]);
  }

  private insert(node: Leaf | Branch, key: string, value: string): Split | null {
    if (node instanceof Leaf) {
      const { keys, vals } = node;
      const stored = this.derive === null;
      const n = keys.length;
      const at = lowerBound(keys, key);
      if (at < n && keys[at] === key) {
        if (stored) vals[at] = value;
        return null;
      }
      keys.push(key);
      for (let j = n; j > at; j--) keys[j] = keys[j - 1];
      keys[at] = key;
      if (stored) {
        vals.push(value);
        for (let j = n; j > at; j--) vals[j] = vals[j - 1];
        vals[at] = value;
      }
      this.size++;
      if (n < NODE_MAX) return null;
      const cut = at === n ? n : at === 0 ? 1 : (n + 1) >> 1;
      const right = new Leaf(keys.splice(cut), stored ? vals.splice(cut) : DERIVED);
      right.prev = node;
      right.next = node.next;
      if (node.next !== null) node.next.prev = right;
      node.next = right;
      if (node === this.last) this.last = right;
      return { sep: right.keys[0], right };
    }
    const i = upperBound(node.seps, key);
    const split = this.insert(node.kids[i], key, value);
    if (split === null) return null;
    node.seps.splice(i, 0, split.sep);
    node.kids.splice(i + 1, 0, split.right);
    const n = node.kids.length;
    if (n <= NODE_MAX) return null;
    const added = i + 1;
    const cut = added === n - 1 ? n - 1 : added === 1 ? 1 : n >> 1;
    const kids = node.kids.splice(cut);
    const seps = node.seps.splice(cut);
    // The separator before the moved kids goes up to the parent.
    const sep = node.seps[cut - 1];
    node.seps.length = cut - 1;
    return { sep, right: new Branch(seps, kids) };
  }

  /** Removes the entry of `key`; false when there is none. */
  delete(key: string): boolean {
    const r = this.remove(this.root, key);
    if (r === 0) return false;
    this.size--;
    if (r === 2 && this.root instanceof Branch) {
      this.root = new Leaf([], this.derive === null ? [] : DERIVED);
      this.first = this.last = this.root;
    }
    while (this.root instanceof Branch && this.root.kids.length === 1) this.root = this.root.kids[0];
    return true;
  }

  /** 0: not found; 1: removed; 2: removed, and `node` is now empty. */
  private remove(node: Leaf | Branch, key: string): 0 | 1 | 2 {
    if (node instanceof Leaf) {
      const at = lowerBound(node.keys, key);
      if (at >= node.keys.length || node.keys[at] !== key) return 0;
      node.keys.splice(at, 1);
      if (this.derive === null) node.vals.splice(at, 1);
      return node.keys.length === 0 ? 2 : 1;
    }
    const i = upperBound(node.seps, key);
    const kid = node.kids[i];
    const r = this.remove(kid, key);
    if (r !== 2) return r;
    if (kid instanceof Leaf) {
      if (kid.prev !== null) kid.prev.next = kid.next;
      if (kid.next !== null) kid.next.prev = kid.prev;
      if (kid === this.first && kid.next !== null) this.first = kid.next;
      if (kid === this.last && kid.prev !== null) this.last = kid.prev;
    }
    node.kids.splice(i, 1);
    if (node.seps.length > 0) node.seps.splice(i > 0 ? i - 1 : 0, 1);
    return node.kids.length === 0 ? 2 : 1;
  }

  /** The leaf whose key range holds `key`. */
  private leafFor(key: string): Leaf {
    let node = this.root;
    while (node instanceof Branch) node = node.kids[upperBound(node.seps, key)];
    return node;
  }

  /** The entries from the first key >= `from` on, ascending. */
  *entries(from: string): Generator<[string, string]> {
    let leaf: Leaf | null = this.leafFor(from);
    let i = lowerBound(leaf.keys, from);
    const derive = this.derive;
    while (leaf !== null) {
      const { keys, vals } = leaf;
      for (; i < keys.length; i++) yield [keys[i], derive === null ? vals[i] : derive(keys[i])];
      leaf = leaf.next;
      i = 0;
    }
  }

  /** The entries from the last key <= `from` back, descending. */
  *entriesReversed(from: string): Generator<[string, string]> {
    let leaf: Leaf | null = this.leafFor(from);
    let i = upperBound(leaf.keys, from) - 1;
    const derive = this.derive;
    while (leaf !== null) {
      const { keys, vals } = leaf;
      for (; i >= 0; i--) yield [keys[i], derive === null ? vals[i] : derive(keys[i])];
      leaf = leaf.prev;
      if (leaf !== null) i = leaf.keys.length - 1;
    }
  }

  scan(lo: string, hi: string, reverse: boolean, visit: (value: string) => boolean): boolean {
    for (const c = new TreeCursor(this, lo, hi, reverse); c.key !== undefined; c.next()) if (!visit(c.value())) return false;
    return true;
  }

  /** The number of keys in [lo, hi]. */
  countRange(lo: string, hi: string): number {
    if (hi < lo) return 0;
    let leaf: Leaf | null = this.leafFor(lo);
    let i = lowerBound(leaf.keys, lo);
    let count = 0;
    while (leaf !== null) {
      const keys = leaf.keys;
      const n = keys.length;
      if (n > 0 && keys[n - 1] > hi) return count + Math.max(0, upperBound(keys, hi) - i);
      count += n - i;
      leaf = leaf.next;
      i = 0;
    }
    return count;
  }

  cursor(lo: string, hi: string, reverse: boolean): KeyCursor {
    return new TreeCursor(this, lo, hi, reverse);
  }

  /** @internal The leaf holding `key` (for cursors). */
  _leafFor(key: string): Leaf {
    return this.leafFor(key);
  }

  /** @internal The value of entry `i` of a leaf (for cursors). */
  _valueAt(leaf: Leaf, i: number): string {
    return this.derive === null ? leaf.vals[i] : this.derive(leaf.keys[i]);
  }

  /** The first entry whose key is >= `key` (or > `key` when `strict`). */
  pairFrom(key: string, strict: boolean): [string, string] | undefined {
    let leaf: Leaf | null = this.leafFor(key);
    let i = strict ? upperBound(leaf.keys, key) : lowerBound(leaf.keys, key);
    while (leaf !== null && i >= leaf.keys.length) {
      leaf = leaf.next;
      i = 0;
    }
    if (leaf === null) return undefined;
    const found = leaf.keys[i];
    return [found, this.derive === null ? leaf.vals[i] : this.derive(found)];
  }
}

/** KeyTree's cursor: a leaf and a position in it, moving along the leaves' links. */
class TreeCursor implements KeyCursor {
  key: string | undefined = undefined;
  private leaf: Leaf | null;
  private i: number;

  constructor(
    private readonly tree: KeyTree,
    private readonly lo: string,
    private readonly hi: string,
    private readonly reverse: boolean,
  ) {
    if (hi < lo) {
      this.leaf = null;
      this.i = 0;
      return;
    }
    this.leaf = tree._leafFor(reverse ? hi : lo);
    this.i = reverse ? upperBound(this.leaf.keys, hi) - 1 : lowerBound(this.leaf.keys, lo);
    this.settle();
  }

  value(): string {
    if (this.leaf === null) throw new Error('The cursor is past its range');
    return this.tree._valueAt(this.leaf, this.i);
  }

  next(): void {
    if (this.key === undefined) return;
    this.i += this.reverse ? -1 : 1;
    this.settle();
  }

  seek(target: string): void {
    const key = this.key;
    const leaf = this.leaf;
    if (key === undefined || leaf === null) return; // (a cursor with a key is on a leaf)
    const keys = leaf.keys;
    if (!this.reverse) {
      if (key >= target) return;
      // Within this leaf when its last key reaches the target, else from the root.
      if (keys[keys.length - 1] >= target) {
        this.i = lowerBound(keys, target);
      } else {
        this.leaf = this.tree._leafFor(target);
        this.i = lowerBound(this.leaf.keys, target);
      }
    } else {
      if (key <= target) return;
      if (keys[0] <= target) {
        this.i = upperBound(keys, target) - 1;
      } else {
        this.leaf = this.tree._leafFor(target);
        this.i = upperBound(this.leaf.keys, target) - 1;
      }
    }
    this.settle();
  }

  /** Steps over leaf ends to the entry at `i`, and checks it against the range's far bound. */
  private settle(): void {
    let leaf = this.leaf;
    if (!this.reverse) {
      while (leaf !== null && this.i >= leaf.keys.length) {
        leaf = leaf.next;
        this.i = 0;
      }
      this.leaf = leaf;
      const key = leaf === null ? undefined : leaf.keys[this.i];
      this.key = key !== undefined && key <= this.hi ? key : undefined;
    } else {
      while (leaf !== null && this.i < 0) {
        leaf = leaf.prev;
        if (leaf !== null) this.i = leaf.keys.length - 1;
      }
      this.leaf = leaf;
      const key = leaf === null ? undefined : leaf.keys[this.i];
      this.key = key !== undefined && key >= this.lo ? key : undefined;
    }
  }
}
