import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { ActivatePlan, ApplyUpgrade, CreatePaymentOrder, GrantTopUp, OrderState, PlanState, VerifyPayment } from '../../../commands/credits/orders.ts';
import {
  decideActivatePlan,
  decideApplyUpgrade,
  decideCreatePaymentOrder,
  decideGrantTopUp,
  decideVerifyPayment,
  orderAggregate,
  planAggregate,
} from '../../../commands/credits/orders.ts';
import type { GrantMonthlyCredits } from '../../../commands/credits/grant.ts';
import { decideGrantMonthlyCredits } from '../../../commands/credits/grant.ts';
import { paymentSignature, signatureMatches } from '../../../commands/credits/payments/port.ts';
import type { PaymentOrderEvent, UserPlanActivated } from '../../../events/credits.ts';
import * as ev from '../../fixtures/events.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, NOW, agentRegistered, funded } from './fixtures.ts';

const ORDER = ev.ORDER;
const at = NOW.toISOString();
const created = ev.paymentOrderCreated.with(() => ({ agent_id: AGENT, created_at: at }));

describe('commands: credits CreatePaymentOrder (payment-order-<id>)', () => {
  const spec = DeciderSpecification.for<CreatePaymentOrder, OrderState, PaymentOrderEvent>({ decide: decideCreatePaymentOrder, ...orderAggregate });
  const order = (
    item: CreatePaymentOrder['data']['item'],
    agent_tier: CreatePaymentOrder['data']['agent_tier'],
    over: Partial<CreatePaymentOrder['data']> = {},
  ): CreatePaymentOrder => ({
    type: 'CreatePaymentOrder',
    data: { order_id: ORDER, item, amount_minor: 25_000, credits_mc: 50_000, provider: 'sandbox', agent_tier, agent_exists: true, ...over },
    metadata: { now: NOW },
  });

  it('records a top-up order of a paid tier with its pack, price and provider', () => {
    spec
      .given([])
      .when(order({ kind: 'topup', agent_id: AGENT, pack: 'small' }, 'pro'))
      .then([created()]);
  });

  it('refuses a top-up order of the free tier (and of enterprise): the refusal is an event', () => {
    const refused = ev.paymentOrderRefused({ agent_id: AGENT, refused_at: at, reason: 'topup_not_allowed' });
    spec
      .given([])
      .when(order({ kind: 'topup', agent_id: AGENT, pack: 'small' }, 'free'))
      .then([refused]);
    spec
      .given([])
      .when(order({ kind: 'topup', agent_id: AGENT, pack: 'small' }, 'enterprise'))
      .then([refused]);
  });

  it('refuses an upgrade to the same or a lower tier', () => {
    spec
      .given([])
      .when(order({ kind: 'upgrade', agent_id: AGENT, tier: 'pro' }, 'elite'))
      .thenMatches((events) => expect(events[0]).to.deep.include({ type: 'PaymentOrderRefused' }));
  });

  it('answers 404 for an unknown agent and appends nothing on a retried order', () => {
    spec
      .given([])
      .when(order({ kind: 'topup', agent_id: AGENT, pack: 'small' }, null, { agent_exists: false }))
      .thenThrows('agent_not_found', 404);
    spec
      .given([created()])
      .when(order({ kind: 'topup', agent_id: AGENT, pack: 'small' }, 'pro'))
      .thenNothingHappened();
  });

  it('records a member plan order without an agent', () => {
    spec
      .given([])
      .when(order({ kind: 'plan', user_id: ev.USER, plan: 'elite' }, null, { agent_exists: false }))
      .thenMatches((events) => expect(events[0].data).to.include({ kind: 'plan', user_id: ev.USER, agent_id: null, tier: 'elite' }));
  });
});

