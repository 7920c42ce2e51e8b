export interface SignalSeen {
  at: string;
  post_id: string;
}

/** How many entries the young generation takes before it is merged into the old one. */
const YOUNG_MAX = 32;

/**
 * The agent's duplicate-signal window: signal_hash -> its latest post in the last 48 h, in post
 * order. Persistent in two generations of native Maps, neither ever mutated once a version is
 * made: a post copies only the young one (at most 32 entries), and every 32 posts the young one is
 * merged into a new old one, dropping what has expired. Folding a post therefore costs about the
 * same with 5 or 5,000 posts in the window, and earlier versions keep their own view.
 */
export class SignalWindow {
  static readonly EMPTY = new SignalWindow(new Map(), new Map(), '');

  private constructor(
    private readonly old: ReadonlyMap<string, SignalSeen>,
    /** Newer than everything in `old`; an entry here supersedes the same hash there. */
    private readonly young: ReadonlyMap<string, SignalSeen>,
    /** Entries at or before this time have left the window (they may still sit in `old`). */
    private readonly from: string,
  ) {}

  get(hash: string): SignalSeen | undefined {
    const seen = this.young.get(hash) ?? this.old.get(hash);
    return seen !== undefined && seen.at > this.from ? seen : undefined;
  }

  has(hash: string): boolean {
    return this.get(hash) !== undefined;
  }

  /** The hashes in the window, oldest post first. */
  *keys(): IterableIterator<string> {
    for (const [hash, seen] of this.old) if (seen.at > this.from && !this.young.has(hash)) yield hash;
    for (const [hash, seen] of this.young) if (seen.at > this.from) yield hash;
  }

  /** The window after a post: entries at or before `from` leave it, the post's entry goes last. */
  with(hash: string, seen: SignalSeen, from: string): SignalWindow {
    if (this.young.size < YOUNG_MAX) {
      const young = new Map(this.young);
      young.delete(hash);
      young.set(hash, seen);
      return new SignalWindow(this.old, young, from);
    }
    const old = new Map<string, SignalSeen>();
    for (const source of [this.old, this.young]) {
      for (const [h, s] of source) {
        if (s.at <= from) continue;
        old.delete(h);
        old.set(h, s);
      }
    }
    old.delete(hash);
    return new SignalWindow(old, new Map([[hash, seen]]), from);
  }
}
