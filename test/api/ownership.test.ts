import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { otpStream } from '../../events/humans.ts';
import { codeIn, readOutbox, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let n = 0;
const ownerEmail = () => `owner.claim${++n}.${process.pid}.${Date.now()}@example.com`;

describe('api: claims, keys and the Elite key', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox()));

  /** An Elite plan bought through the sandbox provider (the in-app agent follows the member's plan). */
  async function buyPlan(token: string): Promise<void> {
    const order = await svc.req('POST', '/api/billing/plans/order', { headers: bearer(token), body: { plan: 'elite' } });
    expect(order.status, order.text).to.equal(200);
    const paid = await svc.req('POST', '/api/credits/sandbox/pay', { body: { order_id: order.body.order_id } });
    const { order_id, payment_id, signature } = paid.body as Record<string, string>;
    const verified = await svc.req('POST', '/api/credits/topup/verify', { body: { order_id, payment_id, signature } });
    expect(verified.status, verified.text).to.equal(200);
  }
  after(() => stopWithOutbox(svc, outbox));

  const registerOwned = async () => {
    const email = ownerEmail();
    const a = await svc.register({ owner_email: email });
    return { ...a, email, claim_token: a.body.claim_token as string };
  };

  it('lite claim: the OTP to the owner e-mail claims the agent, adds the badge and lifts the DM lock at once', async () => {
    const a = await registerOwned();
    const b = await svc.register();
    const locked = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message: 'hello' } });
    expect(locked.status).to.equal(403);
    expect(locked.body.code).to.equal('dm_locked');

    const req = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`);
    expect(req.status, req.text).to.equal(200);
    expect(req.body.message).to.not.contain(a.email);
    const [mail] = await waitForMails(outbox, a.email);
    expect(mail.subject).to.contain('Claim code');
    const wrong = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/verify`, {
      body: { otp: codeIn(mail) === '000000' ? '111111' : '000000' },
    });
    expect(wrong.status).to.equal(400);
    const ok = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/verify`, { body: { otp: codeIn(mail) } });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.include({ is_claimed: true, claimed_via: 'email_otp' });
    expect(ok.body.badges).to.deep.equal(['email_verified']);
    const profile = await svc.req('GET', `/api/protocol/agents/${a.agent_id}`);
    expect(profile.body).to.include({ is_claimed: true, claimed_via: 'email_otp' });

    const dm = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/dm`, { apiKey: a.api_key, body: { to_agent_id: b.agent_id, message: 'hello' } });
    expect(dm.status, dm.text).to.equal(200);

    expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`)).status).to.equal(409);
    expect((await svc.req('POST', '/api/protocol/agents/agt_nope/claim/lite/request-otp')).status).to.equal(404);
    const events = await svc.running.services.log.readStream(`agent-${a.agent_id}`);
    expect(events.map((e) => e.type)).to.include.members(['AgentClaimed', 'MailQueued']);
  });

  it('full claim: claim token + OTP while signed in links the agent, which then shows in /api/auth/me and acts for the user on K|J routes', async () => {
    const a = await registerOwned();
    const user = await signUp(svc, outbox);
    expect((await svc.req('POST', '/api/protocol/claim', { body: { claim_token: a.claim_token, otp: '123456' } })).status).to.equal(401);
    expect((await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: 'clm_wrong' } })).status).to.equal(404);
    const req = await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.claim_token } });
    expect(req.status, req.text).to.equal(200);
    const [mail] = await waitForMails(outbox, a.email);
    const claim = await svc.req('POST', '/api/protocol/claim', { headers: bearer(user.access_token), body: { claim_token: a.claim_token, otp: codeIn(mail) } });
    expect(claim.status, claim.text).to.equal(200);
    expect(claim.body).to.include({ agent_id: a.agent_id, is_claimed: true, owner_user_id: user.user_id });

    const me = await svc.req('GET', '/api/auth/me', { headers: bearer(user.access_token) });
    expect(me.body.agents.map((x: { agent_id: string }) => x.agent_id)).to.deep.equal([a.agent_id]);
    expect(me.body.active_agent_id).to.equal(a.agent_id);

    const post = await svc.req('POST', '/api/feed/posts', {
      headers: bearer(user.access_token),
      body: { title: 'From the owner', body: 'Posted with a bearer token', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);
    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body.balance).to.equal(49.9);

    // Nobody else can take it over.
    const other = await signUp(svc, outbox);
    expect((await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.claim_token } })).status).to.equal(409);
    const steal = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(other.access_token),
      body: { claim_token: a.claim_token, otp: codeIn(mail) },
    });
    expect(steal.status).to.equal(409);
    expect((await svc.req('GET', '/api/auth/me', { headers: bearer(other.access_token) })).body.agents).to.deep.equal([]);
  });

  it('rotate-key: only the owner, bearer only; the old key fails at once, the change is an audited event and a mail', async () => {
    const a = await registerOwned();
    const owner = await signUp(svc, outbox);
    const stranger = await signUp(svc, outbox);
    // Before any claim, rotation is refused.
    const early = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/rotate-key`, { headers: bearer(owner.access_token) });
    expect(early.status).to.equal(403);
    expect(early.body.code).to.equal('claim_required');

    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.claim_token } });
    const [mail] = await waitForMails(outbox, a.email);
    expect(
      (await svc.req('POST', '/api/protocol/claim', { headers: bearer(owner.access_token), body: { claim_token: a.claim_token, otp: codeIn(mail) } })).status,
    ).to.equal(200);

    expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/rotate-key`, { apiKey: a.api_key })).status).to.equal(401);
    const denied = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/rotate-key`, { headers: bearer(stranger.access_token) });
    expect(denied.status).to.equal(403);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);

    const rotated = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/rotate-key`, {
      headers: { ...bearer(owner.access_token), 'x-request-id': 'rotate-req-1' },
    });
    expect(rotated.status, rotated.text).to.equal(200);
    expect(rotated.body.api_key).to.match(/^ans_live_/);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(401);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: rotated.body.api_key })).status).to.equal(200);

    const events = await svc.running.services.log.readStream(`agent-${a.agent_id}`);
    const change = events.find((e) => e.type === 'ApiKeyReplaced');
    expect(change?.metadata).to.include({ actor: owner.user_id, request_id: 'rotate-req-1' });
    expect(change?.data).to.include({ reason: 'rotation' });
    const mails = await waitForMails(outbox, a.email, 3);
    expect(mails.map((m) => m.subject).join('|')).to.contain('API key');
  });

  /** Registers an agent and links it to a new signed-in user by the full claim. */
  const registerLinked = async () => {
    const a = await registerOwned();
    const owner = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.claim_token } });
    const [mail] = await waitForMails(outbox, a.email);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(owner.access_token),
      body: { claim_token: a.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);
    return { a, owner, mailsSoFar: (await waitForMails(outbox, a.email, 2)).length };
  };

  it('lost-key recovery: the linked owner gets an OTP by e-mail, then a new key; the old one fails', async () => {
    const { a, owner, mailsSoFar } = await registerLinked();
    expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key/request-otp`)).status).to.equal(401);
    const req = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key/request-otp`, { headers: bearer(owner.access_token) });
    expect(req.status, req.text).to.equal(200);
    const mail = (await waitForMails(outbox, a.email, mailsSoFar + 1))[mailsSoFar];
    expect(mail.subject).to.contain('Key recovery');
    const bad = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key`, {
      headers: bearer(owner.access_token),
      body: { otp: codeIn(mail) === '000000' ? '111111' : '000000' },
    });
    expect(bad.status).to.equal(400);
    const ok = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key`, { headers: bearer(owner.access_token), body: { otp: codeIn(mail) } });
    expect(ok.status, ok.text).to.equal(200);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(401);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: ok.body.api_key })).status).to.equal(200);
    expect(
      (await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key`, { headers: bearer(owner.access_token), body: { otp: codeIn(mail) } })).status,
    ).to.equal(400);
  });

  it('lost-key recovery: another signed-in user gets 403, nothing is mailed and nothing counts against the owner (defect 8)', async () => {
    const { a, owner, mailsSoFar } = await registerLinked();
    const stranger = await signUp(svc, outbox);
    // More attempts than the hourly cap of codes (5): none may be issued or counted.
    for (let i = 0; i < 6; i++) {
      const r = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key/request-otp`, { headers: bearer(stranger.access_token) });
      expect(r.status, r.text).to.equal(403);
      expect(r.body.code).to.equal('not_owner');
    }
    expect(await svc.running.services.log.readStream(otpStream('key_recovery', a.agent_id))).to.deep.equal([]);
    // The stranger cannot spend the owner's code attempts either.
    const guess = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key`, {
      headers: bearer(stranger.access_token),
      body: { otp: '123456' },
    });
    expect(guess.status).to.equal(403);

    const mine = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key/request-otp`, { headers: bearer(owner.access_token) });
    expect(mine.status, mine.text).to.equal(200);
    const mails = await waitForMails(outbox, a.email, mailsSoFar + 1);
    expect(mails.filter((m) => m.subject.includes('Key recovery'))).to.have.length(1);
    const ok = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/regenerate-key`, {
      headers: bearer(owner.access_token),
      body: { otp: codeIn(mails[mailsSoFar]) },
    });
    expect(ok.status, ok.text).to.equal(200);
  });

  it('elite key: provisioned once per user (elite_auto), shown once, regenerated on demand; each user sees only their own', async () => {
    const user = await signUp(svc, outbox);
    const other = await signUp(svc, outbox);
    expect((await svc.req('GET', '/api/protocol/elite-key')).status).to.equal(401);
    await buyPlan(user.access_token);
    await buyPlan(other.access_token);
    const first = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ key_shown: true, tier: 'elite', registration_source: 'elite_auto' });
    const me = await svc.req('GET', '/api/protocol/me', { apiKey: first.body.api_key });
    expect(me.body).to.include({ agent_id: first.body.agent_id, registration_source: 'elite_auto', is_claimed: true });
    const again = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    expect(again.body).to.include({ agent_id: first.body.agent_id, api_key: null, key_shown: false });

    const regen = await svc.req('POST', '/api/protocol/elite-key/regenerate', { headers: bearer(user.access_token) });
    expect(regen.status, regen.text).to.equal(200);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: first.body.api_key })).status).to.equal(401);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: regen.body.api_key })).status).to.equal(200);

    expect((await svc.req('POST', '/api/protocol/elite-key/regenerate', { headers: bearer(other.access_token) })).status).to.equal(404);
    const theirs = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(other.access_token) });
    expect(theirs.body.agent_id).to.not.equal(first.body.agent_id);
    const dash = await svc.req('GET', '/api/auth/me', { headers: bearer(user.access_token) });
    expect(dash.body.agents.map((x: { agent_id: string }) => x.agent_id)).to.deep.equal([first.body.agent_id]);
  });

  it('leaves no plaintext API key, claim token or code under DATA_DIR', async () => {
    const a = await registerOwned();
    const user = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.claim_token } });
    const [mail] = await waitForMails(outbox, a.email);
    await svc.req('POST', '/api/protocol/claim', { headers: bearer(user.access_token), body: { claim_token: a.claim_token, otp: codeIn(mail) } });
    const rotated = await svc.req('POST', `/api/protocol/agents/${a.agent_id}/rotate-key`, { headers: bearer(user.access_token) });
    await buyPlan(user.access_token);
    const elite = await svc.req('GET', '/api/protocol/elite-key', { headers: bearer(user.access_token) });
    const codes = readOutbox(outbox)
      .map((m) => / is: (\d{6})$/m.exec(m.text)?.[1])
      .filter((c): c is string => Boolean(c));
    const needles = [a.api_key, a.claim_token, rotated.body.api_key, elite.body.api_key, user.password, user.refresh_token, ...codes.map((c) => ` is: ${c}`)];
    for (const s of needles) expect(s).to.be.a('string');
    // Regular files only: a split-role run (TEST_ROLES=split) also has the projector's socket there.
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const st = statSync(join(dir, f));
        return st.isDirectory() ? files(join(dir, f)) : st.isFile() ? [join(dir, f)] : [];
      });
    for (const f of files(svc.dataDir)) {
      const content = readFileSync(f).toString('latin1');
      for (const needle of needles) expect(content.includes(needle), `${needle.slice(0, 14)}... in ${f}`).to.equal(false);
    }
  });
});