describe('commands: credits VerifyPayment (payment-order-<id>)', () => {
  const spec = DeciderSpecification.for<VerifyPayment, OrderState, PaymentOrderEvent>({ decide: decideVerifyPayment, ...orderAggregate });
  const verify = (payment_id: string, signature_valid: boolean): VerifyPayment => ({
    type: 'VerifyPayment',
    data: { order_id: ORDER, payment_id, signature_valid },
    metadata: { now: NOW },
  });

  it('verifies a payment with a valid signature once', () => {
    spec
      .given([created()])
      .when(verify('pay_1', true))
      .then([ev.paymentVerified({ payment_id: 'pay_1', verified_at: at })]);
  });

  it('appends nothing when the same payment is verified again (a replay or a race loser)', () => {
    spec
      .given([created(), ev.paymentVerified({ payment_id: 'pay_1' })])
      .when(verify('pay_1', true))
      .thenNothingHappened();
  });

  it('records a refusal for a bad signature, even on a paid order, and for another payment of a paid order', () => {
    spec
      .given([created()])
      .when(verify('pay_1', false))
      .then([ev.paymentRefused({ payment_id: 'pay_1', refused_at: at })]);
    spec
      .given([created(), ev.paymentVerified({ payment_id: 'pay_1' })])
      .when(verify('pay_2', true))
      .then([ev.paymentRefused({ payment_id: 'pay_2', reason: 'order_already_paid', refused_at: at })]);
  });

  it('answers 404 for an unknown order', () => {
    spec.given([]).when(verify('pay_1', true)).thenThrows('order_not_found', 404);
  });
});

