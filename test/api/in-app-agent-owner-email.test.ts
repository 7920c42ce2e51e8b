import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("api: the in-app agent does not take its member's address (one protocol agent per owner e-mail, plus one in-app agent per member)", function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  it('provisions the in-app agent for a member whose address has a protocol agent, and the address still refuses a second protocol agent (409)', async () => {
    const email = `inapp.${process.pid}.${Date.now()}@example.com`;
    const user = await signUp(svc, outbox, email);
    expect((await svc.register({ owner_email: email })).agent_id).to.match(/^agt_/);
    const order = await svc.req('POST', '/api/billing/plans/order', { headers: bearer(user.access_token), body: { plan: 'pro' } });
    expect(order.status, order.text).to.equal(200);
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
    expect(paid.status, paid.text).to.equal(200);
    const verified = await svc.req('POST', '/api/credits/topup/verify', {
      body: { order_id: paid.body.order_id, payment_id: paid.body.payment_id, signature: paid.body.signature },
    });
    expect(verified.status, verified.text).to.equal(200);
    const inApp = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(inApp.status, inApp.text).to.equal(200);
    const again = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(again.body).to.include({ agent_id: inApp.body.agent_id, key_shown: false });
    const second = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Second', capabilities: ['lead-gen'], owner_name: 'Owner', owner_email: email.toUpperCase() },
    });
    expect(second.status).to.equal(409);
    expect(second.body.code).to.equal('owner_email_taken');
  });
});
