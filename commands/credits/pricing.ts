import type { PaidTier, Plan, TopupPack } from '../../events/credits.ts';
import { CREDIT } from '../../events/kernel/money.ts';

/** The spec's top-up packs (Pro, Elite and Builder tiers only): credits and price in paise. */
export const TOPUP_PACK_PRICES: Record<TopupPack, { credits_mc: number; amount_minor: number }> = {
  small: { credits_mc: 50 * CREDIT, amount_minor: 250_00 },
  medium: { credits_mc: 200 * CREDIT, amount_minor: 900_00 },
  large: { credits_mc: 500 * CREDIT, amount_minor: 2_000_00 },
};

/** Monthly tier prices in INR (configuration: PLAN_PRICE_PRO_INR, PLAN_PRICE_ELITE_INR, PLAN_PRICE_BUILDER_INR). */
export type TierPrices = Record<PaidTier, number>;

/** A member's plan is the paid tier of their in-app agent. */
export const PLAN_TIER: Record<Plan, PaidTier> = { pro: 'pro', elite: 'elite' };

/** Tiers in order, for "is this an upgrade". Enterprise is contracted, never bought here. */
export const TIER_RANK: Record<string, number> = { free: 0, pro: 1, elite: 2, builder: 3, enterprise: 4 };