describe('commands: credits GrantTopUp and ApplyUpgrade (agent-<id>)', () => {
  const topUp = DeciderSpecification.for<GrantTopUp, AgentState, AgentStreamEvent>({ decide: decideGrantTopUp, ...agentAggregate });
  const upgrade = DeciderSpecification.for<ApplyUpgrade, AgentState, AgentStreamEvent>({ decide: decideApplyUpgrade, ...agentAggregate });
  const grant = (order_id = ORDER): GrantTopUp => ({
    type: 'GrantTopUp',
    data: { agent_id: AGENT, order_id, payment_id: 'pay_1', credits_mc: 50_000 },
    metadata: { now: NOW },
  });
  const toBuilder: ApplyUpgrade = {
    type: 'ApplyUpgrade',
    data: { agent_id: AGENT, order_id: ORDER, payment_id: 'pay_1', tier: 'builder' },
    metadata: { now: NOW },
  };

  it('adds the pack to the balance once per order', () => {
    const topped = ev.creditsToppedUp({ agent_id: AGENT, payment_id: 'pay_1', amount_mc: 50_000, balance_after_mc: 100_000, granted_at: at });
    topUp.given(funded()).when(grant()).then([topped]);
    topUp
      .given([...funded(), topped])
      .when(grant())
      .thenNothingHappened();
    topUp
      .given([...funded(), topped])
      .when(grant('order_other'))
      .thenMatches((events) => expect(events[0].data).to.include({ balance_after_mc: 150_000 }));
  });

  it('refuses an unknown agent', () => {
    topUp.given([]).when(grant()).thenThrows('agent_not_found', 404);
  });

  it('moves the tier, grants its allocation at once (unused credits roll over) and restarts the billing day at the upgrade', () => {
    const upgraded = ev.agentTierUpgraded({
      agent_id: AGENT,
      from_tier: 'free',
      to_tier: 'builder',
      amount_mc: 2_000_000,
      balance_after_mc: 2_050_000,
      cycle_start: at,
      next_grant_at: '2026-04-10T09:30:00.000Z',
    });
    upgrade.given(funded()).when(toBuilder).then([upgraded]);
    upgrade
      .given([...funded(), upgraded])
      .when(toBuilder)
      .thenNothingHappened();
    // The next monthly grant follows the new anchor; the paid month ends there, unpaid: the tier lapses first.
    const grants = DeciderSpecification.for<GrantMonthlyCredits, AgentState, AgentStreamEvent>({ decide: decideGrantMonthlyCredits, ...agentAggregate });
    const due = (now: string): GrantMonthlyCredits => ({ type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now: new Date(now) } });
    grants
      .given([...funded(), upgraded])
      .when(due('2026-04-10T09:00:00.000Z'))
      .thenNothingHappened();
    const renewed = ev.agentTierRenewed({
      agent_id: AGENT,
      tier: 'builder',
      order_id: 'order_renewal',
      paid_until: '2026-05-10T09:30:00.000Z',
      balance_mc: 2_050_000,
    });
    grants
      .given([...funded(), upgraded, renewed])
      .when(due('2026-04-10T09:30:00.000Z'))
      .thenMatches((events) =>
        expect(events.map((e) => e.data)).to.deep.equal([
          {
            agent_id: AGENT,
            cycle: 1,
            amount_mc: 2_000_000,
            balance_after_mc: 4_050_000,
            cycle_start: '2026-04-10T09:30:00.000Z',
            next_grant_at: '2026-05-10T09:30:00.000Z',
          },
        ]),
      );
  });

  it('lapses an unpaid month on its billing day: TierLapsed (balance kept, the unpaid renewal order named), then the free allocation', () => {
    const upgraded = ev.agentTierUpgraded({
      agent_id: AGENT,
      to_tier: 'pro',
      amount_mc: 200_000,
      balance_after_mc: 250_000,
      cycle_start: at,
      next_grant_at: '2026-04-10T09:30:00.000Z',
    });
    const ordered = ev.tierRenewalOrdered({ agent_id: AGENT, order_id: 'order_renewal', tier: 'pro', due_at: '2026-04-10T09:30:00.000Z' });
    const grants = DeciderSpecification.for<GrantMonthlyCredits, AgentState, AgentStreamEvent>({ decide: decideGrantMonthlyCredits, ...agentAggregate });
    const due = (now: string): GrantMonthlyCredits => ({ type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now: new Date(now) } });
    grants
      .given([...funded(), upgraded, ordered])
      .when(due('2026-04-10T09:30:00.000Z'))
      .then([
        ev.tierLapsed({ agent_id: AGENT, from_tier: 'pro', balance_mc: 250_000, order_id: 'order_renewal', lapsed_at: '2026-04-10T09:30:00.000Z' }),
        ev.monthlyCreditsGranted({
          agent_id: AGENT,
          cycle: 1,
          amount_mc: 50_000,
          balance_after_mc: 300_000,
          cycle_start: '2026-04-10T09:30:00.000Z',
          next_grant_at: '2026-05-10T09:30:00.000Z',
        }),
      ]);
    // Two months missed (a server down): Pro's month ends, then free cycles.
    grants
      .given([...funded(), upgraded])
      .when(due('2026-05-10T09:30:00.000Z'))
      .thenMatches((events) =>
        expect(events.map((e) => [e.type, 'amount_mc' in e.data ? e.data.amount_mc : null])).to.deep.equal([
          ['TierLapsed', null],
          ['MonthlyCreditsGranted', 50_000],
          ['MonthlyCreditsGranted', 50_000],
        ]),
      );
    const state = [...funded(), upgraded, ev.tierLapsed({ agent_id: AGENT, from_tier: 'pro', balance_mc: 250_000 })].reduce(
      agentAggregate.evolve,
      agentAggregate.initialState(),
    );
    expect(state).to.include({ tier: 'free', paid_until: null, balance_mc: 250_000 });
  });

  it('an agent upgraded in a log written before paid months lapsed: the month granted on its paid tier counts as paid, the next one lapses', () => {
    const upgraded = ev.agentTierUpgraded({
      agent_id: AGENT,
      to_tier: 'pro',
      amount_mc: 200_000,
      balance_after_mc: 250_000,
      cycle_start: at,
      next_grant_at: '2026-04-10T09:30:00.000Z',
    });
    const legacyGrant = ev.monthlyCreditsGranted({
      agent_id: AGENT,
      cycle: 1,
      amount_mc: 200_000,
      balance_after_mc: 450_000,
      cycle_start: '2026-04-10T09:30:00.000Z',
      next_grant_at: '2026-05-10T09:30:00.000Z',
    });
    const state = [...funded(), upgraded, legacyGrant].reduce(agentAggregate.evolve, agentAggregate.initialState());
    expect(state).to.include({ tier: 'pro', paid_until: '2026-05-10T09:30:00.000Z' });
    const events = decideGrantMonthlyCredits(
      { type: 'GrantMonthlyCredits', data: { agent_id: AGENT }, metadata: { now: new Date('2026-05-10T09:30:00.000Z') } },
      state,
    );
    expect(events.map((e) => e.type)).to.deep.equal(['TierLapsed', 'MonthlyCreditsGranted']);
  });

  it('checks the upgrade rule when the payment is verified: a stale lower order credits its allocation and keeps the tier; the same tier renews one month', () => {
    const toBuilderPaid = ev.agentTierUpgraded({
      agent_id: AGENT,
      to_tier: 'builder',
      amount_mc: 2_000_000,
      balance_after_mc: 2_050_000,
      cycle_start: at,
      next_grant_at: '2026-04-10T09:30:00.000Z',
    });
    const toPro: ApplyUpgrade = {
      type: 'ApplyUpgrade',
      data: { agent_id: AGENT, order_id: 'order_pro', payment_id: 'pay_2', tier: 'pro' },
      metadata: { now: NOW },
    };
    upgrade
      .given([...funded(), toBuilderPaid])
      .when(toPro)
      .then([
        ev.creditsToppedUp({ agent_id: AGENT, order_id: 'order_pro', payment_id: 'pay_2', amount_mc: 200_000, balance_after_mc: 2_250_000, granted_at: at }),
      ]);
    const again: ApplyUpgrade = { ...toBuilder, data: { ...toBuilder.data, order_id: 'order_builder_2' } };
    upgrade
      .given([...funded(), toBuilderPaid])
      .when(again)
      .then([
        ev.agentTierRenewed({
          agent_id: AGENT,
          order_id: 'order_builder_2',
          tier: 'builder',
          paid_until: '2026-05-10T09:30:00.000Z',
          balance_mc: 2_050_000,
          renewed_at: at,
        }),
      ]);
  });

  it('keeps a registered agent on its registration billing day until it upgrades', () => {
    const state = [agentRegistered()].reduce(agentAggregate.evolve, agentAggregate.initialState());
    expect(state.billing_anchor).to.equal(state.registered_at);
  });
});

