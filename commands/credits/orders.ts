import { agentStream } from '../../events/agents.ts';
import type { Tier } from '../../events/agents.ts';
import type {
  AgentTierRenewed,
  AgentTierUpgraded,
  CreditsToppedUp,
  OrderKind,
  PaidTier,
  PaymentOrderCreated,
  PaymentOrderEvent,
  PaymentOrderRefused,
  PaymentProviderName,
  PaymentRefused,
  PaymentVerified,
  Plan,
  TopupPack,
  UserPlanActivated,
} from '../../events/credits.ts';
import { paymentOrderStream, userPlanStream } from '../../events/credits.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import { cycleStart, isPaidTier, nextBillingDay } from './billing.ts';
import type { PaymentProvider } from './payments/port.ts';
import type { TierPrices } from './pricing.ts';
import { PLAN_TIER, TIER_RANK, TOPUP_PACK_PRICES } from './pricing.ts';
import { TIERS } from './tiers.ts';

// ---- the order aggregate: `payment-order-<order_id>` --------------------------------------------

export interface OrderState {
  exists: boolean;
  refused: boolean;
  order_id: string;
  kind: OrderKind | null;
  agent_id: string | null;
  user_id: string | null;
  pack: TopupPack | null;
  tier: PaidTier | null;
  credits_mc: number;
  amount_minor: number;
  provider: PaymentProviderName | null;
  created_at: string | null;
  /** The verified payment, once. */
  payment_id: string | null;
  verified_at: string | null;
}

