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
