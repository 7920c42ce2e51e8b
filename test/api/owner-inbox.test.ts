import { expect } from 'chai';
import { HOUR } from '../../events/kernel/clock.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import type { TestService } from '../helpers/service.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import { freshEmail, signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: owner inbox (bearer): agent DMs to a member, also those sent before they joined', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  it('delivers a DM to an address on join, groups by sender, threads both directions and charges 0.25 per reply as the linked agent', async () => {
    const x = await svc.register();
    svc.clock.advance(HOUR);
    const email = freshEmail();
    const early = await svc.req('POST', `/api/protocol/agents/${x.agent_id}/dm`, {
      apiKey: x.api_key,
      body: { to_email: email, message: 'Before you joined' },
    });
    expect(early.status).to.equal(200);
    expect(early.body.status).to.equal('stored_for_member');

    const user = await signUp(svc, outbox, email);
    const ownerEmail = freshEmail();
    const linked = await svc.register({ owner_email: ownerEmail });
    expect((await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: linked.body.claim_token } })).status).to.equal(200);
    const [mail] = await waitForMails(outbox, ownerEmail);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(user.access_token),
      body: { claim_token: linked.body.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);

    let inbox = await svc.req('GET', '/api/agent/my-inbox', { headers: bearer(user.access_token) });
    expect(inbox.status).to.equal(200);
    expect(inbox.body.items).to.have.length(1);
    expect(inbox.body.items[0]).to.include({ agent_id: x.agent_id, message_count: 1, last_message: 'Before you joined' });

    svc.clock.advance(60_000);
    const byId = await svc.req('POST', `/api/protocol/agents/${x.agent_id}/dm`, {
      apiKey: x.api_key,
      body: { to_user_id: user.user_id, message: 'Now by user id' },
    });
    expect(byId.status).to.equal(200);
    inbox = await svc.req('GET', '/api/agent/my-inbox', { headers: bearer(user.access_token) });
    expect(inbox.body.items[0]).to.include({ message_count: 2, last_message: 'Now by user id' });

    svc.clock.advance(60_000);
    const reply = await svc.req('POST', `/api/agent/my-inbox/${x.agent_id}/reply`, {
      headers: bearer(user.access_token),
      body: { message: 'Thanks, let us talk' },
    });
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body).to.include({ from_agent_id: linked.agent_id, to_agent_id: x.agent_id, credits_charged: 0.25, balance: 49.75 });
    const history = await svc.req('GET', `/api/protocol/agents/${linked.agent_id}/credits/history`, { apiKey: linked.api_key });
    expect(history.body.transactions[0]).to.include({ action: 'owner_dm_reply', amount: 0.25 });
    const xInbox = await svc.req('GET', `/api/protocol/agents/${x.agent_id}/inbox`, { apiKey: x.api_key });
    expect(xInbox.body.events[0]).to.include({ event: 'new_dm' });
    expect(xInbox.body.events[0].payload).to.include({ from_agent_id: linked.agent_id, message: 'Thanks, let us talk' });

    const thread = await svc.req('GET', `/api/agent/my-inbox/${x.agent_id}/thread`, { headers: bearer(user.access_token) });
    expect(thread.status).to.equal(200);
    expect(thread.body.messages.map((m: { direction: string; message: string }) => [m.direction, m.message])).to.deep.equal([
      ['inbound', 'Before you joined'],
      ['inbound', 'Now by user id'],
      ['outbound', 'Thanks, let us talk'],
    ]);

    // Another member sees nothing of it and cannot reply into it; API keys and anonymous callers are refused.
    const other = await signUp(svc, outbox);
    expect((await svc.req('GET', '/api/agent/my-inbox', { headers: bearer(other.access_token) })).body.items).to.deep.equal([]);
    expect((await svc.req('GET', `/api/agent/my-inbox/${x.agent_id}/thread`, { headers: bearer(other.access_token) })).status).to.equal(404);
    const noAgent = await svc.req('POST', `/api/agent/my-inbox/${x.agent_id}/reply`, { headers: bearer(other.access_token), body: { message: 'hi' } });
    expect(noAgent.status).to.equal(401);
    expect(noAgent.body.detail).to.equal('No active agent linked to your account');
    expect((await svc.req('GET', '/api/agent/my-inbox', { apiKey: x.api_key })).status).to.equal(401);
    expect((await svc.req('GET', '/api/agent/my-inbox')).status).to.equal(401);
    expect((await svc.req('POST', `/api/agent/my-inbox/agt_stranger/reply`, { headers: bearer(user.access_token), body: { message: 'hi' } })).status).to.equal(
      404,
    );
  });
});
