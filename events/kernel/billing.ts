import type { PaidTier } from '../credits.ts';
import { PAID_TIERS } from '../credits.ts';

/** Pro, Elite and Builder are bought by the month (free is free, enterprise is contracted). */
export function isPaidTier(tier: string): tier is PaidTier {
  return (PAID_TIERS as readonly string[]).includes(tier);
}

/**
 * Billing cycles: an agent's allocation is granted on its billing day each month, the day of
 * registration (or upgrade) clamped to the month's last day, at the same time of day (UTC).
 */
export function cycleStart(anchorIso: string, cycle: number): Date {
  const anchor = new Date(anchorIso);
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + cycle;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const day = Math.min(anchor.getUTCDate(), lastDay);
  return new Date(Date.UTC(y, m, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

/** Cycles that have started by `now` (cycle 0 starts at the anchor). */
export function currentCycle(anchorIso: string, now: Date): number {
  const anchor = new Date(anchorIso);
  let cycle = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  if (cycle < 0) return 0;
  while (cycle > 0 && cycleStart(anchorIso, cycle) > now) cycle--;
  while (cycleStart(anchorIso, cycle + 1) <= now) cycle++;
  return cycle;
}

/** The billing day after `from` (a paid month's end extended by one month): the next cycle start of the anchor after it. */
export function nextBillingDay(anchorIso: string, from: Date): Date {
  return cycleStart(anchorIso, currentCycle(anchorIso, from) + 1);
}

/** The renewal order of a paid month is created this long before its billing day. */
export const RENEWAL_NOTICE_MS = 3 * 24 * 3600_000;
