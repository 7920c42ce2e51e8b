import { expect } from 'chai';
import { produceDigests } from '../../workers/humans/digests.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let n = 0;

describe('api: owner controls and match messages', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'ops@example.com' })));
  after(() => stopWithOutbox(svc, outbox));

  /** A user with an agent linked by a full claim. */
  const owner = async (capabilities = ['lead-gen']) => {
    const email = `owner.ctl${++n}.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ owner_email: email, capabilities });
    const user = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: agent.body.claim_token } });
    const [mail] = await waitForMails(outbox, email);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(user.access_token),
      body: { claim_token: agent.body.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);
    return { ...user, agent_id: agent.agent_id, api_key: agent.api_key };
  };

  it('auto-post prefs: the owner reads and changes their own agent; a user without an agent gets 401', async () => {
    const a = await owner();
    const b = await owner();
    const lonely = await signUp(svc, outbox);
    const get = await svc.req('GET', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.access_token) });
    expect(get.body).to.include({ agent_id: a.agent_id, auto_post_on_scout: true, auto_post_on_mixer: true });
    const patch = await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.access_token), body: { auto_post_on_scout: false } });
    expect(patch.status, patch.text).to.equal(200);
    expect(patch.body).to.include({ auto_post_on_scout: false, auto_post_on_mixer: true });
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).body.auto_post_on_scout).to.equal(false);
    // b's agent is untouched; b can only address its own.
    expect((await svc.req('GET', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(b.access_token) })).body).to.include({
      agent_id: b.agent_id,
      auto_post_on_scout: true,
    });
    const none = await svc.req('GET', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(lonely.access_token) });
    expect(none.status).to.equal(401);
    expect(none.body.detail).to.equal('No active agent linked to your account');
    expect((await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', { apiKey: a.api_key, body: { auto_post_on_scout: true } })).status).to.equal(401);
    expect(
      (await svc.req('PATCH', '/api/svc/my-agent/auto-post-prefs', { headers: bearer(a.access_token), body: { auto_post_on_scout: 'no' } })).status,
    ).to.equal(422);
  });

  it('digests: the worker lists new agents sharing a capability; each user reads and marks only their own', async () => {
    const a = await owner(['talent-matching']);
    const b = await owner(['b2b-sales']);
    svc.clock.advance(60_000);
    const newcomer = await svc.register({ capabilities: ['talent-matching', 'lead-gen'] });
    expect(await produceDigests(svc.running.services)).to.be.greaterThan(0);
    const list = await svc.req('GET', '/api/svc/digests', { headers: bearer(a.access_token) });
    expect(list.status).to.equal(200);
    expect(list.body.total).to.equal(1);
    expect(list.body.unread_count).to.equal(1);
    const digest = list.body.items[0];
    expect(digest.items.map((i: { agent_id: string }) => i.agent_id)).to.include(newcomer.agent_id);
    expect(digest.items.map((i: { agent_id: string }) => i.agent_id)).to.not.include(a.agent_id);
    // Running again the same day adds nothing.
    await produceDigests(svc.running.services);
    expect((await svc.req('GET', '/api/svc/digests', { headers: bearer(a.access_token) })).body.total).to.equal(1);

    const foreign = await svc.req('POST', `/api/svc/digests/${digest.digest_id}/read`, { headers: bearer(b.access_token) });
    expect(foreign.status).to.equal(404);
    const read = await svc.req('POST', `/api/svc/digests/${digest.digest_id}/read`, { headers: bearer(a.access_token) });
    expect(read.status, read.text).to.equal(200);
    const after = await svc.req('GET', '/api/svc/digests', { headers: bearer(a.access_token) });
    expect(after.body.unread_count).to.equal(0);
    expect(after.body.items[0].read).to.equal(true);
    expect(
      (await svc.req('GET', '/api/svc/digests', { headers: bearer(b.access_token) })).body.items.every(
        (d: { digest_id: string }) => d.digest_id !== digest.digest_id,
      ),
    ).to.equal(true);
    expect((await svc.req('GET', '/api/svc/digests')).status).to.equal(401);
  });

  it('draft-comment: deterministic text from the post and the agent, free, bearer only', async () => {
    const a = await owner(['investor-connect']);
    const author = await svc.register();
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: author.api_key,
      body: { title: 'Raising a seed round', body: 'Looking for angels #fundraising', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);
    const ask = () => svc.req('POST', '/api/agent/draft-comment', { headers: bearer(a.access_token), body: { post_id: post.body.post_id } });
    const d1 = await ask();
    expect(d1.status, d1.text).to.equal(200);
    expect(d1.body.draft).to.contain('Raising a seed round');
    expect(d1.body.draft).to.contain('investor connect');
    expect((await ask()).body.draft).to.equal(d1.body.draft);
    const briefed = await svc.req('POST', '/api/agent/draft-comment', {
      headers: bearer(a.access_token),
      body: { post_id: post.body.post_id, brief: 'Mention our angel list' },
    });
    expect(briefed.body.draft).to.contain('Mention our angel list');
    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body.balance).to.equal(50);
    expect((await svc.req('POST', '/api/agent/draft-comment', { apiKey: a.api_key, body: { post_id: post.body.post_id } })).status).to.equal(401);
    expect((await svc.req('POST', '/api/agent/draft-comment', { headers: bearer(a.access_token), body: { post_id: 'pst_missing' } })).status).to.equal(404);
  });

  it('match messages: only super admins create matches; only the two members read, write, report; only the sender deletes', async () => {
    const ops = await signUp(svc, outbox, 'ops@example.com');
    const a = await owner(['co-founder-search']);
    const b = await owner(['co-founder-search']);
    const c = await signUp(svc, outbox);
    expect(
      (await svc.req('POST', '/api/admin/matches', { headers: bearer(a.access_token), body: { user_a_id: a.user_id, user_b_id: b.user_id } })).status,
    ).to.equal(403);
    const m = await svc.req('POST', '/api/admin/matches', {
      headers: bearer(ops.access_token),
      body: { user_a_id: a.user_id, user_b_id: b.user_id, reason: 'both look for a co-founder' },
    });
    expect(m.status, m.text).to.equal(200);
    const matchId = m.body.match_id as string;
    expect(matchId).to.match(/^mtc_/);

    const sent = await svc.req('POST', '/api/messages', { headers: bearer(a.access_token), body: { match_id: matchId, content: 'Hi! When could we meet?' } });
    expect(sent.status, sent.text).to.equal(200);
    expect(sent.body).to.include({ match_id: matchId, sender_id: a.user_id, content: 'Hi! When could we meet?', is_read: false });
    expect((await svc.req('POST', '/api/messages', { headers: bearer(c.access_token), body: { match_id: matchId, content: 'intruder' } })).status).to.equal(
      403,
    );
    expect((await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(c.access_token) })).status).to.equal(403);
    expect((await svc.req('GET', '/api/messages/mtc_nope', { headers: bearer(a.access_token) })).status).to.equal(404);

    expect((await svc.req('GET', '/api/messages/unread/count', { headers: bearer(b.access_token) })).body.unread_count).to.equal(1);
    expect((await svc.req('GET', '/api/messages/unread/count', { headers: bearer(a.access_token) })).body.unread_count).to.equal(0);
    const thread = await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(b.access_token) });
    expect(thread.body).to.have.length(1);
    expect((await svc.req('GET', '/api/messages/unread/count', { headers: bearer(b.access_token) })).body.unread_count).to.equal(0);

    const qr = await svc.req('GET', `/api/messages/${matchId}/quick-replies`, { headers: bearer(b.access_token) });
    expect(qr.body.replies).to.have.length(4);
    expect(qr.body.replies[0]).to.match(/time|happy/i);
    const op = await svc.req('GET', `/api/messages/${matchId}/openers`, { headers: bearer(b.access_token) });
    expect(op.body.openers).to.have.length(3);
    expect(op.body.openers.join(' ')).to.contain('co-founder');
    expect((await svc.req('GET', `/api/messages/${matchId}/openers`, { headers: bearer(b.access_token) })).body).to.deep.equal(op.body);
    expect((await svc.req('GET', `/api/messages/${matchId}/openers`, { headers: bearer(c.access_token) })).status).to.equal(403);

    const msgId = sent.body.message_id as string;
    expect((await svc.req('DELETE', `/api/messages/${msgId}`, { headers: bearer(b.access_token) })).status).to.equal(403);
    expect((await svc.req('DELETE', `/api/messages/${msgId}`, { headers: bearer(c.access_token) })).status).to.equal(403);
    expect((await svc.req('POST', `/api/messages/${msgId}/report`, { headers: bearer(c.access_token), body: { reason: 'spam' } })).status).to.equal(403);
    expect((await svc.req('POST', `/api/messages/${msgId}/report`, { headers: bearer(a.access_token), body: { reason: 'spam' } })).status).to.equal(400);
    const report = await svc.req('POST', `/api/messages/${msgId}/report`, {
      headers: bearer(b.access_token),
      body: { reason: 'spam', details: 'unsolicited' },
    });
    expect(report.status, report.text).to.equal(200);
    const del = await svc.req('DELETE', `/api/messages/${msgId}`, { headers: bearer(a.access_token) });
    expect(del.status, del.text).to.equal(200);
    expect((await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(a.access_token) })).body).to.deep.equal([]);
    const types = (await svc.running.services.log.readStream(`match-${matchId}`)).map((e) => e.type);
    expect(types).to.deep.equal(['MatchCreated', 'MatchMessageSent', 'MatchMessagesRead', 'MatchMessageReported', 'MatchMessageDeleted']);
  });
});
