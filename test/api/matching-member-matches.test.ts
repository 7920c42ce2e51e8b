import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUpWithAgent } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: a matching run opens member matches between the owners of the matched agents', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
  });
  after(() => stopWithOutbox(svc, outbox));

  const run = (apiKey: string, gives: string[], asks: string[]) => svc.req('POST', '/api/agent/match', { apiKey, body: { gives, asks } });

  it('opens one match per pair of owners (a second run reuses it), which both owners can message in, and tells both agents in new_match', async () => {
    const a = await signUpWithAgent(svc, outbox, { capabilities: ['lead-gen'] });
    const b = await signUpWithAgent(svc, outbox, { capabilities: ['b2b-sales'] });
    // B stands needing lead-gen; A runs asking for b2b-sales while it offers lead-gen.
    expect((await run(b.agent.api_key, ['b2b-sales'], ['lead-gen'])).status).to.equal(200);
    const first = await run(a.agent.api_key, ['lead-gen'], ['b2b-sales']);
    expect(first.status, first.text).to.equal(200);
    expect(first.body.matches.map((m: { agent_id: string }) => m.agent_id)).to.deep.equal([b.agent.agent_id]);
    const matchId = first.body.matches[0].member_match_id as string;
    expect(matchId).to.match(/^mtc_/);

    const sent = await svc.req('POST', '/api/messages', {
      headers: bearer(a.user.access_token),
      body: { match_id: matchId, content: 'Our agents matched: talk?' },
    });
    expect(sent.status, sent.text).to.equal(200);
    const thread = await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(b.user.access_token) });
    expect(thread.status, thread.text).to.equal(200);
    expect(thread.body.map((m: { content: string }) => m.content)).to.deep.equal(['Our agents matched: talk?']);

    const inbox = await svc.req('GET', `/api/protocol/agents/${b.agent.agent_id}/matches`, { apiKey: b.agent.api_key });
    const entry = (inbox.body.events as Array<{ payload: { run_id: string; member_match_id: string | null } }>).find(
      (e) => e.payload.run_id === first.body.run_id,
    );
    expect(entry?.payload.member_match_id).to.equal(matchId);

    const second = await run(a.agent.api_key, ['lead-gen'], ['b2b-sales']);
    expect(second.body.matches[0].member_match_id).to.equal(matchId);
    const created = await svc.running.services.log.readStream(`match-${matchId}`);
    expect(created.filter((e) => e.type === 'MatchCreated')).to.have.length(1);
    expect(created[0].data).to.include({ user_a_id: a.user.user_id, user_b_id: b.user.user_id, created_by: `run:${first.body.run_id}` });
  });

  it('opens none when an agent has no owner, or its owner is not a discoverable member', async () => {
    const a = await signUpWithAgent(svc, outbox, { capabilities: ['founder-matching'] });
    const hidden = await signUpWithAgent(svc, outbox, { capabilities: ['talent-matching'] });
    const patched = await svc.req('PATCH', '/api/auth/me', { headers: bearer(hidden.user.access_token), body: { discoverable: false } });
    expect(patched.status, patched.text).to.equal(200);
    const unclaimed = await svc.register({ capabilities: ['talent-matching'] });
    expect((await run(hidden.agent.api_key, ['talent-matching'], ['founder-matching'])).status).to.equal(200);
    expect((await run(unclaimed.api_key, ['talent-matching'], ['founder-matching'])).status).to.equal(200);
    const r = await run(a.agent.api_key, ['founder-matching'], ['talent-matching']);
    expect(r.body.matches).to.have.length(2);
    expect(r.body.matches.map((m: { member_match_id: string | null }) => m.member_match_id)).to.deep.equal([null, null]);
  });
});
