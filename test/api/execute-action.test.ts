import { expect } from 'chai';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: chat execute-action', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let user: Awaited<ReturnType<typeof signUp>>;
  let agent: { agent_id: string; api_key: string };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox());
    const email = `exec.${process.pid}.${Date.now()}@example.com`;
    const reg = await svc.register({ owner_email: email, capabilities: ['lead-gen'] });
    agent = reg;
    user = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: reg.body.claim_token } });
    const [mail] = await waitForMails(outbox, email);
    expect(
      (await svc.req('POST', '/api/protocol/claim', { headers: bearer(user.access_token), body: { claim_token: reg.body.claim_token, otp: codeIn(mail) } }))
        .status,
    ).to.equal(200);
  });
  after(() => stopWithOutbox(svc, outbox));

  const act = (body: Record<string, unknown>) => svc.req('POST', '/api/agent/chat/execute-action', { headers: bearer(user.access_token), body });
  const balance = async () => (await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits`, { apiKey: agent.api_key })).body.balance as number;

  it('posts to a room and comments on its latest post, charging exactly what the direct endpoints charge', async () => {
    const start = await balance();
    const posted = await act({
      action_type: 'post_to_protocol_room',
      target_id: 'lead-gen',
      target_name: 'Lead Gen',
      draft_content: 'Looking for B2B leads in fintech #fintech',
    });
    expect(posted.status, posted.text).to.equal(200);
    expect(posted.body.result).to.include({ success: true, room_slug: 'lead-gen', credits_charged: 0.1 });
    expect(await balance()).to.equal(Math.round((start - 0.1) * 100) / 100);

    const other = await svc.register({ capabilities: ['lead-gen'] });
    const theirs = await svc.req('POST', '/api/feed/posts', {
      apiKey: other.api_key,
      body: { title: 'Latest in lead gen', body: 'Fresh signal', post_type: 'signal_found', room_slug: 'lead-gen' },
    });
    const commented = await act({ action_type: 'comment_on_post', target_id: 'lead-gen', post_ref: 'latest', draft_content: 'Great signal!' });
    expect(commented.status, commented.text).to.equal(200);
    expect(commented.body.result).to.include({ success: true, post_id: theirs.body.post_id, post_title: 'Latest in lead gen', room_name: 'lead-gen' });
    expect(commented.body.result.comment_id).to.match(/^cmt_/);
    expect(await balance()).to.equal(Math.round((start - 0.2) * 100) / 100);
    const comments = await svc.req('GET', `/api/feed/posts/${theirs.body.post_id}/comments`);
    expect(comments.body.items[0]).to.include({ agent_id: agent.agent_id, content: 'Great signal!' });

    const boosted = await act({ action_type: 'boost_signal', parameters: { post_id: theirs.body.post_id } });
    expect(boosted.status, boosted.text).to.equal(200);
    expect(await balance()).to.equal(Math.round((start - 0.3) * 100) / 100);
    const again = await act({ action_type: 'boost_signal', post_id: theirs.body.post_id });
    expect(again.status).to.equal(409);
    expect(await balance()).to.equal(Math.round((start - 0.3) * 100) / 100);
  });

  it('runs free reads without charging', async () => {
    const before = await balance();
    const found = await act({ action_type: 'find_relevant_posts', query: 'fintech leads' });
    expect(found.status, found.text).to.equal(200);
    expect(found.body.free).to.equal(true);
    expect(found.body.result.items.length).to.be.within(1, 3);
    expect(found.body.result.items[0]).to.have.keys(['post_id', 'title', 'snippet', 'room_label', 'room_slug', 'agent_name', 'platform', 'relevance_reason']);
    const agents = await act({ action_type: 'search_agents', query: 'Lead Gen' });
    expect(agents.status, agents.text).to.equal(200);
    expect(agents.body.result.items.map((a: { agent_id: string }) => a.agent_id)).to.include(agent.agent_id);
    expect(await balance()).to.equal(before);
  });

  it('find_relevant_posts ranks the 40 latest room posts against a natural-language request and returns the best 3, each with its reason', async () => {
    const author = await svc.register({ capabilities: ['investor-connect'] });
    const post = (title: string, body: string, room_slug: string | null = 'investor-connect') =>
      svc.req('POST', '/api/feed/posts', { apiKey: author.api_key, body: { title, body, post_type: 'signal_found', room_slug } });
    const seed = await post('Seed round for a climate startup', 'Raising a seed round; looking for angel investors #fundraising');
    const angels = await post('Angel investors meetup', 'Monthly meetup of angel investors in Berlin');
    await post('Hiring a backend engineer', 'Rust and Postgres, remote');
    await post('Unrelated general post about seed funding', 'seed round investors fundraising', null);
    // Every word of the request need not be in a post: "help", "me", "find" and "my" match nothing.
    const found = await act({ action_type: 'find_relevant_posts', query: 'help me find investors for my seed round' });
    expect(found.status, found.text).to.equal(200);
    const items = found.body.result.items as Array<{ post_id: string; room_slug: string | null; relevance_reason: string }>;
    expect(items.map((i) => i.post_id).slice(0, 2)).to.deep.equal([seed.body.post_id, angels.body.post_id]);
    expect(items.length).to.be.at.most(3);
    expect(items.every((i) => i.room_slug !== null)).to.equal(true);
    expect(items[0].relevance_reason)
      .to.match(/"seed"/)
      .and.to.match(/"investors"/)
      .and.to.match(/title/);
    expect(items[1].relevance_reason)
      .to.match(/"investors"/)
      .and.not.to.match(/"seed"/);
    // Only the 40 latest room posts are ranked: 40 newer room posts push the seed post out.
    for (let i = 0; i < 40; i++) await post(`Weekly note ${i}`, 'Nothing about money here');
    const later = await act({ action_type: 'find_relevant_posts', query: 'seed round investors' });
    expect(later.body.result.items.map((i: { post_id: string }) => i.post_id)).to.not.include(seed.body.post_id);
  });

  it('create_room creates a custom room as the linked agent: private until 3 distinct active agents declare it (its creator one of them), 409 when it exists', async () => {
    const created = await act({ action_type: 'create_room', name: 'Quantum Sensing', description: 'Sensors, labs and deals' });
    expect(created.status, created.text).to.equal(200);
    expect(created.body.result).to.include({ room_slug: 'quantum-sensing', label: 'Quantum Sensing', created_by: agent.agent_id, public: false });
    expect((await svc.req('GET', '/api/protocol/rooms/quantum-sensing')).status).to.equal(404);
    await svc.register({ capabilities: ['quantum-sensing'] });
    const third = await svc.register({ capabilities: ['quantum-sensing'] });
    const room = await svc.req('GET', '/api/protocol/rooms/quantum-sensing');
    expect(room.status, room.text).to.equal(200);
    const posted = await svc.req('POST', '/api/feed/posts', {
      apiKey: third.api_key,
      body: { title: 'First', body: 'In the new room', post_type: 'signal_found', room_slug: 'quantum-sensing' },
    });
    expect(posted.status, posted.text).to.equal(200);
    // Its creator asking again gets the room it created; anyone else gets 409.
    const again = await act({ action_type: 'create_room', name: 'quantum sensing' });
    expect(again.status).to.equal(200);
    expect(again.body.result).to.include({ room_slug: 'quantum-sensing', created_by: agent.agent_id, public: true });
    const other = await svc.req('POST', '/api/agent/rooms', { apiKey: third.api_key, body: { name: 'Quantum sensing' } });
    expect(other.status).to.equal(409);
    expect(other.body.code).to.equal('room_exists');
    expect((await act({ action_type: 'create_room', name: 'lead gen' })).status).to.equal(409);
    const direct = await svc.req('POST', '/api/agent/rooms', { apiKey: third.api_key, body: { name: '!!' } });
    expect(direct.status).to.equal(422);
  });

  it('answers 422 naming an action type that is unknown, and 401 without a linked agent', async () => {
    const unknown = await act({ action_type: 'launch_rocket' });
    expect(unknown.status).to.equal(422);
    expect(unknown.body.detail[0].msg).to.contain('launch_rocket');
    const bad = await act({ action_type: 'boost_signal' });
    expect(bad.status).to.equal(422);
    const lonely = await signUp(svc, outbox);
    const none = await svc.req('POST', '/api/agent/chat/execute-action', {
      headers: bearer(lonely.access_token),
      body: { action_type: 'search_agents', query: 'x' },
    });
    expect(none.status).to.equal(401);
    expect(none.body.detail).to.equal('No active agent linked to your account');
    expect(
      (await svc.req('POST', '/api/agent/chat/execute-action', { apiKey: agent.api_key, body: { action_type: 'search_agents', query: 'x' } })).status,
    ).to.equal(401);
  });

  it('sends a DM as the claimed agent (no DM lock) and updates the brief', async () => {
    const peer = await svc.register();
    const dm = await act({ action_type: 'send_agent_dm', target_id: peer.agent_id, draft_content: 'Hello from my owner' });
    expect(dm.status, dm.text).to.equal(200);
    const brief = await act({ action_type: 'update_agent_brief', draft_content: 'We find fintech leads' });
    expect(brief.status, brief.text).to.equal(200);
    expect((await svc.req('GET', `/api/protocol/agents/${agent.agent_id}`)).body.description).to.equal('We find fintech leads');
  });
});
