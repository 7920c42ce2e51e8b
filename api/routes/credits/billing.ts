import Router from '@koa/router';
import type { Context } from 'koa';
import { Type, type Static } from '@sinclair/typebox';
import { readFileSync } from 'node:fs';
import escapeHtml from 'escape-html';
import type { BillingDeps, OrderItem } from '../../../commands/credits/orders.ts';
import { createPaymentOrder, loadOrder, paymentsUnavailable, verifyPayment } from '../../../commands/credits/orders.ts';
import { eliteAgentOf } from '../../../commands/humans/ownership.ts';
import { PAID_TIERS, PLANS, TOPUP_PACKS } from '../../../events/credits.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { newId } from '../../../events/kernel/ids.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { LimitRule } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { mount, operations } from '../../operations.ts';
import { requireUser } from '../humans/auth.ts';
import { commandContext, settled, writer } from '../util.ts';
import { PostCreditsSandboxPayAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';
import { scriptPolicy } from '../../page-security.ts';

/** Verify and sandbox calls per client address (they need no credentials). */
const PAYMENT_LIMIT: LimitRule = { name: 'payment_verifications', points: 60, windowMs: 60_000, per: 'address' };

export const TopupOrderBody = Type.Object({ pack: Type.Union(TOPUP_PACKS.map((p) => Type.Literal(p))) }, { additionalProperties: false });
export const UpgradeBody = Type.Object({ tier: Type.Optional(Type.Union(PAID_TIERS.map((t) => Type.Literal(t)))) }, { additionalProperties: false });
export const PlanOrderBody = Type.Object({ plan: Type.Union(PLANS.map((p) => Type.Literal(p))) }, { additionalProperties: false });
const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
export const VerifyBody = Type.Object(
  { order_id: Id, payment_id: Id, signature: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const SandboxPayBody = Type.Object({ order_id: Id }, { additionalProperties: false });

/** The answer to every order route. */
export const OrderResponse = Type.Object({
  order_id: Type.String(),
  kind: Type.String(),
  amount: Type.Number(),
  amount_minor: Type.Integer(),
  currency: Type.Literal('INR'),
  credits: Type.Union([Type.Number(), Type.Null()]),
  provider: Type.String(),
  payment_url: Type.String(),
  verify_url: Type.String(),
});

const HTML = { 200: { contentType: 'text/html', schema: { type: 'string' } } };

/** The answer of the verify route. */
export const VerifyResponse = Type.Object({
  order_id: Type.String(),
  payment_id: Type.String(),
  kind: Type.String(),
  status: Type.Literal('paid'),
  already_verified: Type.Boolean(),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  applied: Type.Optional(Type.Union([Type.Literal('topup'), Type.Literal('upgrade'), Type.Literal('renewal'), Type.Literal('credits'), Type.Null()])),
  tier: Type.Optional(Type.String()),
  balance: Type.Optional(Type.Number()),
  reset_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export const billingOperations = operations({
  postCreditsTopupOrder: {
    method: 'POST',
    path: '/api/credits/topup/order',
    summary: 'Order a credit top-up pack for your agent (pay at payment_url, then verify)',
    tags: ['credits'],
    auth: 'key_or_bearer',
    body: TopupOrderBody,
    responses: { 200: { schema: OrderResponse } },
    rateLimit: LIMITS.writes,
  },
  postCreditsTopupVerify: {
    method: 'POST',
    path: '/api/credits/topup/verify',
    summary: "Verify a payment (any order's) by the provider's signature; applies it once",
    tags: ['credits'],
    auth: 'none',
    body: VerifyBody,
    rateLimit: PAYMENT_LIMIT,
    responses: { 200: { schema: VerifyResponse } },
  },
  postProtocolAgentsByIdUpgrade: {
    method: 'POST',
    path: '/api/protocol/agents/:id/upgrade',
    summary: 'Order a tier upgrade for an agent (anyone may pay; applied when verified)',
    tags: ['credits'],
    auth: 'none',
    body: UpgradeBody,
    bodyOptional: true,
    rateLimit: PAYMENT_LIMIT,
    responses: { 200: { schema: OrderResponse } },
  },
  postBillingPlansOrder: {
    method: 'POST',
    path: '/api/billing/plans/order',
    summary: 'Order a plan for the signed-in user',
    tags: ['credits'],
    auth: 'bearer',
    body: PlanOrderBody,
    responses: { 200: { schema: OrderResponse } },
  },
  getCreditsCheckoutByOrderId: {
    method: 'GET',
    path: '/api/credits/checkout/:order_id',
    summary: "An order's checkout page (HTML)",
    tags: ['credits'],
    auth: 'none',
    responses: HTML,
  },
  postCreditsSandboxPay: {
    method: 'POST',
    path: '/api/credits/sandbox/pay',
    summary: 'Sandbox only (no payment provider configured): pay an order with a test payment',
    tags: ['credits'],
    auth: 'none',
    responses: ok(PostCreditsSandboxPayAnswer),
    body: SandboxPayBody,
    rateLimit: PAYMENT_LIMIT,
  },
});

export function billingDeps(s: Services): BillingDeps {
  return {
    bus: s.bus,
    provider: s.payments,
    prices: s.config.tierPrices,
    baseUrl: s.config.publicBaseUrl,
    inAppAgentOf: (userId) => eliteAgentOf(s.bus, userId),
  };
}

/**
 * Billing (docs/BILLING.md): top-up, upgrade and plan orders through the payment provider port,
 * one verify route for every order, the checkout page and the sandbox's test payments.
 */
export function billingRoutes(router: Router, s: Services): void {
  const deps = billingDeps(s);
  const order = async (ctx: Context, item: OrderItem, actor: string | null) => {
    const r = await createPaymentOrder(deps, item, commandContext(s, ctx, actor));
    await settled(s, r.position);
    const { position: _p, ...answer } = r;
    ctx.body = { ...answer, verify_url: '/api/credits/topup/verify' } satisfies Static<typeof OrderResponse>;
  };

  const topup = new Router({ prefix: '/api/credits/topup' });
  mount(topup, billingOperations.postCreditsTopupOrder, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const body = input.body;
    await order(ctx, { kind: 'topup', agent_id: agentId, pack: body.pack }, agentId);
  });
  mount(topup, billingOperations.postCreditsTopupVerify, async (ctx, input) => {
    const body = input.body;
    const r = await verifyPayment(deps, body, commandContext(s, ctx, null));
    await settled(s, r.position);
    const agent = r.agent_id ? await getAgent(s.store, r.agent_id) : null;
    ctx.body = {
      order_id: r.order_id,
      payment_id: r.payment_id,
      kind: r.kind,
      status: 'paid',
      already_verified: !r.newly_verified,
      agent_id: r.agent_id,
      applied: r.applied,
      ...(agent ? { tier: agent.tier, balance: toCredits(agent.balance_mc), reset_at: agent.next_grant_at ?? null } : {}),
    };
  });
  router.use(topup.routes());

  const upgrade = new Router({ prefix: '/api/protocol/agents/:id/upgrade' });
  mount(upgrade, billingOperations.postProtocolAgentsByIdUpgrade, async (ctx, input) => {
    // No auth, as the spec lists it: anyone may pay for an agent's upgrade; it applies when the payment is verified.
    const body = input.body;
    if (!(await getAgent(s.store, ctx.params.id))) throw notFound('Agent', 'agent_not_found');
    await order(ctx, { kind: 'upgrade', agent_id: ctx.params.id, tier: body.tier ?? 'builder' }, null);
  });
  router.use(upgrade.routes());

  const plans = new Router({ prefix: '/api/billing/plans' });
  mount(plans, billingOperations.postBillingPlansOrder, async (ctx, input) => {
    const user = requireUser(ctx);
    const body = input.body;
    await order(ctx, { kind: 'plan', user_id: user.userId, plan: body.plan }, user.userId);
  });
  router.use(plans.routes());

  const checkout = new Router({ prefix: '/api/credits/checkout' });
  mount(checkout, billingOperations.getCreditsCheckoutByOrderId, async (ctx) => {
    if (!s.payments) throw paymentsUnavailable();
    const o = await loadOrder(s.bus, ctx.params.order_id);
    const key = s.payments.checkout().key_id;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Security-Policy', key ? CHECKOUT_POLICY.razorpay : CHECKOUT_POLICY.sandbox);
    ctx.body = checkoutPage(o.order_id, o.kind ?? 'topup', o.amount_minor, o.credits_mc, o.payment_id !== null, key);
  });
  router.use(checkout.routes());

  const sandbox = new Router({ prefix: '/api/credits/sandbox' });
  mount(sandbox, billingOperations.postCreditsSandboxPay, async (ctx, input) => {
    // Exists only while no real provider is configured, and answers only while the sandbox is on.
    if (s.payments && !s.sandbox) throw notFound('Sandbox payments', 'route_not_found');
    if (!s.sandbox) throw paymentsUnavailable();
    const body = input.body;
    await loadOrder(s.bus, body.order_id);
    ctx.body = { ...s.sandbox.pay(body.order_id, newId('pay')), verify_url: '/api/credits/topup/verify' };
  });
  router.use(sandbox.routes());
}

/**
 * The checkout page (checkout.html, filled here): the sandbox's "pay" button, or Razorpay's
 * Checkout with the order; either ends in the verify call, made by the payer's browser.
 */
const CHECKOUT_TEMPLATE = readFileSync(new URL('./checkout.html', import.meta.url), 'utf8');
/** The page's own inline script (the template's, which no placeholder touches), hashed for its CSP. */
const CHECKOUT_SCRIPT = /<script>([\s\S]*?)<\/script>/.exec(CHECKOUT_TEMPLATE)?.[1] ?? '';
/** Razorpay's Checkout loads its script from checkout.razorpay.com and opens its frames and calls on razorpay.com hosts. */
const RAZORPAY = 'https://*.razorpay.com';
const CHECKOUT_POLICY = {
  sandbox: scriptPolicy([CHECKOUT_SCRIPT]),
  razorpay: scriptPolicy([CHECKOUT_SCRIPT], { script: ['https://checkout.razorpay.com'], frame: [RAZORPAY], connect: [RAZORPAY], img: [RAZORPAY] }),
};

function checkoutPage(orderId: string, kind: string, amountMinor: number, creditsMc: number, paid: boolean, razorpayKey: string | null): string {
  const what =
    kind === 'topup' ? `${toCredits(creditsMc)} credits` : kind === 'upgrade' ? 'a tier upgrade' : kind === 'renewal' ? 'one more month of the tier' : 'a plan';
  const values: Record<string, string> = {
    ORDER_JSON: escapeHtml(JSON.stringify({ order_id: orderId, key: razorpayKey, amount: amountMinor, provider: razorpayKey ? 'razorpay' : 'sandbox' })),
    TITLE: razorpayKey ? 'Checkout' : 'Checkout (sandbox: no real money)',
    ORDER_ID: escapeHtml(orderId),
    WHAT: escapeHtml(what),
    AMOUNT: (amountMinor / 100).toFixed(2),
    STATUS: paid ? 'This order is paid.' : '',
    DISABLED: paid ? ' disabled' : '',
    PROVIDER_SCRIPT: razorpayKey ? '<script src="https://checkout.razorpay.com/v1/checkout.js"></script>' : '',
  };
  return CHECKOUT_TEMPLATE.replace(/\{\{([A-Z_]+)\}\}/g, (_m, name: string) => values[name] ?? '');
}