describe('commands: credits ActivatePlan (user-plan-<id>)', () => {
  const spec = DeciderSpecification.for<ActivatePlan, PlanState, UserPlanActivated>({ decide: decideActivatePlan, ...planAggregate });
  const activate: ActivatePlan = { type: 'ActivatePlan', data: { user_id: ev.USER, order_id: ORDER, plan: 'pro' }, metadata: { now: NOW } };

  it('activates the plan once per order', () => {
    const activated = ev.userPlanActivated({ plan: 'pro', activated_at: at, paid_until: '2026-04-10T09:30:00.000Z' });
    spec.given([]).when(activate).then([activated]);
    spec.given([activated]).when(activate).thenNothingHappened();
  });

  it('lasts one billing month per payment: the plan in force is extended a month; after it ended, a payment starts a new month', () => {
    const activated = ev.userPlanActivated({ plan: 'pro', activated_at: at, paid_until: '2026-04-10T09:30:00.000Z' });
    const renew: ActivatePlan = { ...activate, data: { ...activate.data, order_id: 'order_2' }, metadata: { now: new Date('2026-04-08T00:00:00.000Z') } };
    spec
      .given([activated])
      .when(renew)
      .thenMatches((events) => expect(events[0]?.data).to.include({ paid_until: '2026-05-10T09:30:00.000Z' }));
    const late: ActivatePlan = { ...renew, metadata: { now: new Date('2026-04-20T00:00:00.000Z') } };
    spec
      .given([activated])
      .when(late)
      .thenMatches((events) => expect(events[0]?.data).to.include({ activated_at: '2026-04-20T00:00:00.000Z', paid_until: '2026-05-20T00:00:00.000Z' }));
  });
});

describe('commands: credits payment signatures', () => {
  it('is HMAC-SHA256 of order_id|payment_id, and any other order, payment, secret or altered signature is refused', () => {
    const sig = paymentSignature('secret', 'order_1', 'pay_1');
    expect(sig).to.match(/^[0-9a-f]{64}$/);
    expect(signatureMatches('secret', 'order_1', 'pay_1', sig)).to.equal(true);
    expect(signatureMatches('secret', 'order_2', 'pay_1', sig)).to.equal(false);
    expect(signatureMatches('secret', 'order_1', 'pay_2', sig)).to.equal(false);
    expect(signatureMatches('other', 'order_1', 'pay_1', sig)).to.equal(false);
    const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1);
    expect(signatureMatches('secret', 'order_1', 'pay_1', flipped)).to.equal(false);
    expect(signatureMatches('secret', 'order_1', 'pay_1', sig.slice(1))).to.equal(false);
  });
});
