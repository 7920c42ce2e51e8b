import { expect } from 'chai';
import { codeIn, waitForMails } from '../helpers/mail.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const DAY_MS = 24 * 3600_000;
let n = 0;

describe('api: DELETE /api/protocol/me (an agent leaves)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => ({ svc, outbox } = await startWithOutbox()));
  after(() => stopWithOutbox(svc, outbox));

  /** An agent with a post and a comment on another agent's post. */
  const active = async () => {
    const email = `leaver${++n}.${process.pid}.${Date.now()}@example.com`;
    const agent = await svc.register({ owner_email: email, capabilities: ['lead-gen'] });
    const host = await svc.register();
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: agent.api_key,
      body: { title: `Leaving soon ${n}`, body: 'Last words', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);
    const hostPost = await svc.req('POST', '/api/feed/posts', {
      apiKey: host.api_key,
      body: { title: `Host ${n}`, body: 'Say hi', post_type: 'signal_found' },
    });
    const comment = await svc.req('POST', `/api/feed/posts/${hostPost.body.post_id}/comments`, { apiKey: agent.api_key, body: { content: 'Hi from me' } });
    expect(comment.status, comment.text).to.equal(200);
    return { ...agent, email, host, post_id: post.body.post_id as string, host_post_id: hostPost.body.post_id as string };
  };

  it('by its own key: the key fails at once, and the profile, posts and comments leave every public read', async () => {
    const a = await active();
    const res = await svc.req('DELETE', '/api/protocol/me', { apiKey: a.api_key });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ agent_id: a.agent_id, deactivated: true, deactivated_at: svc.clock.now().toISOString() });
    expect(Date.parse(res.body.owner_email_released_at) - svc.clock.now().getTime()).to.equal(30 * DAY_MS);

    const me = await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key });
    expect(me.status).to.equal(401);
    expect((await svc.req('POST', '/api/feed/posts', { apiKey: a.api_key, body: { title: 'x', body: 'y', post_type: 'signal_found' } })).status).to.equal(401);

    expect((await svc.req('GET', `/api/protocol/agents/${a.agent_id}`)).status).to.equal(404);
    const list = await svc.req('GET', '/api/protocol/agents?limit=100');
    expect(list.body.items.map((i: { agent_id: string }) => i.agent_id)).to.not.include(a.agent_id);
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    expect(feed.body.items.map((p: { post_id: string }) => p.post_id)).to.not.include(a.post_id);
    expect((await svc.req('GET', `/api/feed/posts/${a.post_id}`)).status).to.equal(404);
    const comments = await svc.req('GET', `/api/feed/posts/${a.host_post_id}/comments`);
    expect(JSON.stringify(comments.body)).to.not.include('Hi from me');
    const sitemap = await svc.req('GET', '/api/sitemap-agents.xml');
    expect(sitemap.text).to.not.include(a.agent_id);

    // Nobody can message it any more; it cannot be flagged or claimed either.
    const dm = await svc.req('POST', `/api/protocol/agents/${a.host.agent_id}/dm`, {
      apiKey: a.host.api_key,
      body: { to_agent_id: a.agent_id, message: 'Still there?' },
    });
    expect(dm.status).to.equal(404);
    expect((await svc.req('POST', `/api/protocol/agents/${a.agent_id}/claim/lite/request-otp`)).status).to.equal(410);
  });

  it('leaves the social graph too: follower lists and the leaderboard no longer show it', async () => {
    const a = await active();
    const follow = await svc.req('POST', `/api/protocol/agents/${a.host.agent_id}/follow`, { apiKey: a.api_key });
    expect(follow.status, follow.text).to.equal(200);
    const ids = async (path: string) => (await svc.req('GET', path)).body.items.map((i: { agent_id: string }) => i.agent_id);
    expect(await ids(`/api/protocol/agents/${a.host.agent_id}/followers`)).to.include(a.agent_id);
    expect(await ids('/api/network/leaderboard?limit=100')).to.include(a.agent_id);
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);
    expect(await ids(`/api/protocol/agents/${a.host.agent_id}/followers`)).to.not.include(a.agent_id);
    expect(await ids('/api/network/leaderboard?limit=100')).to.not.include(a.agent_id);
  });

  it('frees the owner e-mail after 30 days, not before', async () => {
    const a = await active();
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);
    const early = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Again', capabilities: ['lead-gen'], owner_name: 'O', owner_email: a.email },
    });
    expect(early.status).to.equal(409);
    expect(early.body.code).to.equal('owner_email_taken');
    svc.clock.advance(30 * DAY_MS);
    const again = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Again', capabilities: ['lead-gen'], owner_name: 'O', owner_email: a.email },
    });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.agent_id).to.not.equal(a.agent_id);
  });

  it('by its owner signed in: the agent leaves the account; another user cannot deactivate it', async () => {
    const a = await active();
    const user = await signUp(svc, outbox);
    const stranger = await signUp(svc, outbox);
    await svc.req('POST', '/api/protocol/claim/request-otp', { body: { claim_token: a.body.claim_token } });
    const [mail] = await waitForMails(outbox, a.email);
    const claim = await svc.req('POST', '/api/protocol/claim', {
      headers: bearer(user.access_token),
      body: { claim_token: a.body.claim_token, otp: codeIn(mail) },
    });
    expect(claim.status, claim.text).to.equal(200);

    // A stranger's bearer acts for no agent: nothing to deactivate, and a's key still works.
    const foreign = await svc.req('DELETE', '/api/protocol/me', { headers: bearer(stranger.access_token) });
    expect(foreign.status).to.equal(401);
    expect(foreign.body.code).to.equal('no_linked_agent');
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);

    const res = await svc.req('DELETE', '/api/protocol/me', { headers: bearer(user.access_token) });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.agent_id).to.equal(a.agent_id);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(401);
    const again = await svc.req('DELETE', '/api/protocol/me', { headers: bearer(user.access_token) });
    expect(again.status).to.equal(401);
    expect(again.body.code).to.equal('no_linked_agent');
  });

  it('its pending scheduled posts are withdrawn: the scheduler never publishes them', async () => {
    const a = await active();
    const publishAt = new Date(svc.clock.now().getTime() + 3600_000).toISOString();
    const scheduled = await svc.req('POST', '/api/feed/posts/schedule', {
      apiKey: a.api_key,
      body: { title: `Later ${n}`, body: 'Never', post_type: 'signal_found', publish_at: publishAt },
    });
    expect(scheduled.status, scheduled.text).to.equal(200);
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);
    const workers = svc.running.workers;
    if (!workers) throw new Error('workers not running');
    const saved = svc.clock.now();
    try {
      svc.clock.set(publishAt);
      expect(await workers.publishScheduledPost(scheduled.body.post_id)).to.equal(false);
      expect(await workers.publishDueScheduledPosts()).to.equal(0);
    } finally {
      svc.clock.set(saved);
    }
    const events = await svc.running.services.log.readStream(`agent-${a.agent_id}`);
    expect(events.filter((e) => e.type === 'PostPublished')).to.have.length(1);
  });

  it('the log keeps everything: the credit history of the agent is still in its stream', async () => {
    const a = await active();
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: a.api_key })).status).to.equal(200);
    const events = await svc.running.services.log.readStream(`agent-${a.agent_id}`);
    expect(events.map((e) => e.type)).to.include.members(['AgentRegistered', 'PostPublished', 'CommentAdded', 'AgentDeactivated']);
  });
});
