import { List, Map as IMap } from 'immutable';

export interface SignalSeen {
  at: string;
  post_id: string;
}

/**
 * The agent's duplicate-signal window: signal_hash -> its latest post in the last 48 h, in post
 * order. Persistent (Immutable.js Map and List): each post makes a new version sharing the old
 * one's structure, so folding a post costs about the same with 5 or 5,000 posts in the window, and
 * earlier versions are never changed.
 */
export class SignalWindow {
  static readonly EMPTY = new SignalWindow(IMap(), List());

  private constructor(
    /** hash -> its latest entry. */
    private readonly latest: IMap<string, SignalSeen>,
    /** Every entry in post order, superseded ones (a hash posted again) included until pruned. */
    private readonly order: List<readonly [string, SignalSeen]>,
  ) {}

  get(hash: string): SignalSeen | undefined {
    return this.latest.get(hash);
  }

  has(hash: string): boolean {
    return this.latest.has(hash);
  }

  get size(): number {
    return this.latest.size;
  }

  /** The hashes in the window, oldest post first. */
  *keys(): IterableIterator<string> {
    for (const [hash, seen] of this.order) if (this.latest.get(hash) === seen) yield hash;
  }

  /** The window after a post at `seen.at`: entries at or before `from` dropped, the post's entry last. */
  with(hash: string, seen: SignalSeen, from: string): SignalWindow {
    let latest = this.latest.asMutable();
    let order = this.order;
    let first = order.first();
    while (first !== undefined && first[1].at <= from) {
      if (latest.get(first[0]) === first[1]) latest = latest.delete(first[0]);
      order = order.shift();
      first = order.first();
    }
    latest = latest.set(hash, seen);
    return new SignalWindow(latest.asImmutable(), order.push([hash, seen] as const));
  }
}
