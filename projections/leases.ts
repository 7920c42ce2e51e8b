// Leases in the read store: one active projector per projection set when several projector
// processes share a MongoDB read store. A lease is a document {_id, owner, expires_at} taken and
// renewed by one conditional upsert (an atomic compare-and-set: it matches only when the caller
// holds the lease or it has expired; otherwise the upsert collides with the _id and is refused).
// A crashed owner stops renewing; once its lease has expired another projector takes it and
// continues from the checkpoints in the store.
import type { Clock } from '../events/kernel/clock.ts';
import type { ReadStore } from './store/port.ts';
import { errorCode } from './store/records.ts';

export const LEASES = '_leases';

function isDuplicate(err: unknown): boolean {
  return errorCode(err) === 'duplicate_key';
}

export class Lease {
  /** When the lease this process last took or renewed expires (ms since the epoch); 0 when not held. */
  expiresAt = 0;

  constructor(
    private readonly store: ReadStore,
    readonly name: string,
    readonly owner: string,
    readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}

  /** Takes the lease, or renews it when held: true when this owner holds it until now + ttl. */
  async acquire(): Promise<boolean> {
    const now = this.clock.now().getTime();
    try {
      await this.store
        .collection(LEASES)
        .updateOne(
          { _id: this.name, $or: [{ owner: this.owner }, { expires_at: { $lte: now } }] },
          { $set: { owner: this.owner, expires_at: now + this.ttlMs, renewed_at: now } },
          { upsert: true },
        );
    } catch (err) {
      if (isDuplicate(err)) {
        this.expiresAt = 0;
        return false;
      }
      throw err;
    }
    this.expiresAt = now + this.ttlMs;
    return true;
  }

  /** Gives the lease up (a clean stop), so that a standby takes over without waiting for expiry. */
  async release(): Promise<void> {
    this.expiresAt = 0;
    await this.store.collection(LEASES).deleteOne({ _id: this.name, owner: this.owner });
  }

  /** The current holder and expiry, if any. */
  async holder(): Promise<{ owner: string; expires_at: number } | null> {
    const doc = await this.store.collection(LEASES).findOne({ _id: this.name });
    if (doc === null || typeof doc.owner !== 'string' || typeof doc.expires_at !== 'number') return null;
    return { owner: doc.owner, expires_at: doc.expires_at };
  }
}

export interface LeaseKeeperHooks {
  /** The lease was taken: start the work it guards. */
  onAcquired(): Promise<void>;
  /** The lease was lost (another owner holds it now, or it expired unrenewed): stop that work. */
  onLost(): Promise<void>;
}

/**
 * Drives a lease: each tick takes it when free, renews it when held, and reports the changes.
 * A timer calls tick() every ttl/3 in the service; tests call it after moving the clock.
 */
export class LeaseKeeper {
  #held = false;
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;

  constructor(
    readonly lease: Lease,
    private readonly hooks: LeaseKeeperHooks,
    private readonly clock: Clock,
  ) {}

  get held(): boolean {
    return this.#held;
  }

  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => (this.#ticking = null));
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    let got: boolean;
    try {
      got = await this.lease.acquire();
    } catch (err) {
      // The store did not answer: the lease still counts as held until it would have expired.
      if (this.#held && this.clock.now().getTime() >= this.lease.expiresAt) {
        this.#held = false;
        await this.hooks.onLost();
      }
      throw err;
    }
    if (got && !this.#held) {
      this.#held = true;
      await this.hooks.onAcquired();
    } else if (!got && this.#held) {
      this.#held = false;
      await this.hooks.onLost();
    }
  }

  /** Ticks every ttl/3 until stop(); `onError` gets a tick's store failure. */
  run(onError: (err: unknown) => void): void {
    if (this.#timer) return;
    const every = Math.max(100, Math.floor(this.lease.ttlMs / 3));
    this.#timer = setInterval(() => void this.tick().catch(onError), every);
    this.#timer.unref();
  }

  /** Stops ticking and releases the lease if held. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#ticking?.catch(() => undefined);
    if (this.#held) {
      this.#held = false;
      await this.lease.release();
    }
  }
}
