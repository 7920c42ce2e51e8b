import { expect } from 'chai';
import { agentStream } from '../../events/agents.ts';
import { paymentOrderStream } from '../../events/credits.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService, startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { loadConfig } from '../../api/config.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: billing (top-ups, upgrades, plans) through the sandbox provider', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  const typesOn = async (stream: string) => (await svc.running.services.log.readStream(stream)).map((e) => e.type);
  const pay = async (orderId: string) => {
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: orderId } });
    expect(paid.status, paid.text).to.equal(200);
    const { order_id, payment_id, signature } = paid.body as { order_id: string; payment_id: string; signature: string };
    return { order_id, payment_id, signature };
  };
  const verify = (body: unknown) => svc.req('POST', '/api/credits/topup/verify', { body });
  const credits = async (agentId: string, apiKey: string) => (await svc.req('GET', `/api/protocol/agents/${agentId}/credits`, { apiKey })).body;

  /** A registered agent upgraded (and paid) to `tier` through the upgrade route. */
  async function paidAgent(tier = 'builder') {
    const a = await svc.register();
    const order = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/upgrade`, { body: { tier } });
    expect(order.status, order.text).to.equal(200);
    const v = await verify(await pay(order.body.order_id));
    expect(v.status, v.text).to.equal(200);
    return a;
  }

  it('refuses a free-tier top-up order with 403 topup_not_allowed (the refusal is an event) and grants nothing', async () => {
    const a = await svc.register();
    const res = await svc.req('POST', '/api/credits/topup/order', { apiKey: a.api_key, body: { pack: 'small' } });
    expect(res.status, res.text).to.equal(403);
    expect(res.body).to.include({ code: 'topup_not_allowed', upgrade_url: '/api/billing/plans/order', topup_url: '/api/credits/topup/order' });
    expect(await typesOn(agentStream(a.agent_id))).to.not.include('CreditsToppedUp');
    const refused = (await svc.running.services.log.readAll({ after: 0, maxCount: 100_000 })).filter(
      (e) => e.type === 'PaymentOrderRefused' && (e.data as { agent_id: string }).agent_id === a.agent_id,
    );
    expect(refused).to.have.length(1);
    expect((await credits(a.agent_id, a.api_key)).balance).to.equal(50);
  });

  it('upgrades only once the payment is verified: the new tier, its allocation at once, and the upgrade as billing day', async () => {
    const a = await svc.register();
    const order = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/upgrade`, { body: {} });
    expect(order.status, order.text).to.equal(200);
    expect(order.body).to.include({ kind: 'upgrade', amount: 2499, currency: 'INR', provider: 'sandbox' });
    const page = await svc.req('GET', new URL(order.body.payment_url).pathname);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/text\/html/);
    expect(page.text).to.include(order.body.order_id);
    expect((await credits(a.agent_id, a.api_key)).tier).to.equal('free');

    svc.clock.advance(3 * 24 * 3600_000);
    const upgradedAt = svc.clock.now();
    const v = await verify(await pay(order.body.order_id));
    expect(v.status, v.text).to.equal(200);
    expect(v.body).to.include({ status: 'paid', kind: 'upgrade', tier: 'builder', balance: 2050 });
    const c = await credits(a.agent_id, a.api_key);
    expect(c).to.include({ tier: 'builder', balance: 2050, monthly_credits: 2000, used: 0 });
    const nextMonth = new Date(upgradedAt);
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1);
    expect(c.reset_at).to.equal(nextMonth.toISOString());
    expect(await typesOn(agentStream(a.agent_id))).to.include('AgentTierUpgraded');
  });

  it('grants a top-up exactly once when verify is raced 20 times and replayed a day later', async () => {
    const a = await paidAgent('pro');
    const before = (await credits(a.agent_id, a.api_key)).balance;
    const order = await svc.req('POST', '/api/credits/topup/order', { apiKey: a.api_key, body: { pack: 'medium' } });
    expect(order.status, order.text).to.equal(200);
    expect(order.body).to.include({ kind: 'topup', amount: 900, credits: 200, currency: 'INR' });
    const payment = await pay(order.body.order_id);
    const raced = await Promise.all(Array.from({ length: 20 }, () => verify(payment)));
    for (const r of raced) expect(r.status, r.text).to.equal(200);
    expect(raced.filter((r) => r.body.already_verified === false)).to.have.length(1);

    svc.clock.advance(24 * 3600_000);
    const replay = await verify(payment);
    expect(replay.status, replay.text).to.equal(200);
    expect(replay.body).to.include({ already_verified: true });

    const stream = await typesOn(agentStream(a.agent_id));
    expect(stream.filter((t) => t === 'CreditsToppedUp')).to.have.length(1);
    expect((await typesOn(paymentOrderStream(order.body.order_id))).filter((t) => t === 'PaymentVerified')).to.have.length(1);
    expect((await credits(a.agent_id, a.api_key)).balance).to.equal(before + 200);
    const history = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits/history`, { apiKey: a.api_key });
    expect(history.body.transactions[0]).to.include({ type: 'credit', action: 'topup', amount: 200 });
  });

  it('refuses a forged or altered signature with 401 (a PaymentRefused event) and grants nothing', async () => {
    const a = await paidAgent('elite');
    const before = (await credits(a.agent_id, a.api_key)).balance;
    const order = await svc.req('POST', '/api/credits/topup/order', { apiKey: a.api_key, body: { pack: 'small' } });
    const payment = await pay(order.body.order_id);
    const flipped = (payment.signature[0] === 'a' ? 'b' : 'a') + payment.signature.slice(1);
    const forged = [
      { ...payment, signature: flipped },
      { ...payment, signature: 'f'.repeat(64) },
      { ...payment, payment_id: 'pay_someoneelse' },
    ];
    for (const body of forged) {
      const r = await verify(body);
      expect(r.status, r.text).to.equal(401);
      expect(r.body.code).to.equal('invalid_payment_signature');
    }
    expect((await verify({ ...payment, order_id: 'order_unknown' })).status).to.equal(404);
    expect((await verify({ ...payment, signature: '' })).status).to.equal(422);
    const orderTypes = await typesOn(paymentOrderStream(order.body.order_id));
    expect(orderTypes.filter((t) => t === 'PaymentRefused')).to.have.length(3);
    expect(orderTypes).to.not.include('PaymentVerified');
    expect(await typesOn(agentStream(a.agent_id))).to.not.include('CreditsToppedUp');
    expect((await credits(a.agent_id, a.api_key)).balance).to.equal(before);
  });

  it('answers 402 naming working upgrade_url and topup_url routes', async () => {
    const a = await svc.register();
    // The free allocation is 50 credits: a matching run costs 1, so spend it down with posts is slow; drain with runs.
    let res;
    for (let i = 0; i < 60; i++) {
      res = await svc.req('POST', '/api/agent/match', { apiKey: a.api_key, body: { gives: ['lead-gen'], asks: ['design'] } });
      if (res.status === 402) break;
    }
    expect(res?.status, res?.text).to.equal(402);
    expect(res?.body).to.include({
      code: 'insufficient_credits',
      upgrade_url: `/api/protocol/agents/${a.agent_id}/upgrade`,
      topup_url: '/api/credits/topup/order',
    });
    const up = await svc.req('POST', res?.body.upgrade_url, { body: { tier: 'pro' } });
    expect(up.status, up.text).to.equal(200);
    const top = await svc.req('POST', res?.body.topup_url, { apiKey: a.api_key, body: { pack: 'small' } });
    expect(top.status).to.equal(403); // the route answers: a free agent is told to upgrade first
    expect(top.body.code).to.equal('topup_not_allowed');
  });

  it('elite-key: 402 without a paid plan; after a verified plan order the in-app agent follows the plan', async () => {
    const user = await signUp(svc, outbox);
    const none = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(none.status, none.text).to.equal(402);
    expect(none.body).to.include({ code: 'plan_required', upgrade_url: '/api/billing/plans/order', topup_url: '/api/credits/topup/order' });

    const pro = await svc.req('POST', '/api/billing/plans/order', { headers: bearer(user.access_token), body: { plan: 'pro' } });
    expect(pro.status, pro.text).to.equal(200);
    expect(pro.body).to.include({ kind: 'plan', amount: 499 });
    expect((await verify(await pay(pro.body.order_id))).status).to.equal(200);
    const key = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(key.status, key.text).to.equal(200);
    expect(key.body).to.include({ key_shown: true, tier: 'pro', registration_source: 'pro_auto' });

    const elite = await svc.req('POST', '/api/billing/plans/order', { headers: bearer(user.access_token), body: { plan: 'elite' } });
    expect((await verify(await pay(elite.body.order_id))).status).to.equal(200);
    const again = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(again.body).to.include({ agent_id: key.body.agent_id, tier: 'elite', key_shown: false });
  });

  it('with Razorpay configured, the sandbox payment route is gone (404) and a half configuration stops the start', async () => {
    const real = await startTestService({ RAZORPAY_KEY_ID: 'rzp_test_abc123', RAZORPAY_KEY_SECRET: 'secret' });
    try {
      const res = await real.req('POST', '/api/credits/sandbox/pay', { body: { order_id: 'order_x' } });
      expect(res.status).to.equal(404);
    } finally {
      await real.stop();
    }
    expect(() => loadConfig({ RAZORPAY_KEY_ID: 'rzp_test_abc123' })).to.throw(/RAZORPAY_KEY_ID and RAZORPAY_KEY_SECRET/);
  });
});
