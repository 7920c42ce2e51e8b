import { LRUCache } from 'lru-cache';

/** How far a cache may grow: at most `max` entries, and each for at most `ttlMs` when given. */
export interface CacheBound {
  /** The most entries kept; the least recently used one goes to make room. */
  max: number;
  /** How long an entry is kept after it is set, measured on `now`: gone once `ttlMs` have passed (at least 2). */
  ttlMs?: number;
  /** The clock of `ttlMs` in milliseconds (the injected clock's time); performance.now() if absent. */
  now?: () => number;
}

/**
 * The one in-process cache of the service: lru-cache with its bound stated where it is created.
 * Values may be anything (null included); a key that is absent or expired reads as undefined.
 * Expiry is checked against `now` on every read (no timers), so a test that moves the clock
 * sees an entry expire at once.
 */
export class BoundedCache<K extends NonNullable<unknown>, V> {
  readonly #entries: LRUCache<K, { value: V }>;

  constructor(readonly bound: CacheBound) {
    const { max, ttlMs, now } = bound;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`A cache needs a whole max of at least 1, not ${max}`);
    if (ttlMs !== undefined && (!Number.isInteger(ttlMs) || ttlMs < 2)) throw new RangeError(`A cache needs a whole ttlMs of at least 2, not ${ttlMs}`);
    // lru-cache keeps an entry while its age is at most `ttl`; one less makes it go at `ttlMs`.
    // ttlResolution 0 reads the clock on every check rather than once per millisecond of real time.
    const expiry = ttlMs === undefined ? {} : { ttl: ttlMs - 1, ttlResolution: 0, ...(now ? { perf: { now } } : {}) };
    this.#entries = new LRUCache<K, { value: V }>({ max, ...expiry });
  }

  get(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.#entries.set(key, { value });
  }

  /** The value for `key`, made by `make` (and kept) when absent. */
  remember(key: K, make: (key: K) => V): V {
    const hit = this.#entries.get(key);
    if (hit !== undefined) return hit.value;
    const value = make(key);
    this.#entries.set(key, { value });
    return value;
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
