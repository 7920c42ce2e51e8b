export interface SignalSeen {
  at: string;
  post_id: string;
}

/**
 * The entries of one line of versions, oldest first. Only ever appended to: a version is a range
 * of it, so appending past a version's end leaves that version's view as it was.
 */
class Entries {
  readonly hashes: string[] = [];
  readonly seen: SignalSeen[] = [];
  /** Per entry, the index of the same hash's entry before it (-1: none). */
  readonly previous: number[] = [];
  /** hash -> the index of its last entry. */
  readonly last = new Map<string, number>();

  push(hash: string, seen: SignalSeen): void {
    this.previous.push(this.last.get(hash) ?? -1);
    this.last.set(hash, this.hashes.length);
    this.hashes.push(hash);
    this.seen.push(seen);
  }
}

/**
 * The agent's duplicate-signal window: signal_hash -> its latest post in the last 48 h, in post
 * order. Persistent: each version is a range [start, end) of an append-only list of entries
 * shared with the versions before it, so folding a post appends one entry (and moves `start`
 * past the expired ones) instead of copying the window. Extending a version that is not the
 * newest of its list (a fork, which the command bus does not make) copies its live entries into a
 * new list; so does a list whose expired part has grown larger than its live part.
 */
export class SignalWindow {
  static readonly EMPTY = new SignalWindow(new Entries(), 0, 0, '');

  private constructor(
    private readonly entries: Entries,
    private readonly start: number,
    private readonly end: number,
    /** Entries at or before this time have left the window. */
    private readonly from: string,
  ) {}

  /** The index of the hash's latest entry in this version, or -1. */
  private indexOf(hash: string): number {
    const { last, previous } = this.entries;
    let i = last.get(hash) ?? -1;
    while (i >= this.end) i = previous[i];
    return i >= this.start ? i : -1;
  }

  get(hash: string): SignalSeen | undefined {
    const i = this.indexOf(hash);
    if (i < 0) return undefined;
    const seen = this.entries.seen[i];
    return seen.at > this.from ? seen : undefined;
  }

  has(hash: string): boolean {
    return this.get(hash) !== undefined;
  }

  /** The hashes in the window, oldest post first. */
  *keys(): IterableIterator<string> {
    const { hashes, seen } = this.entries;
    for (let i = this.start; i < this.end; i++) if (seen[i].at > this.from && this.indexOf(hashes[i]) === i) yield hashes[i];
  }

  /** The window after a post: entries at or before `from` leave it, the post's entry goes last. */
  with(hash: string, seen: SignalSeen, from: string): SignalWindow {
    let entries = this.entries;
    let start = this.start;
    let end = this.end;
    const times = entries.seen;
    while (start < end && times[start].at <= from) start++;
    if (end !== entries.hashes.length || (start > 64 && start > end - start)) {
      const copy = new Entries();
      for (let i = start; i < end; i++) copy.push(entries.hashes[i], times[i]);
      entries = copy;
      end -= start;
      start = 0;
    }
    entries.push(hash, seen);
    return new SignalWindow(entries, start, end + 1, from);
  }
}
