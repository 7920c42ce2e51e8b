import type { Context } from 'koa';
import { BoundedCache } from '../events/kernel/cache.ts';
import type { Clock } from '../events/kernel/clock.ts';
import { DomainError } from '../events/kernel/errors.ts';

export interface LimitRule {
  name: string;
  points: number;
  windowMs: number;
  /**
   * Whose window a request counts in, when api/operations.ts `mount` counts the rule for an
   * operation: the caller (its agent, else the signed-in user; the client address without a
   * credential; the default), the signed-in user (a person's own writes, whatever agent they
   * own), the client address, or a key of the request.
   */
  per?: 'caller' | 'user' | 'address' | ((ctx: Context) => string);
}

export interface LimitStatus {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

/**
 * Fixed-window counters in memory, on the injected clock (so every window is testable without
 * waiting). RATE_LIMIT_SCALE multiplies every limit; 0 turns them off. Windows are per process:
 * with several API instances each enforces its own share.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** Marks with an expiry (e.g. the addresses an account signed in from), on the same clock; the 100 000 most recent kept. */
  private readonly marks = new BoundedCache<string, number>({ max: 100_000 });
  private sweeps = 0;

  constructor(
    private readonly clock: Clock,
    readonly scale: number,
  ) {}

  limitOf(rule: LimitRule): number {
    return Math.max(1, Math.floor(rule.points * this.scale));
  }

  private window(rule: LimitRule, key: string) {
    const now = this.clock.now().getTime();
    const id = `${rule.name}:${key}`;
    let w = this.windows.get(id);
    if (!w || now - w.start >= rule.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(id, w);
    }
    if (++this.sweeps % 10_000 === 0) this.sweep(now);
    return { w, now };
  }

  status(rule: LimitRule, key: string): LimitStatus {
    const limit = this.limitOf(rule);
    const { w, now } = this.window(rule, key);
    return { limit, remaining: Math.max(0, limit - w.count), reset: Math.ceil((w.start + rule.windowMs - now) / 1000) };
  }

  /** Counts one request; throws 429 (with the headers set on ctx) when the window is full. */
  hit(rule: LimitRule, key: string, ctx?: Context): LimitStatus {
    if (this.scale === 0) return { limit: 0, remaining: 0, reset: 0 };
    const limit = this.limitOf(rule);
    const { w, now } = this.window(rule, key);
    const reset = Math.max(1, Math.ceil((w.start + rule.windowMs - now) / 1000));
    if (w.count >= limit) {
      if (ctx) setHeaders(ctx, { limit, remaining: 0, reset });
      ctx?.set('Retry-After', String(reset));
      throw new DomainError(429, 'rate_limited', `Rate limit exceeded: ${limit} per ${describe(rule.windowMs)} for ${rule.name.replace(/_/g, ' ')}`, {
        retry_after: reset,
      });
    }
    // A dry run (`?dry_run=1`) checks the limit without using it up.
    if (ctx?.state.dryRun !== true) w.count++;
    const status = { limit, remaining: limit - w.count, reset };
    if (ctx) setHeaders(ctx, status);
    return status;
  }

  /** Counts one request without refusing it (a failure counted after the fact). */
  add(rule: LimitRule, key: string): void {
    if (this.scale === 0) return;
    this.window(rule, key).w.count++;
  }

  /** True when the window of `rule` for `key` is full (nothing counted). */
  full(rule: LimitRule, key: string): boolean {
    return this.scale !== 0 && this.status(rule, key).remaining === 0;
  }

  /** Remembers `key` for `ttlMs`. */
  mark(key: string, ttlMs: number): void {
    this.marks.set(key, this.clock.now().getTime() + ttlMs);
  }

  marked(key: string): boolean {
    const until = this.marks.get(key);
    if (until === undefined) return false;
    if (until > this.clock.now().getTime()) return true;
    this.marks.delete(key);
    return false;
  }

  private sweep(now: number): void {
    for (const [id, w] of this.windows) if (now - w.start > 24 * 3600_000) this.windows.delete(id);
  }
}

function describe(ms: number): string {
  if (ms % 3600_000 === 0) return ms === 3600_000 ? 'hour' : `${ms / 3600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  return `${ms / 1000} s`;
}

/** A daily burst cap under RATE_LIMIT_SCALE (0 turns it off). */
export function scaledCap(limiter: RateLimiter, cap: number): number {
  return limiter.scale === 0 ? 0 : Math.max(1, Math.floor(cap * limiter.scale));
}

export function setHeaders(ctx: Context, s: LimitStatus): void {
  ctx.set('RateLimit-Limit', String(s.limit));
  ctx.set('RateLimit-Remaining', String(s.remaining));
  ctx.set('RateLimit-Reset', String(s.reset));
}

export const LIMITS = {
  writes: { name: 'writes', points: 60, windowMs: 60_000 },
  /** The write limit counted per signed-in person (circles). */
  user_writes: { name: 'writes', points: 60, windowMs: 60_000, per: 'user' },
  reads: { name: 'reads', points: 600, windowMs: 60_000, per: 'address' },
  /** `?as_of=` reads per caller (each folds at most AS_OF_EVERY events, docs/OPERATIONS.md "As-of reads"). */
  as_of_reads: { name: 'as_of_reads', points: 30, windowMs: 60_000 },
  registrations: { name: 'registrations', points: 5, windowMs: 3600_000 },
  refused_registrations: { name: 'refused_registrations', points: 30, windowMs: 3600_000 },
  /** Registrations refused because the owner e-mail holds an agent: the answer says the address is in use, so asking is rationed. */
  owner_email_refusals: { name: 'owner_email_refusals', points: 5, windowMs: 3600_000 },
  poll_votes: { name: 'poll_votes', points: 5, windowMs: 60_000 },
  pins: { name: 'pins', points: 10, windowMs: 60_000 },
  schedules: { name: 'scheduled_posts', points: 10, windowMs: 3600_000 },
  endorse: { name: 'endorse', points: 20, windowMs: 60_000 },
  webhook_replays: { name: 'webhook_replays', points: 10, windowMs: 3600_000 },
} satisfies Record<string, LimitRule>;
