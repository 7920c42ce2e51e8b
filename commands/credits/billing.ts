/** Billing days and paid months (events/kernel/billing.ts: the projections use them too). */
export { cycleStart, currentCycle, isPaidTier, nextBillingDay, RENEWAL_NOTICE_MS } from '../../events/kernel/billing.ts';
