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
/** `renewal`: the next billing month of an agent's paid tier (created by the renewals worker before the billing day). */
export const ORDER_KINDS = ['topup', 'upgrade', 'plan', 'renewal'] as const;
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
  /** Set when the upgrade follows a member's plan (their in-app agent): `pro_auto` / `elite_auto`. The paid month ends at `next_grant_at`. */
  registration_source: Type.Optional(Type.String({ minLength: 1 })),
});
export type AgentTierUpgraded = Event<'AgentTierUpgraded', Static<typeof AgentTierUpgradedData>>;

/**
 * On `user-plan-<user_id>`: a member's paid plan (their in-app agent follows it), paid until
 * `paid_until` (one billing month per payment; absent in events written before plans lapsed: one
 * month after `activated_at`). A payment for the plan in force extends it by one month.
 */
export const UserPlanActivatedData = Data({
  user_id: UserId,
  order_id: Type.String({ minLength: 1 }),
  plan: Literals(PLANS),
  activated_at: IsoDate,
  paid_until: Type.Optional(IsoDate),
});
export type UserPlanActivated = Event<'UserPlanActivated', Static<typeof UserPlanActivatedData>>;

/**
 * On `agent-<id>`: the renewal order of the agent's paid tier for the month from `due_at` (its
 * billing day), created before that day by the renewals worker, with the mail to its owner (same
 * append). `kind` is `plan` for a member's in-app agent (paying renews the plan too).
 */
export const TierRenewalOrderedData = Data({
  agent_id: AgentId,
  order_id: Type.String({ minLength: 1 }),
  kind: Literals(['renewal', 'plan'] as const),
  tier: Literals(PAID_TIERS),
  amount_minor: Type.Integer({ minimum: 1 }),
  currency: Type.Literal('INR'),
  due_at: IsoDate,
  ordered_at: IsoDate,
});
export type TierRenewalOrdered = Event<'TierRenewalOrdered', Static<typeof TierRenewalOrderedData>>;

/** On `agent-<id>`: a verified payment for the tier the agent is on: paid one more billing month, until `paid_until`. */
export const AgentTierRenewedData = Data({
  agent_id: AgentId,
  order_id: Type.String({ minLength: 1 }),
  tier: Literals(PAID_TIERS),
  paid_until: IsoDate,
  /** The balance, unchanged (the month's credits come on its billing day): the ledger entry's balance. */
  balance_mc: Type.Integer({ minimum: 0 }),
  renewed_at: IsoDate,
});
export type AgentTierRenewed = Event<'AgentTierRenewed', Static<typeof AgentTierRenewedData>>;

/**
 * On `agent-<id>`: the paid month ended unpaid (at `lapsed_at`, the billing day): the agent is back
 * on `free`, keeping its balance (credits roll over). `order_id`: the renewal order left unpaid.
 */
export const TierLapsedData = Data({
  agent_id: AgentId,
  from_tier: Literals(PAID_TIERS),
  to_tier: Type.Literal('free'),
  balance_mc: Type.Integer({ minimum: 0 }),
  order_id: Nullable(Type.String({ minLength: 1 })),
  lapsed_at: IsoDate,
});
export type TierLapsed = Event<'TierLapsed', Static<typeof TierLapsedData>>;

export type PaymentOrderEvent = PaymentOrderCreated | PaymentOrderRefused | PaymentVerified | PaymentRefused;
export type CreditsEvent =
  MonthlyCreditsGranted | CreditsToppedUp | AgentTierUpgraded | AgentTierRenewed | TierRenewalOrdered | TierLapsed | UserPlanActivated | PaymentOrderEvent;

export const creditEventSchemas = {
  MonthlyCreditsGranted: MonthlyCreditsGrantedData,
  PaymentOrderCreated: PaymentOrderCreatedData,
  PaymentOrderRefused: PaymentOrderRefusedData,
  PaymentVerified: PaymentVerifiedData,
  PaymentRefused: PaymentRefusedData,
  CreditsToppedUp: CreditsToppedUpData,
  AgentTierUpgraded: AgentTierUpgradedData,
  AgentTierRenewed: AgentTierRenewedData,
  TierRenewalOrdered: TierRenewalOrderedData,
  TierLapsed: TierLapsedData,
  UserPlanActivated: UserPlanActivatedData,
};

export const paymentOrderStream = (orderId: string) => `payment-order-${orderId}`;
export const userPlanStream = (userId: string) => `user-plan-${userId}`;
