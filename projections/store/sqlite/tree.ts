// An index of the SQLite read store: its entries (encoded key -> document _id) in a table of their
// own, `(k BLOB PRIMARY KEY, id TEXT) WITHOUT ROWID`, behind the IndexTree the in-memory engine's
// planner walks (trees.ts). Keys are the memory engine's one-byte strings (updates.ts,
// keyComponent) stored as latin1 bytes, so SQLite's BLOB order (memcmp, shorter first) is the
// order of JavaScript's `<` on the strings. Range walks read the table a page of entries at a time
// (never an open iterator: a walk calls back into the store, which reads other tables meanwhile).
import type { Database, Statement } from 'better-sqlite3';
import type { IndexTree, KeyCursor } from '../trees.ts';

/** Entries read per query of a walk: small first (most walks stop after a page of results), then more. */
const FIRST_PAGE = 32;
const MAX_PAGE = 2048;

/** Above every key (keys never run to 256 chars of 0xff). */
const TOP = '\u00ff'.repeat(256);

const toBlob = (key: string): Buffer => Buffer.from(key, 'latin1');
const fromBlob = (blob: Buffer): string => blob.toString('latin1');

/** A page of entries, raw rows [k, id]: bound by `from`, the far bound and a limit. */
type PageStatement = Statement<[Buffer, Buffer, number], [Buffer, string]>;

interface Statements {
  set: Statement<[Buffer, string]>;
  delete: Statement<[Buffer]>;
  count: Statement<[], number>;
  countRange: Statement<[Buffer, Buffer], number>;
  /** [lo, hi] ascending (`from` inclusive) and the next page (`from` exclusive); descending likewise. */
  ascFrom: PageStatement;
  ascAfter: PageStatement;
  descFrom: PageStatement;
  descBefore: PageStatement;
  clear: Statement<[]>;
}

export class SqliteTree implements IndexTree {
  private s: Statements;

  constructor(
    private readonly db: Database,
    readonly table: string,
  ) {
    const t = `"${table}"`;
    const page = (sql: string): PageStatement => db.prepare<[Buffer, Buffer, number], [Buffer, string]>(sql).raw(true);
    this.s = {
      set: db.prepare<[Buffer, string]>(`INSERT OR REPLACE INTO ${t} (k, id) VALUES (?, ?)`),
      delete: db.prepare<[Buffer]>(`DELETE FROM ${t} WHERE k = ?`),
      count: db.prepare<[], number>(`SELECT count(*) FROM ${t}`).pluck(),
      countRange: db.prepare<[Buffer, Buffer], number>(`SELECT count(*) FROM ${t} WHERE k >= ? AND k <= ?`).pluck(),
      ascFrom: page(`SELECT k, id FROM ${t} WHERE k >= ? AND k <= ? ORDER BY k LIMIT ?`),
      ascAfter: page(`SELECT k, id FROM ${t} WHERE k > ? AND k <= ? ORDER BY k LIMIT ?`),
      descFrom: page(`SELECT k, id FROM ${t} WHERE k <= ? AND k >= ? ORDER BY k DESC LIMIT ?`),
      descBefore: page(`SELECT k, id FROM ${t} WHERE k < ? AND k >= ? ORDER BY k DESC LIMIT ?`),
      clear: db.prepare<[]>(`DELETE FROM ${t}`),
    };
  }

