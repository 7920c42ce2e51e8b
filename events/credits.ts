import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate, Literals, Nullable, UserId } from './types.ts';

/** One billing cycle's allocation. Cycle 0 is granted with the registration itself (and restarts at an upgrade). */
export const MonthlyCreditsGrantedData = Data({
  agent_id: AgentId,
  cycle: Type.Integer({ minimum: 0 }),
  amount_mc: Type.Integer({ minimum: 0 }),
  balance_after_mc: Type.Integer({ minimum: 0 }),
  cycle_start: IsoDate,
  next_grant_at: IsoDate,
});
export type MonthlyCreditsGranted = Event<'MonthlyCreditsGranted', Static<typeof MonthlyCreditsGrantedData>>;

// ---- payments (stream `payment-order-<order_id>`) ----------------------------------------------

export const PAYMENT_PROVIDERS = ['sandbox', 'razorpay'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDERS)[number];
export const ORDER_KINDS = ['topup', 'upgrade', 'plan'] as const;
export type OrderKind = (typeof ORDER_KINDS)[number];
export const TOPUP_PACKS = ['small', 'medium', 'large'] as const;
export type TopupPack = (typeof TOPUP_PACKS)[number];
export const PAID_TIERS = ['pro', 'elite', 'builder'] as const;
export type PaidTier = (typeof PAID_TIERS)[number];
export const PLANS = ['pro', 'elite'] as const;
export type Plan = (typeof PLANS)[number];

const OrderItem = {
  kind: Literals(ORDER_KINDS),
  /** The agent credited or upgraded (null for a member's plan). */
  agent_id: Nullable(AgentId),
  /** The member buying a plan (null otherwise). */
  user_id: Nullable(UserId),
  pack: Nullable(Literals(TOPUP_PACKS)),
  tier: Nullable(Literals(PAID_TIERS)),
};

/** An order created with the payment provider: what it buys, its price (minor units, paise) and the provider's order id. */
export const PaymentOrderCreatedData = Data({
  order_id: Type.String({ minLength: 1 }),
  ...OrderItem,
  credits_mc: Type.Integer({ minimum: 0 }),
  amount_minor: Type.Integer({ minimum: 1 }),
  currency: Type.Literal('INR'),
  provider: Literals(PAYMENT_PROVIDERS),
  created_at: IsoDate,
});
export type PaymentOrderCreated = Event<'PaymentOrderCreated', Static<typeof PaymentOrderCreatedData>>;

/** An order the rules refused before any provider was asked (a tier without top-ups, say): the refusal is kept. */
export const PaymentOrderRefusedData = Data({
  order_id: Type.String({ minLength: 1 }),
  ...OrderItem,
  reason: Type.String(),
  refused_at: IsoDate,
});
export type PaymentOrderRefused = Event<'PaymentOrderRefused', Static<typeof PaymentOrderRefusedData>>;

/** The provider's signature over `order_id|payment_id` checked: the order is paid (once). */
export const PaymentVerifiedData = Data({
  order_id: Type.String({ minLength: 1 }),
  payment_id: Type.String({ minLength: 1 }),
  provider: Literals(PAYMENT_PROVIDERS),
  verified_at: IsoDate,
});
export type PaymentVerified = Event<'PaymentVerified', Static<typeof PaymentVerifiedData>>;

/** A verify that was refused (bad signature, another payment for a paid order): nothing granted. */
export const PaymentRefusedData = Data({
  order_id: Type.String({ minLength: 1 }),
  payment_id: Type.String(),
  reason: Literals(['invalid_signature', 'order_already_paid'] as const),
  refused_at: IsoDate,
});
export type PaymentRefused = Event<'PaymentRefused', Static<typeof PaymentRefusedData>>;

// ---- on `agent-<id>`: what a verified order gives the agent ------------------------------------

/** A top-up pack's credits, granted once per order (the agent's fold remembers the order). */
export const CreditsToppedUpData = Data({
  agent_id: AgentId,
  order_id: Type.String({ minLength: 1 }),
  payment_id: Type.String({ minLength: 1 }),
  amount_mc: Type.Integer({ minimum: 1 }),
  balance_after_mc: Type.Integer({ minimum: 0 }),
  granted_at: IsoDate,
});
export type CreditsToppedUp = Event<'CreditsToppedUp', Static<typeof CreditsToppedUpData>>;

/**
 * A paid upgrade: the new tier, its allocation granted at once, and a new billing day (the
 * upgrade's); cycle 0 of the new anchor.
 */
export const AgentTierUpgradedData = Data({
  agent_id: AgentId,
  order_id: Type.String({ minLength: 1 }),
  from_tier: Type.String(),
  to_tier: Literals(PAID_TIERS),
  amount_mc: Type.Integer({ minimum: 0 }),
  balance_after_mc: Type.Integer({ minimum: 0 }),
  cycle_start: IsoDate,
  next_grant_at: IsoDate,
});
export type AgentTierUpgraded = Event<'AgentTierUpgraded', Static<typeof AgentTierUpgradedData>>;

/** On `user-plan-<user_id>`: a member's paid plan (their in-app agent follows it). */
export const UserPlanActivatedData = Data({
  user_id: UserId,
  order_id: Type.String({ minLength: 1 }),
  plan: Literals(PLANS),
  activated_at: IsoDate,
});
export type UserPlanActivated = Event<'UserPlanActivated', Static<typeof UserPlanActivatedData>>;

export type PaymentOrderEvent = PaymentOrderCreated | PaymentOrderRefused | PaymentVerified | PaymentRefused;
export type CreditsEvent = MonthlyCreditsGranted | CreditsToppedUp | AgentTierUpgraded | UserPlanActivated | PaymentOrderEvent;

export const creditEventSchemas = {
  MonthlyCreditsGranted: MonthlyCreditsGrantedData,
  PaymentOrderCreated: PaymentOrderCreatedData,
  PaymentOrderRefused: PaymentOrderRefusedData,
  PaymentVerified: PaymentVerifiedData,
  PaymentRefused: PaymentRefusedData,
  CreditsToppedUp: CreditsToppedUpData,
  AgentTierUpgraded: AgentTierUpgradedData,
  UserPlanActivated: UserPlanActivatedData,
};

export const paymentOrderStream = (orderId: string) => `payment-order-${orderId}`;
export const userPlanStream = (userId: string) => `user-plan-${userId}`;
