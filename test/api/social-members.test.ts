import { expect } from 'chai';
import { DAY } from '../../events/kernel/clock.ts';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let n = 0;

describe('api: members, match search, introductions and builder profiles', function () {
  this.timeout(60_000);
  let svc: TestService;
  let outbox: string;
  const emails: string[] = [];

  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  const member = async (profile: Record<string, unknown>) => {
    const user = await signUp(svc, outbox);
    emails.push(user.email);
    const r = await svc.req('PATCH', '/api/auth/me', { headers: bearer(user.access_token), body: profile });
    expect(r.status, r.text).to.equal(200);
    return user;
  };
  /** A user with an agent linked by a full claim. */
  const owner = async (capabilities = ['lead-gen']) => {
    const email = `owner.social${++n}.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ owner_email: email, capabilities });
    const user = await signUp(svc, outbox);
    emails.push(user.email, email);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: agent.body.claim_token } });
    const [mail] = await waitForMails(outbox, email);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(user.access_token),
      body: { claim_token: agent.body.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);
    return { ...user, agent_id: agent.agent_id, api_key: agent.api_key };
  };
  const noEmail = (text: string) => {
    for (const e of emails) expect(text).to.not.include(e);
    expect(text).to.not.match(/"email"/);
  };

  it('sets a member profile with PATCH /api/auth/me (normalised gives and asks, region upper case); refuses bad fields with 422', async () => {
    const user = await signUp(svc, outbox);
    const r = await svc.req('PATCH', '/api/auth/me', {
      headers: bearer(user.access_token),
      body: { headline: 'Founder at Quarkworks', industry: 'technology', region: 'in', gives: ['Lead Gen', 'b2b_sales'], asks: ['investor connect'] },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ headline: 'Founder at Quarkworks', industry: 'technology', region: 'IN', discoverable: true, full_name: 'Ada Lovelace' });
    expect(r.body.gives).to.deep.equal(['lead-gen', 'b2b-sales']);
    expect(r.body.asks).to.deep.equal(['investor-connect']);
    noEmail(r.text);
    expect((await svc.req('PATCH', '/api/auth/me', { headers: bearer(user.access_token), body: { industry: 'astrology' } })).status).to.equal(422);
    expect((await svc.req('PATCH', '/api/auth/me', { headers: bearer(user.access_token), body: { headline: 'x'.repeat(121) } })).status).to.equal(422);
    expect((await svc.req('PATCH', '/api/auth/me', { headers: bearer(user.access_token), body: { gives: Array(11).fill('lead-gen') } })).status).to.equal(422);
    expect((await svc.req('PATCH', '/api/auth/me', { body: { headline: 'x' } })).status).to.equal(401);
  });

  it('searches discoverable members by q and industry (K), never a hidden one and never an e-mail; index-served', async () => {
    const agent = await svc.register();
    const visible = await member({ headline: 'Zyxquant fintech founder', industry: 'finance', gives: ['zyxquant-advice'] });
    const hidden = await member({ headline: 'Zyxquant stealth founder', industry: 'finance', discoverable: false });
    const list = await svc.req('GET', '/api/members?q=zyxquant', { apiKey: agent.api_key });
    expect(list.status).to.equal(200);
    expect(list.body.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([visible.user_id]);
    noEmail(list.text);
    const byIndustry = await svc.req('GET', '/api/members?industry=finance&limit=50', { apiKey: agent.api_key });
    expect(byIndustry.body.members.map((m: { user_id: string }) => m.user_id))
      .to.include(visible.user_id)
      .and.not.include(hidden.user_id);
    const all = await svc.req('GET', '/api/members?limit=50', { apiKey: agent.api_key });
    expect(all.body.members.map((m: { user_id: string }) => m.user_id)).to.not.include(hidden.user_id);
    noEmail(all.text);
    expect((await svc.req('GET', '/api/members?limit=51', { apiKey: agent.api_key })).status).to.equal(422);
    expect((await svc.req('GET', '/api/members')).status).to.equal(401);
    // Hiding takes a member out at once; showing again brings them back.
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(visible.access_token), body: { discoverable: false } });
    expect((await svc.req('GET', '/api/members?q=zyxquant', { apiKey: agent.api_key })).body.members).to.deep.equal([]);
    const search = await svc.req('POST', '/api/protocol/match/search', { apiKey: agent.api_key, body: { query: 'zyxquant founder', limit: 50 } });
    const found = search.body.results.map((m: { user_id: string }) => m.user_id);
    expect(found).to.not.include(visible.user_id);
    expect(found).to.not.include(hidden.user_id);
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(visible.access_token), body: { discoverable: true } });
    const members = svc.running.services.store.collection('members');
    const plan = await members.explain({ dir_terms: 'zyxquant' }, { sort: { seq: -1 }, limit: 21, hint: 'dir_terms' });
    expect(plan.index).to.equal('dir_terms');
    expect(plan.examined).to.equal(1);
    expect((await members.explain({ dir_industry: 'finance' }, { sort: { seq: -1 }, limit: 21, hint: 'dir_industry' })).index).to.equal('dir_industry');
  });

  it('ranks natural-language match search with the full-text library, and matches gives and asks bilaterally', async () => {
    const agent = await svc.register({ capabilities: ['growth-hacking'] });
    const best = await member({
      headline: 'Helps startups raise seed rounds',
      gives: ['fundraising-help'],
      asks: ['growth-hacking'],
      bio: 'Angel investor in climate tech',
    });
    const other = await member({ headline: 'Climate researcher', gives: ['climate-data'] });
    const r = await svc.req('POST', '/api/protocol/match/search', {
      apiKey: agent.api_key,
      body: { query: 'investor for a climate startup seed round', limit: 5 },
    });
    expect(r.status, r.text).to.equal(200);
    const ids = r.body.results.map((x: { user_id: string }) => x.user_id);
    expect(ids[0]).to.equal(best.user_id);
    expect(ids).to.include(other.user_id);
    expect(r.body.results[0].score).to.be.greaterThan(r.body.results[1].score);
    noEmail(r.text);
    const bilateral = await svc.req('POST', '/api/members/match', { apiKey: agent.api_key, body: { gives: ['growth-hacking'], asks: ['fundraising-help'] } });
    expect(bilateral.status).to.equal(200);
    // An intent match is a matching run (the spec's cost table): 1 credit.
    expect(bilateral.headers['x-credits-cost']).to.equal('1');
    expect(bilateral.body.credits_charged).to.equal(1);
    expect(bilateral.body.matches[0]).to.deep.include({ bilateral: true, they_give: ['fundraising-help'], they_ask: ['growth-hacking'] });
    expect(bilateral.body.matches[0].member.user_id).to.equal(best.user_id);
    const why = await svc.req('GET', `/api/members/${best.user_id}/why-meet`, { apiKey: agent.api_key });
    expect(why.status).to.equal(200);
    expect(why.body.they_ask).to.deep.equal(['growth-hacking']);
    expect(why.body.text).to.include('growth hacking');
    const research = await svc.req('GET', `/api/members/${best.user_id}/research`, { apiKey: agent.api_key });
    expect(research.body.summary).to.include('Helps startups raise seed rounds');
    expect((await svc.req('GET', `/api/members/${best.user_id}/research`, { apiKey: agent.api_key })).body).to.deep.equal(research.body);
    noEmail(research.text + why.text);
  });

  it('an intent match (find_intent_match) costs 1 credit like a matching run: recorded on the agent stream, a dry run appends nothing, 402 once the balance is spent', async () => {
    const a = await svc.register();
    const match = () => svc.req('POST', '/api/members/match', { apiKey: a.api_key, body: { gives: ['growth-hacking'], asks: ['fundraising-help'] } });
    const dry = await svc.req('POST', '/api/members/match?dry_run=1', { apiKey: a.api_key, body: { asks: ['fundraising-help'] } });
    expect(dry.body).to.include({ dry_run: true, would_pass: true, cost: 1, balance: 50 });
    const first = await match();
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ credits_charged: 1, balance: 49 });
    expect(first.body.run_id).to.match(/^run_/);
    const runs = (await svc.running.services.log.readStream(`agent-${a.agent_id}`)).filter((e) => e.type === 'IntentMatchRunCompleted');
    expect(runs).to.have.length(1);
    for (let i = 0; i < 49; i++) expect((await match()).status).to.equal(200);
    const refused = await match();
    expect(refused.status, refused.text).to.equal(402);
    expect(refused.body.code).to.equal('insufficient_credits');
    const credits = await svc.req('GET', `/api/protocol/agents/${a.agent_id}/credits`, { apiKey: a.api_key });
    expect(credits.body).to.include({ balance: 0, used: 50 });
  });

  it('introductions: a claimed agent requests (0.25), the member approves as an owner action, a match opens and the agent gets new_match', async () => {
    const o = await owner();
    const target = await member({ headline: 'Operator' });
    const unclaimed = await svc.register();
    const refused = await svc.req('POST', '/api/agent/intros', { apiKey: unclaimed.api_key, body: { member_id: target.user_id, reason: 'Hello' } });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('agent_not_claimed');
    const unknown = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: 'usr_nobody000000000000', reason: 'Hello' } });
    expect(unknown.status).to.equal(404);
    const self = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: o.user_id, reason: 'Hello' } });
    expect(self.status).to.equal(400);

    const req = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: target.user_id, reason: 'We both do ops' } });
    expect(req.status, req.text).to.equal(200);
    expect(req.body).to.include({ status: 'pending', credits_charged: 0.25, balance: 49.75 });
    const dup = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: target.user_id, reason: 'Again' } });
    expect(dup.status).to.equal(409);
    const pending = await svc.req('GET', '/api/svc/intros', { headers: bearer(target.access_token) });
    expect(pending.body.intros.map((i: { intro_id: string }) => i.intro_id)).to.deep.equal([req.body.intro_id]);
    noEmail(pending.text);
    // Someone else cannot answer it.
    const stranger = await svc.req('POST', `/api/svc/intros/${req.body.intro_id}/approve`, { headers: bearer(o.access_token) });
    expect(stranger.status).to.equal(404);
    const ok = await svc.req('POST', `/api/svc/intros/${req.body.intro_id}/approve`, { headers: bearer(target.access_token) });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.match_id).to.match(/^mtc_/);
    expect((await svc.req('POST', `/api/svc/intros/${req.body.intro_id}/decline`, { headers: bearer(target.access_token) })).status).to.equal(409);
    const msg = await svc.req('POST', '/api/messages', {
      headers: bearer(o.access_token),
      body: { match_id: ok.body.match_id, content: 'Thanks for accepting!' },
    });
    expect(msg.status, msg.text).to.equal(200);
    const inbox = await svc.req('GET', `/api/protocol/agents/${o.agent_id}/matches`, { apiKey: o.api_key });
    expect(inbox.body.events.map((e: { payload: { match_id?: string } }) => e.payload.match_id)).to.include(ok.body.match_id);
  });

  it('declines an intro; an intro expires after 14 days (injected clock)', async () => {
    const o = await owner();
    const a = await member({ headline: 'A' });
    const b = await member({ headline: 'B' });
    const ra = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: a.user_id, reason: 'Hi A' } });
    const rb = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: b.user_id, reason: 'Hi B' } });
    expect((await svc.req('POST', `/api/svc/intros/${ra.body.intro_id}/decline`, { headers: bearer(a.access_token) })).body.status).to.equal('declined');
    svc.clock.advance(14 * DAY);
    // Access tokens live 15 minutes: sign in again on the later day.
    const login = await svc.req('POST', '/api/auth/login', { body: { email: b.email, password: b.password } });
    expect(login.status, login.text).to.equal(200);
    const token = login.body.access_token as string;
    expect((await svc.req('GET', '/api/svc/intros', { headers: bearer(token) })).body.intros).to.deep.equal([]);
    const late = await svc.req('POST', `/api/svc/intros/${rb.body.intro_id}/approve`, { headers: bearer(token) });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('intro_expired');
  });

  it('lists builders (discoverable members with a claimed agent) by capability, with the detail card, agents and average trust', async () => {
    const o = await owner(['rare-builder-cap']);
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(o.access_token), body: { industry: 'energy' } });
    const list = await svc.req('GET', '/api/protocol/builders?capability=rare-builder-cap');
    expect(list.status).to.equal(200);
    expect(list.body.builders.map((b: { user_id: string }) => b.user_id)).to.deep.equal([o.user_id]);
    expect((await svc.req('GET', '/api/protocol/builders?industry=energy')).body.builders.map((b: { user_id: string }) => b.user_id)).to.include(o.user_id);
    const detail = await svc.req('GET', `/api/protocol/builders/${o.user_id}`);
    expect(detail.body.agents.map((a: { agent_id: string }) => a.agent_id)).to.deep.equal([o.agent_id]);
    expect(detail.body.average_trust).to.equal(0);
    noEmail(list.text + detail.text);
    await svc.req('PATCH', '/api/auth/me', { headers: bearer(o.access_token), body: { discoverable: false } });
    expect((await svc.req('GET', '/api/protocol/builders?capability=rare-builder-cap')).body.builders).to.deep.equal([]);
    expect((await svc.req('GET', `/api/protocol/builders/${o.user_id}`)).status).to.equal(404);
    expect((await svc.req('GET', '/api/protocol/builders?cursor=bad!')).status).to.equal(400);
  });
  it('execute-action runs the social actions through the same routes (stamps, bonds, following, members, intros, pulse)', async () => {
    const o = await owner(['intent-scout']);
    const other = await owner();
    const act = (who: { access_token: string }, body: Record<string, unknown>) =>
      svc.req('POST', '/api/agent/chat/execute-action', { headers: bearer(who.access_token), body });
    const stamp = await act(o, { action_type: 'endorse_agent', target_id: other.agent_id, capability: 'lead-gen' });
    expect(stamp.status, stamp.text).to.equal(200);
    expect(stamp.body.result).to.include({ capability: 'lead-gen', counted: true });
    expect((await act(o, { action_type: 'endorse_agent', target_id: o.agent_id, capability: 'lead-gen' })).status).to.equal(400);
    const view = await act(o, { action_type: 'view_trust_stamps', target_id: other.agent_id });
    expect(view.body.result.capabilities[0]).to.include({ capability: 'lead-gen', count: 1 });
    expect((await act(o, { action_type: 'send_bond_request', target_id: other.agent_id })).body.result.status).to.equal('outgoing');
    expect((await act(other, { action_type: 'accept_bond_request', target_id: o.agent_id })).body.result.status).to.equal('active');
    await svc.req('POST', `/api/protocol/agents/${other.agent_id}/follow`, { apiKey: o.api_key });
    const following = await act(o, { action_type: 'list_following' });
    expect(following.body.result.items.map((i: { agent_id: string }) => i.agent_id)).to.deep.equal([other.agent_id]);
    const intent = await act(other, { action_type: 'search_agents_intent', query: 'need an intent scout' });
    expect(intent.body.result.items.map((i: { agent_id: string }) => i.agent_id)).to.include(o.agent_id);
    const target = await member({ headline: 'Quillon browser' });
    const browse = await act(o, { action_type: 'browse_members', query: 'quillon' });
    expect(browse.body.result.members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([target.user_id]);
    noEmail(browse.text);
    const intro = await svc.req('POST', '/api/agent/intros', { apiKey: o.api_key, body: { member_id: other.user_id, reason: 'Meet my owner' } });
    const pending = await act(other, { action_type: 'get_pending_intros' });
    expect(pending.body.result.intros.map((i: { intro_id: string }) => i.intro_id)).to.deep.equal([intro.body.intro_id]);
    const approved = await act(other, { action_type: 'approve_intro', intro_id: intro.body.intro_id });
    expect(approved.status, approved.text).to.equal(200);
    expect(approved.body.result.match_id).to.match(/^mtc_/);
    const pulse = await act(o, { action_type: 'check_agent_pulse', days: 7 });
    expect(pulse.body.result).to.include({ days: 7 });
  });
});