export const orderAggregate: Aggregate<OrderState, PaymentOrderEvent> = {
  initialState: () => ({
    exists: false,
    refused: false,
    order_id: '',
    kind: null,
    agent_id: null,
    user_id: null,
    pack: null,
    tier: null,
    credits_mc: 0,
    amount_minor: 0,
    provider: null,
    created_at: null,
    payment_id: null,
    verified_at: null,
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'PaymentOrderCreated': {
        const d = event.data;
        return { ...state, exists: true, ...d };
      }
      case 'PaymentOrderRefused':
        return { ...state, refused: true, order_id: event.data.order_id };
      case 'PaymentVerified':
        return { ...state, payment_id: event.data.payment_id, verified_at: event.data.verified_at };
      case 'PaymentRefused':
        return state;
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** What an order buys, priced: a top-up pack, an agent's upgrade, or a member's plan. */
export type OrderItem =
  | { kind: 'topup'; agent_id: string; pack: TopupPack }
  | { kind: 'upgrade'; agent_id: string; tier: PaidTier }
  | { kind: 'renewal'; agent_id: string; tier: PaidTier }
  | { kind: 'plan'; user_id: string; plan: Plan };

/**
 * CreatePaymentOrder: the item, its price (from configuration), the provider's order id, and the
 * agent's tier as a fact (null for a plan).
 */
export type CreatePaymentOrder = Command<
  'CreatePaymentOrder',
  {
    order_id: string;
    item: OrderItem;
    amount_minor: number;
    credits_mc: number;
    provider: PaymentProviderName;
    agent_tier: Tier | null;
    agent_exists: boolean;
  },
  { now: Date }
>;

function itemFields(item: OrderItem) {
  return {
    kind: item.kind,
    agent_id: item.kind === 'plan' ? null : item.agent_id,
    user_id: item.kind === 'plan' ? item.user_id : null,
    pack: item.kind === 'topup' ? item.pack : null,
    tier: item.kind === 'upgrade' || item.kind === 'renewal' ? item.tier : item.kind === 'plan' ? PLAN_TIER[item.plan] : null,
  };
}

/**
 * Top-ups only for Pro, Elite and Builder agents; an upgrade only to a higher tier. A refusal is
 * kept as PaymentOrderRefused (the route answers 403 / 409 from it); a retried order appends nothing.
 */
export function decideCreatePaymentOrder(command: CreatePaymentOrder, state: OrderState): [PaymentOrderCreated] | [PaymentOrderRefused] | [] {
  if (state.exists || state.refused) return [];
  const { order_id, item, amount_minor, credits_mc, provider, agent_tier, agent_exists } = command.data;
  const at = command.metadata.now.toISOString();
  if (item.kind !== 'plan' && !agent_exists) throw notFound('Agent', 'agent_not_found');
  const refuse = (reason: string): [PaymentOrderRefused] => [{ type: 'PaymentOrderRefused', data: { order_id, ...itemFields(item), reason, refused_at: at } }];
  if (item.kind === 'topup' && !(agent_tier && TIERS[agent_tier].topup_allowed)) return refuse('topup_not_allowed');
  if (item.kind === 'upgrade' && TIER_RANK[agent_tier ?? 'free'] >= TIER_RANK[item.tier]) return refuse('not_an_upgrade');
  return [
    {
      type: 'PaymentOrderCreated',
      data: { order_id, ...itemFields(item), credits_mc, amount_minor, currency: 'INR', provider, created_at: at },
    },
  ];
}

/** The refusal a PaymentOrderRefused stands for. */
export function orderRefusal(reason: string): DomainError {
  if (reason === 'topup_not_allowed')
    return new DomainError(403, 'topup_not_allowed', 'Top-ups are for the Pro, Elite and Builder tiers; upgrade first', billingLinks(null));
  return new DomainError(409, 'not_an_upgrade', 'The agent is already on this tier or a higher one');
}

/** The two billing routes every 402 (and a refused top-up) names: where to upgrade, where to top up. */
export function billingLinks(agentId: string | null): { upgrade_url: string; topup_url: string } {
  return { upgrade_url: agentId ? `/api/protocol/agents/${agentId}/upgrade` : '/api/billing/plans/order', topup_url: '/api/credits/topup/order' };
}

/** VerifyPayment: the provider's signature checked by the port (a fact), and the payment it names. */
export type VerifyPayment = Command<'VerifyPayment', { order_id: string; payment_id: string; signature_valid: boolean }, { now: Date }>;

/**
 * An unknown order: 404. A bad signature: PaymentRefused (the route answers 401). The order's
 * payment verified once: the same payment again appends nothing (a replay); another payment
 * for a paid order is refused. Otherwise PaymentVerified, appended with the revision read, so
 * of any number of concurrent verifies exactly one appends it.
 */
export function decideVerifyPayment(command: VerifyPayment, state: OrderState): [PaymentVerified] | [PaymentRefused] | [] {
  const { order_id, payment_id, signature_valid } = command.data;
  if (!state.exists || !state.provider) throw notFound('Order', 'order_not_found');
  const at = command.metadata.now.toISOString();
  if (!signature_valid) return [{ type: 'PaymentRefused', data: { order_id, payment_id, reason: 'invalid_signature', refused_at: at } }];
  if (state.payment_id === payment_id) return [];
  if (state.payment_id !== null) return [{ type: 'PaymentRefused', data: { order_id, payment_id, reason: 'order_already_paid', refused_at: at } }];
  return [{ type: 'PaymentVerified', data: { order_id, payment_id, provider: state.provider, verified_at: at } }];
}

// ---- what a verified order gives, each on its own stream and once per order ------------------

/** GrantTopUp: the pack's credits on `agent-<id>`, for one verified order. */
export type GrantTopUp = Command<'GrantTopUp', { agent_id: string; order_id: string; payment_id: string; credits_mc: number }, { now: Date }>;

/** Once per order: the agent's fold remembers every paid order, so a replay or a race appends nothing. */
export function decideGrantTopUp(command: GrantTopUp, state: AgentState): [CreditsToppedUp] | [] {
  const { agent_id, order_id, payment_id, credits_mc } = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (state.paid_orders[order_id]) return [];
  return [
    {
      type: 'CreditsToppedUp',
      data: {
        agent_id,
        order_id,
        payment_id,
        amount_mc: credits_mc,
        balance_after_mc: state.balance_mc + credits_mc,
        granted_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

/**
 * ApplyUpgrade: a verified tier order (an upgrade, a renewal, or a plan's in-app agent) on
 * `agent-<id>`; `payment_id` is recorded when a stale order is credited, `registration_source`
 * when a plan moves the member's in-app agent.
 */
export type ApplyUpgrade = Command<
  'ApplyUpgrade',
  { agent_id: string; order_id: string; payment_id: string; tier: PaidTier; registration_source?: string },
  { now: Date }
>;

/** What a verified tier order did to the agent. */
export type AppliedAs = 'upgrade' | 'renewal' | 'credits';

/**
 * Once per order (the agent's fold remembers it), and the order's rule checked again against the
 * tier the agent is on when the payment is verified, not when the order was made:
 * - a higher tier: the upgrade. The new tier, its monthly allocation at once (unused credits roll
 *   over), the upgrade's time as the new billing day, paid one billing month (until the next one);
 * - the tier it is on (a renewal order, or a second order for it): one more billing month
 *   (`AgentTierRenewed`), no credits until the billing day;
 * - a lower tier (a stale order: the owner upgraded further meanwhile): the tier is kept, never
 *   lowered, and the payment is not lost: the order tier's monthly allocation is credited as a
 *   top-up (`CreditsToppedUp` of the order).
 */
export function decideApplyUpgrade(command: ApplyUpgrade, state: AgentState): [AgentTierUpgraded] | [AgentTierRenewed] | [CreditsToppedUp] | [] {
  const { agent_id, order_id, payment_id, tier, registration_source } = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (state.paid_orders[order_id]) return [];
  const now = command.metadata.now;
  const at = now.toISOString();
  const amount = TIERS[tier].monthly_mc ?? 0;
  const rank = TIER_RANK[tier];
  const current = TIER_RANK[state.tier];
  if (rank > current) {
    return [
      {
        type: 'AgentTierUpgraded',
        data: {
          agent_id,
          order_id,
          from_tier: state.tier,
          to_tier: tier,
          amount_mc: amount,
          balance_after_mc: state.balance_mc + amount,
          cycle_start: at,
          next_grant_at: cycleStart(at, 1).toISOString(),
          ...(registration_source ? { registration_source } : {}),
        },
      },
    ];
  }
  if (rank === current && isPaidTier(state.tier)) {
    const from = state.paid_until !== null ? new Date(state.paid_until) : now;
    return [
      {
        type: 'AgentTierRenewed',
        data: { agent_id, order_id, tier, paid_until: nextBillingDay(state.billing_anchor, from).toISOString(), balance_mc: state.balance_mc, renewed_at: at },
      },
    ];
  }
  if (amount === 0) return [];
  return [
    {
      type: 'CreditsToppedUp',
      data: { agent_id, order_id, payment_id, amount_mc: amount, balance_after_mc: state.balance_mc + amount, granted_at: at },
    },
  ];
}

/** What an applied tier order's event says it did. */
export function appliedAs(type: string | undefined): AppliedAs | null {
  return type === 'AgentTierUpgraded' ? 'upgrade' : type === 'AgentTierRenewed' ? 'renewal' : type === 'CreditsToppedUp' ? 'credits' : null;
}

// ---- a member's plan: `user-plan-<user_id>` ----------------------------------------------------

export interface PlanState {
  plan: Plan | null;
  /** The plan's billing day anchor (its activation, or the re-activation after a lapse) and the end of its paid month. */
  anchor: string | null;
  paid_until: string | null;
  orders: Readonly<Record<string, true>>;
}

export const planAggregate: Aggregate<PlanState, UserPlanActivated> = {
  initialState: () => ({ plan: null, anchor: null, paid_until: null, orders: {} }),
  evolve: (state, event) => {
    const d = event.data;
    const renewed = state.plan === d.plan && state.paid_until !== null && state.paid_until > d.activated_at;
    return {
      plan: d.plan,
      anchor: renewed ? state.anchor : d.activated_at,
      // Events written before plans lapsed carry no paid_until: one month from the activation.
      paid_until: d.paid_until ?? cycleStart(d.activated_at, 1).toISOString(),
      orders: { ...state.orders, [d.order_id]: true },
    };
  },
};

export type ActivatePlan = Command<'ActivatePlan', { user_id: string; order_id: string; plan: Plan }, { now: Date }>;

/**
 * A plan lasts one billing month per payment. A payment for the plan in force extends it by one
 * month; a payment for a higher plan, or any plan once the last one has ended, starts a month from
 * now. A lower plan paid while a higher one is in force changes nothing here (the in-app agent's
 * ApplyUpgrade credits it).
 */
export function decideActivatePlan(command: ActivatePlan, state: PlanState): [UserPlanActivated] | [] {
  const { user_id, order_id, plan } = command.data;
  if (state.orders[order_id]) return [];
  const now = command.metadata.now;
  const at = now.toISOString();
  const inForce = state.plan !== null && state.paid_until !== null && state.paid_until > at;
  if (inForce && state.plan !== null && TIER_RANK[PLAN_TIER[plan]] < TIER_RANK[PLAN_TIER[state.plan]]) return [];
  const paid_until =
    inForce && state.plan === plan && state.anchor && state.paid_until ? nextBillingDay(state.anchor, new Date(state.paid_until)) : cycleStart(at, 1);
  return [{ type: 'UserPlanActivated', data: { user_id, order_id, plan, activated_at: at, paid_until: paid_until.toISOString() } }];
}

/**
 * The member's plan in force at `now` (null without one). Once the member has an in-app agent, the
 * plan lapses with it (its `TierLapsed`): the agent's paid tier is the plan's month; before that,
 * the plan's own paid month counts.
 */
export async function planOf(bus: CommandBus, userId: string, now: Date, inAppAgentOf: (userId: string) => Promise<string | null>): Promise<Plan | null> {
  const plan = (await bus.load(userPlanStream(userId), planAggregate)).state;
  if (plan.plan === null) return null;
  const agentId = await inAppAgentOf(userId);
  if (agentId) {
    const agent = (await bus.load(agentStream(agentId), agentAggregate)).state;
    return agent.exists && isPaidTier(agent.tier) ? plan.plan : null;
  }
  return plan.paid_until !== null && plan.paid_until > now.toISOString() ? plan.plan : null;
}

// ---- the command functions ---------------------------------------------------------------------

export interface BillingDeps {
  bus: CommandBus;
  /** Null when no payment mode is on (no real provider, sandbox off): every payment route answers 503. */
  provider: PaymentProvider | null;
  prices: TierPrices;
  /** The service's public base URL, for the checkout page's address. */
  baseUrl: string;
  /** Called when a plan order is paid, to move the member's in-app agent to the plan's tier. */
  inAppAgentOf(userId: string): Promise<string | null>;
}

export interface OrderAnswer {
  order_id: string;
  kind: OrderKind;
  amount: number;
  amount_minor: number;
  currency: 'INR';
  credits: number | null;
  provider: PaymentProviderName;
  payment_url: string;
  position: number;
}

/** No provider and no sandbox (NODE_ENV=production without a provider): nothing can be bought or verified. */
export function paymentsUnavailable(): DomainError {
  return new DomainError(503, 'payments_unavailable', 'Payments are not available: no payment provider is configured on this server (and its sandbox is off)');
}

function requireProvider(d: BillingDeps): PaymentProvider {
  if (!d.provider) throw paymentsUnavailable();
  return d.provider;
}

function price(d: BillingDeps, item: OrderItem): { amount_minor: number; credits_mc: number } {
  if (item.kind === 'topup') return TOPUP_PACK_PRICES[item.pack];
  const tier = item.kind === 'plan' ? PLAN_TIER[item.plan] : item.tier;
  return { amount_minor: d.prices[tier] * 100, credits_mc: TIERS[tier].monthly_mc ?? 0 };
}

export const checkoutPath = (orderId: string) => `/api/credits/checkout/${encodeURIComponent(orderId)}`;

/** Creates an order with the provider and records it (or the refusal, then thrown). */
export async function createPaymentOrder(d: BillingDeps, item: OrderItem, ctx: CommandContext): Promise<OrderAnswer> {
  const provider = requireProvider(d);
  const agent = item.kind === 'plan' ? null : (await d.bus.load(agentStream(item.agent_id), agentAggregate)).state;
  const priced = price(d, item);
  // Refusals are decided before the provider is asked: the refused order keeps our receipt id.
  const receipt = deriveId('ord', ctx.commandId, item.kind);
  const precheck = decideCreatePaymentOrder(
    {
      type: 'CreatePaymentOrder',
      data: { order_id: receipt, item, ...priced, provider: provider.name, agent_tier: agent?.tier ?? null, agent_exists: agent?.exists ?? false },
      metadata: { now: ctx.now },
    },
    orderAggregate.initialState(),
  );
  const refused = precheck[0]?.type === 'PaymentOrderRefused';
  const orderId = refused
    ? receipt
    : (
        await provider.createOrder({
          receipt,
          amount_minor: priced.amount_minor,
          currency: 'INR',
          notes: { kind: item.kind, ...(agent ? { agent_id: agent.agent_id } : {}) },
        })
      ).order_id;
  const command: CreatePaymentOrder = {
    type: 'CreatePaymentOrder',
    data: { order_id: orderId, item, ...priced, provider: provider.name, agent_tier: agent?.tier ?? null, agent_exists: agent?.exists ?? false },
    metadata: { now: ctx.now },
  };
  const result = await d.bus.handle(paymentOrderStream(orderId), orderAggregate, (state) => decideCreatePaymentOrder(command, state), ctx);
  if (result.state.refused || precheck[0]?.type === 'PaymentOrderRefused') {
    const e = result.events[0];
    throw orderRefusal(e?.type === 'PaymentOrderRefused' ? e.data.reason : precheck[0]?.type === 'PaymentOrderRefused' ? precheck[0].data.reason : '');
  }
  return {
    order_id: orderId,
    kind: item.kind,
    amount: priced.amount_minor / 100,
    amount_minor: priced.amount_minor,
    currency: 'INR',
    credits: item.kind === 'topup' ? priced.credits_mc / 1000 : null,
    provider: provider.name,
    payment_url: `${d.baseUrl}${checkoutPath(orderId)}`,
    position: result.position,
  };
}

export interface VerifyAnswer {
  order_id: string;
  payment_id: string;
  kind: OrderKind;
  /** False when this verify found the order already paid (nothing granted again). */
  newly_verified: boolean;
  /** The agent the order applied to (a plan's: the member's in-app agent, when there is one). */
  agent_id: string | null;
  user_id: string | null;
  /** What this verify applied (null when it applied nothing new: a replay): a top-up, an upgrade, a renewal, or a stale tier order's credits. */
  applied: AppliedAs | 'topup' | null;
  position: number;
}

/**
 * Verifies a payment and applies the order. Two steps on two streams, each once per order by its
 * own fold (the order's `PaymentVerified` with expected revision; the agent's or plan's fold
 * remembers the order), so a crash between them is healed by the next verify of the same payment.
 */
export async function verifyPayment(
  d: BillingDeps,
  input: { order_id: string; payment_id: string; signature: string },
  ctx: CommandContext,
): Promise<VerifyAnswer> {
  const provider = requireProvider(d);
  const command: VerifyPayment = {
    type: 'VerifyPayment',
    data: {
      order_id: input.order_id,
      payment_id: input.payment_id,
      signature_valid: provider.verifySignature(input.order_id, input.payment_id, input.signature),
    },
    metadata: { now: ctx.now },
  };
  const verified = await d.bus.handle(paymentOrderStream(input.order_id), orderAggregate, (state) => decideVerifyPayment(command, state), ctx);
  const refusal = verified.events.find((e) => e.type === 'PaymentRefused');
  if (refusal?.type === 'PaymentRefused') {
    if (refusal.data.reason === 'invalid_signature')
      throw new DomainError(401, 'invalid_payment_signature', 'The payment signature does not match this order and payment');
    throw new DomainError(409, 'order_already_paid', 'This order was already paid with another payment');
  }
  const order = verified.state;
  const now = { now: ctx.now };
  let position = verified.position;
  let applied: AppliedAs | 'topup' | null = null;
  let inAppAgent: string | null = null;
  if (order.kind === 'topup' && order.agent_id) {
    const grant: GrantTopUp = {
      type: 'GrantTopUp',
      data: { agent_id: order.agent_id, order_id: order.order_id, payment_id: input.payment_id, credits_mc: order.credits_mc },
      metadata: now,
    };
    const r = await d.bus.handle(agentStream(order.agent_id), agentAggregate, (s) => decideGrantTopUp(grant, s), ctx);
    position = Math.max(position, r.position);
    if (r.events.length) applied = 'topup';
  } else if ((order.kind === 'upgrade' || order.kind === 'renewal') && order.agent_id && order.tier) {
    const upgrade: ApplyUpgrade = {
      type: 'ApplyUpgrade',
      data: { agent_id: order.agent_id, order_id: order.order_id, payment_id: input.payment_id, tier: order.tier },
      metadata: now,
    };
    const r = await d.bus.handle(agentStream(order.agent_id), agentAggregate, (s) => decideApplyUpgrade(upgrade, s), ctx);
    position = Math.max(position, r.position);
    applied = appliedAs(r.events[0]?.type);
  } else if (order.kind === 'plan' && order.user_id && order.tier) {
    const plan = order.tier as Plan;
    const activate: ActivatePlan = { type: 'ActivatePlan', data: { user_id: order.user_id, order_id: order.order_id, plan }, metadata: now };
    position = Math.max(position, (await d.bus.handle(userPlanStream(order.user_id), planAggregate, (s) => decideActivatePlan(activate, s), ctx)).position);
    const inApp = await d.inAppAgentOf(order.user_id);
    if (inApp) {
      // The in-app agent follows the plan: its tier, and the label that says so.
      const upgrade: ApplyUpgrade = {
        type: 'ApplyUpgrade',
        data: { agent_id: inApp, order_id: order.order_id, payment_id: input.payment_id, tier: order.tier, registration_source: `${plan}_auto` },
        metadata: now,
      };
      const r = await d.bus.handle(agentStream(inApp), agentAggregate, (s) => decideApplyUpgrade(upgrade, s), ctx);
      position = Math.max(position, r.position);
      applied = appliedAs(r.events[0]?.type);
      inAppAgent = inApp;
    }
  }
  return {
    order_id: order.order_id,
    payment_id: input.payment_id,
    kind: order.kind ?? 'topup',
    newly_verified: verified.events.length > 0,
    agent_id: order.agent_id ?? inAppAgent,
    user_id: order.user_id,
    applied,
    position,
  };
}

/** The order as the checkout page and the sandbox see it (404 when unknown). */
export async function loadOrder(bus: CommandBus, orderId: string): Promise<OrderState> {
  const { state } = await bus.load(paymentOrderStream(orderId), orderAggregate);
  if (!state.exists) throw notFound('Order', 'order_not_found');
  return state;
}