  /** Creates the table of an index (empty). */
  static create(db: Database, table: string): SqliteTree {
    db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (k BLOB PRIMARY KEY, id TEXT NOT NULL) WITHOUT ROWID`);
    return new SqliteTree(db, table);
  }

  get size(): number {
    return this.s.count.get() ?? 0;
  }

  set(key: string, value: string): void {
    this.s.set.run(toBlob(key), value);
  }

  delete(key: string): boolean {
    return this.s.delete.run(toBlob(key)).changes > 0;
  }

  clear(): void {
    this.s.clear.run();
  }

  /** Entries [from bound, far bound] in one direction, a page at a time. */
  private *walk(start: string, end: string, reverse: boolean): Generator<[string, string]> {
    if (reverse ? end > start : end < start) return;
    const endBlob = toBlob(end);
    let rows = (reverse ? this.s.descFrom : this.s.ascFrom).all(toBlob(start), endBlob, FIRST_PAGE);
    let size = FIRST_PAGE;
    for (;;) {
      for (const [k, id] of rows) yield [fromBlob(k), id];
      if (rows.length < size) return;
      size = Math.min(MAX_PAGE, size * 4);
      const last = rows[rows.length - 1][0];
      rows = (reverse ? this.s.descBefore : this.s.ascAfter).all(last, endBlob, size);
    }
  }

  entries(from: string): Generator<[string, string]> {
    return this.walk(from, TOP, false);
  }

  entriesReversed(from: string): Generator<[string, string]> {
    return this.walk(from, '', true);
  }

  countRange(lo: string, hi: string): number {
    if (hi < lo) return 0;
    return this.s.countRange.get(toBlob(lo), toBlob(hi)) ?? 0;
  }

  scan(lo: string, hi: string, reverse: boolean, visit: (value: string) => boolean): boolean {
    if (hi < lo) return true;
    const endBlob = toBlob(reverse ? lo : hi);
    let rows = (reverse ? this.s.descFrom : this.s.ascFrom).all(toBlob(reverse ? hi : lo), endBlob, FIRST_PAGE);
    let size = FIRST_PAGE;
    for (;;) {
      for (const row of rows) if (!visit(row[1])) return false;
      if (rows.length < size) return true;
      size = Math.min(MAX_PAGE, size * 4);
      rows = (reverse ? this.s.descBefore : this.s.ascAfter).all(rows[rows.length - 1][0], endBlob, size);
    }
  }

  pairFrom(key: string, strict: boolean): [string, string] | undefined {
    const row = (strict ? this.s.ascAfter : this.s.ascFrom).get(toBlob(key), toBlob(TOP), 1);
    return row === undefined ? undefined : [fromBlob(row[0]), row[1]];
  }

  cursor(lo: string, hi: string, reverse: boolean): KeyCursor {
    return new SqliteCursor(this, lo, hi, reverse);
  }

  sorted(): { keys: string[]; vals: string[] | null } {
    const keys: string[] = [];
    const vals: string[] = [];
    for (const [k, v] of this.walk('', TOP, false)) {
      keys.push(k);
      vals.push(v);
    }
    return { keys, vals };
  }

  /** @internal A page of a cursor's walk: from `start` (inclusive or not) towards `end`. */
  _page(start: string, inclusive: boolean, end: string, reverse: boolean, size: number): Array<[Buffer, string]> {
    const s = reverse ? (inclusive ? this.s.descFrom : this.s.descBefore) : inclusive ? this.s.ascFrom : this.s.ascAfter;
    return s.all(toBlob(start), toBlob(end), size);
  }
}

/** SqliteTree's cursor: a page of entries and a position in it; a seek past the page reads from the target. */
class SqliteCursor implements KeyCursor {
  key: string | undefined = undefined;
  private rows: Array<[Buffer, string]> = [];
  private keys: string[] = [];
  private i = 0;
  private size = FIRST_PAGE;
  private exhausted = false;

  constructor(
    private readonly tree: SqliteTree,
    private readonly lo: string,
    private readonly hi: string,
    private readonly reverse: boolean,
  ) {
    if (hi < lo) {
      this.exhausted = true;
      return;
    }
    this.load(reverse ? hi : lo, true);
  }

  private load(start: string, inclusive: boolean): void {
    this.rows = this.tree._page(start, inclusive, this.reverse ? this.lo : this.hi, this.reverse, this.size);
    this.keys = this.rows.map((r) => fromBlob(r[0]));
    this.exhausted = this.rows.length < this.size;
    this.i = 0;
    this.settle();
  }

  private settle(): void {
    if (this.i < this.keys.length) {
      this.key = this.keys[this.i];
      return;
    }
    if (this.exhausted || this.keys.length === 0) {
      this.key = undefined;
      return;
    }
    this.size = Math.min(MAX_PAGE, this.size * 4);
    this.load(this.keys[this.keys.length - 1], false);
  }

  value(): string {
    return this.rows[this.i][1];
  }

  next(): void {
    if (this.key === undefined) return;
    this.i++;
    this.settle();
  }

  seek(target: string): void {
    const key = this.key;
    if (key === undefined) return;
    if (this.reverse ? key <= target : key >= target) return;
    const last = this.keys[this.keys.length - 1];
    if (this.reverse ? last <= target : last >= target) {
      while (this.reverse ? this.keys[this.i] > target : this.keys[this.i] < target) this.i++;
      this.settle();
      return;
    }
    if (this.reverse ? target < this.lo : target > this.hi) {
      this.key = undefined;
      return;
    }
    this.size = FIRST_PAGE;
    this.load(target, true);
  }
}
