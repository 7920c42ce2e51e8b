import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: POST /api/admin/agents/{agent_id}/ban (a super admin bans an agent)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let admin: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'banhammer@example.com' }));
    await signUp(svc, outbox, 'banhammer@example.com', 'admin password 1');
  });
  // A fresh token per test: the first one moves the clock past an access token's life.
  beforeEach(async () => {
    const login = await svc.req('POST', '/api/auth/login', { body: { email: 'banhammer@example.com', password: 'admin password 1' } });
    expect(login.status, login.text).to.equal(200);
    admin = login.body.access_token as string;
  });
  after(() => stopWithOutbox(svc, outbox));

  it('revokes the key at once, hides the profile and posts, keeps the owner e-mail taken, and refuses a second ban', async () => {
    const email = `spammer.${process.pid}@example.com`;
    const agent = await svc.register({ owner_email: email });
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: agent.api_key,
      body: { title: 'Buy now', body: 'Cheap leads #spam', post_type: 'signal_found' },
    });
    expect(post.status, post.text).to.equal(200);

    const res = await svc.req('POST', `/api/admin/agents/${agent.agent_id}/ban`, { headers: bearer(admin), body: { reason: '  Spam in every room ' } });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ agent_id: agent.agent_id, banned: true, reason: 'Spam in every room', banned_at: svc.clock.now().toISOString() });

    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agent.api_key })).status).to.equal(401);
    expect((await svc.req('GET', `/api/protocol/agents/${agent.agent_id}`)).status).to.equal(404);
    expect((await svc.req('GET', `/api/feed/posts/${post.body.post_id}`)).status).to.equal(404);
    const feed = await svc.req('GET', '/api/feed/posts?limit=100');
    expect(feed.body.items.map((p: { post_id: string }) => p.post_id)).to.not.include(post.body.post_id);

    const second = await svc.req('POST', `/api/admin/agents/${agent.agent_id}/ban`, { headers: bearer(admin), body: { reason: 'Again' } });
    expect(second.status).to.equal(410);
    expect(second.body.code).to.equal('agent_banned');

    // Unlike a deactivation, the owner e-mail is never released: not even 31 days later.
    svc.clock.advance(31 * 24 * 3600_000);
    const again = await svc.req('POST', '/api/protocol/register', {
      body: { name: 'Back Again', capabilities: ['lead-gen'], owner_name: 'S', owner_email: email },
    });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('owner_email_taken');
  });

  it('unlinks the agent from its owner account', async () => {
    const { user, agent } = await signUpWithAgent(svc, outbox);
    const before = await svc.req('GET', '/api/auth/me', { headers: bearer(user.access_token) });
    expect(JSON.stringify(before.body)).to.include(agent.agent_id);
    const res = await svc.req('POST', `/api/admin/agents/${agent.agent_id}/ban`, { headers: bearer(admin), body: { reason: 'Abuse' } });
    expect(res.status, res.text).to.equal(200);
    const after = await svc.req('GET', '/api/auth/me', { headers: bearer(user.access_token) });
    expect(JSON.stringify(after.body)).to.not.include(agent.agent_id);
  });

  it('refuses callers who are not super admins (401, 403), a missing or blank reason (422) and an unknown agent (404)', async () => {
    const target = await svc.register();
    const path = `/api/admin/agents/${target.agent_id}/ban`;
    const anonymous = await svc.req('POST', path, { body: { reason: 'x' } });
    expect(anonymous.status).to.equal(401);
    const byKey = await svc.req('POST', path, { apiKey: target.api_key, body: { reason: 'x' } });
    expect(byKey.status).to.equal(401);
    const member = await signUp(svc, outbox);
    const forbidden = await svc.req('POST', path, { headers: bearer(member.access_token), body: { reason: 'x' } });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.code).to.equal('admin_required');
    for (const body of [{}, { reason: '   ' }, { reason: 'x'.repeat(501) }, { reason: 'ok', extra: 1 }]) {
      const bad = await svc.req('POST', path, { headers: bearer(admin), body });
      expect(bad.status, JSON.stringify(body)).to.equal(422);
      expect(bad.body.code).to.equal('validation_failed');
    }
    const unknown = await svc.req('POST', '/api/admin/agents/agt_unknown00000000000000/ban', { headers: bearer(admin), body: { reason: 'x' } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('agent_not_found');
    // Nothing of it was written: the agent still works.
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: target.api_key })).status).to.equal(200);
  });
});
