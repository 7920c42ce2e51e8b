import { expect } from 'chai';
import { agentStream } from '../../events/agents.ts';
import { defined } from '../helpers/defined.ts';
import { waitForMails } from '../helpers/mail.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * The monthly cycle of paid tiers on the injected clock (docs/BILLING.md "Paid months"): each test
 * has its own service, as it moves the clock by months. The service starts at 2026-03-10T09:30Z.
 */
describe('api: paid tiers last one billing month per payment (renewal orders, lapses) on the injected clock', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  beforeEach(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'auditor@example.com' })));
  afterEach(() => stopWithOutbox(svc, outbox));

  const workers = () => defined(svc.running.workers, 'the workers');
  const typesOn = async (stream: string) => (await svc.running.services.log.readStream(stream)).map((e) => e.type);
  const eventsOn = async (stream: string, type: string) => (await svc.running.services.log.readStream(stream)).filter((e) => e.type === type);
  const credits = async (agentId: string, apiKey: string) => (await svc.req('GET', `/api/protocol/agents/${agentId}/credits`, { apiKey })).body;
  const verify = async (orderId: string) => {
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: orderId } });
    expect(paid.status, paid.text).to.equal(200);
    const { order_id, payment_id, signature } = paid.body;
    const v = await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } });
    expect(v.status, v.text).to.equal(200);
    return v.body;
  };
  const upgrade = async (agentId: string, tier: string) => {
    const order = await svc.req('POST', `/api/protocol/agents/${agentId}/upgrade`, { body: { tier } });
    expect(order.status, order.text).to.equal(200);
    return order.body.order_id as string;
  };

  it('orders the renewal (and mails the owner) 3 days before the billing day; unpaid, the agent returns to free on it (TierLapsed), keeping its balance, shown in the admin audit and the statement', async () => {
    const a = await svc.register({ owner_email: 'cycle-owner@example.com' });
    await verify(await upgrade(a.agent_id, 'pro'));
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: a.api_key,
      body: { title: 'Spend', body: 'one post', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    expect(post.status, post.text).to.equal(200);
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'pro', balance: 249.9, paid_until: '2026-04-10T09:30:00.000Z' });

    svc.clock.set('2026-04-07T09:29:59.000Z');
    await workers().renewals.sweep();
    expect(await typesOn(agentStream(a.agent_id))).to.not.include('TierRenewalOrdered');

    svc.clock.set('2026-04-07T09:30:00.000Z');
    await workers().renewals.sweep();
    await workers().renewals.sweep();
    const ordered = await eventsOn(agentStream(a.agent_id), 'TierRenewalOrdered');
    expect(ordered).to.have.length(1);
    const renewal = ordered[0].data as { order_id: string; kind: string; tier: string; amount_minor: number; due_at: string };
    expect(renewal).to.include({ kind: 'renewal', tier: 'pro', amount_minor: 49_900, due_at: '2026-04-10T09:30:00.000Z' });
    const [mail] = await waitForMails(outbox, 'cycle-owner@example.com');
    expect(mail.subject).to.include('pro tier');
    expect(mail.text).to.include(`/api/credits/checkout/${renewal.order_id}`);
    expect((await svc.req('GET', `/api/credits/checkout/${renewal.order_id}`)).status).to.equal(200);

    svc.clock.set('2026-04-10T09:29:59.000Z');
    await workers().sweepGrants();
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'pro', balance: 249.9 });

    svc.clock.set('2026-04-10T09:30:00.000Z');
    await workers().sweepGrants();
    // Back on free, the balance kept, and the free allocation of the new cycle on top.
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'free', balance: 299.9, monthly_credits: 50, paid_until: null });
    const lapsed = await eventsOn(agentStream(a.agent_id), 'TierLapsed');
    expect(lapsed.map((e) => e.data)).to.deep.equal([
      { agent_id: a.agent_id, from_tier: 'pro', to_tier: 'free', balance_mc: 249_900, order_id: renewal.order_id, lapsed_at: '2026-04-10T09:30:00.000Z' },
    ]);
    await workers().sweepGrants();
    expect(await eventsOn(agentStream(a.agent_id), 'TierLapsed')).to.have.length(1);

    const admin = (await signUp(svc, outbox, 'auditor@example.com')).access_token;
    const audit = await svc.req('GET', `/api/admin/agents/${a.agent_id}/credits/history?action=tier_lapsed`, { headers: bearer(admin) });
    expect(audit.status, audit.text).to.equal(200);
    expect(audit.body.entries).to.have.length(1);
    expect(audit.body.entries[0]).to.include({ event_type: 'TierLapsed', action: 'tier_lapsed', amount: 0, balance_after: 249.9, actor: 'system:credits' });
    expect(audit.body.entries[0].reference).to.deep.equal({ from_tier: 'pro', to_tier: 'free', order_id: renewal.order_id });
    svc.clock.advance(1000); // a statement's period ends before its time of issue
    const statement = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/statement`, { apiKey: a.api_key });
    expect(statement.status, statement.text).to.equal(200);
    const actions = (statement.body.statement.entries as Array<{ action: string }>).map((e) => e.action);
    expect(actions).to.include('tier_lapsed');
    expect(statement.body.statement).to.include({ balance_checked: true, closing_balance_mc: 299_900 });

    // The renewal paid late is an upgrade from free: a new paid month from now, its allocation at once.
    const late = await verify(renewal.order_id);
    expect(late).to.include({ applied: 'upgrade', tier: 'pro', balance: 499.9 });
  });

  it('a renewal paid before the billing day keeps the tier one month more: no lapse, the paid allocation on the billing day', async () => {
    const a = await svc.register({ owner_email: 'renewing-owner@example.com' });
    await verify(await upgrade(a.agent_id, 'elite'));
    svc.clock.set('2026-04-08T00:00:00.000Z');
    const orderId = defined(await workers().renewals.orderFor(a.agent_id), 'a renewal order');
    expect(await verify(orderId)).to.include({ applied: 'renewal', tier: 'elite' });
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'elite', balance: 550, paid_until: '2026-05-10T09:30:00.000Z' });

    svc.clock.set('2026-04-10T09:30:00.000Z');
    await workers().sweepGrants();
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'elite', balance: 1050, reset_at: '2026-05-10T09:30:00.000Z' });
    expect(await typesOn(agentStream(a.agent_id))).to.not.include('TierLapsed');
    const renewed = await eventsOn(agentStream(a.agent_id), 'AgentTierRenewed');
    expect(renewed).to.have.length(1);

    // The next month is unpaid: it lapses on its own billing day.
    svc.clock.set('2026-05-10T09:30:00.000Z');
    await workers().sweepGrants();
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'free', balance: 1100 });
  });

  it('a stale upgrade order paid after a higher upgrade never downgrades: the tier stays, the order is credited its allocation', async () => {
    const a = await svc.register();
    const proOrder = await upgrade(a.agent_id, 'pro');
    const builderOrder = await upgrade(a.agent_id, 'builder');
    expect(await verify(builderOrder)).to.include({ applied: 'upgrade', tier: 'builder', balance: 2050 });
    const stale = await verify(proOrder);
    expect(stale).to.include({ applied: 'credits', tier: 'builder', balance: 2250 });
    expect(await credits(a.agent_id, a.api_key)).to.include({ tier: 'builder', paid_until: '2026-04-10T09:30:00.000Z' });
    const topped = await eventsOn(agentStream(a.agent_id), 'CreditsToppedUp');
    expect(topped.map((e) => (e.data as { order_id: string }).order_id)).to.deep.equal([proOrder]);
    // At order time a tier the agent is on is refused; only a payment verified later can meet it (then it renews).
    const again = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/upgrade`, { body: { tier: 'builder' } });
    expect(again.status).to.equal(409);
  });

  it("a member's plan and in-app agent: the label follows the plan (pro_auto, then elite_auto, also on key regeneration); unpaid, both lapse together", async () => {
    const user = await signUp(svc, outbox, 'planner@example.com');
    let auth = bearer(user.access_token);
    // Access tokens live 15 minutes on the injected clock: sign in again after moving it.
    const signIn = async () => {
      const r = await svc.req('POST', '/api/auth/login', { body: { email: 'planner@example.com', password: 'correct horse battery' } });
      expect(r.status, r.text).to.equal(200);
      auth = bearer(r.body.access_token);
    };
    const pro = await svc.req('POST', '/api/billing/plans/order', { headers: auth, body: { plan: 'pro' } });
    expect(pro.status, pro.text).to.equal(200);
    await verify(pro.body.order_id);
    const key = await svc.req('GET', '/api/protocol/elite-key', { headers: auth });
    expect(key.body).to.include({ tier: 'pro', registration_source: 'pro_auto' });
    const regenerated = await svc.req('POST', '/api/protocol/elite-key/regenerate', { headers: auth, body: {} });
    expect(regenerated.status, regenerated.text).to.equal(200);
    expect(regenerated.body.registration_source).to.equal('pro_auto');

    svc.clock.set('2026-03-20T09:30:00.000Z');
    await signIn();
    const elite = await svc.req('POST', '/api/billing/plans/order', { headers: auth, body: { plan: 'elite' } });
    expect(await verify(elite.body.order_id)).to.include({ applied: 'upgrade', tier: 'elite', agent_id: key.body.agent_id });
    const now = await svc.req('GET', '/api/protocol/elite-key', { headers: auth });
    expect(now.body).to.include({ tier: 'elite', registration_source: 'elite_auto' });
    const again = await svc.req('POST', '/api/protocol/elite-key/regenerate', { headers: auth, body: {} });
    expect(again.body.registration_source).to.equal('elite_auto');

    // The renewal order of the in-app agent is a plan order; left unpaid, the agent and the plan lapse on the billing day.
    svc.clock.set('2026-04-17T09:30:00.000Z');
    const renewal = defined(await workers().renewals.orderFor(key.body.agent_id), 'a renewal order');
    expect((await eventsOn(`payment-order-${renewal}`, 'PaymentOrderCreated'))[0].data).to.include({ kind: 'plan', tier: 'elite' });
    svc.clock.set('2026-04-20T09:30:00.000Z');
    await workers().sweepGrants();
    await signIn();
    const lapsed = await svc.req('GET', '/api/protocol/elite-key', { headers: auth });
    expect(lapsed.status, lapsed.text).to.equal(402);
    expect(lapsed.body.code).to.equal('plan_required');
    // Paying the renewal order late buys the plan again, and the in-app agent follows it.
    expect(await verify(renewal)).to.include({ applied: 'upgrade', tier: 'elite' });
    expect((await svc.req('GET', '/api/protocol/elite-key', { headers: auth })).body).to.include({ tier: 'elite', registration_source: 'elite_auto' });
  });
});
