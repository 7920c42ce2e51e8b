import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp, signUpWithAgent } from '../helpers/users.ts';
import { WebSession } from '../helpers/web.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

// The conversation pages over HTTP: who may see and do what, and GET /api/matches, the list the
// matches page shows.
describe('web: the conversation pages and GET /api/matches', function () {
  this.timeout(120_000);
  let svc: TestService;
  let outbox: string;
  let a: Awaited<ReturnType<typeof signUp>>;
  let b: Awaited<ReturnType<typeof signUp>>;
  let stranger: Awaited<ReturnType<typeof signUpWithAgent>>;
  let admin: Awaited<ReturnType<typeof signUp>>;
  let matchId: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'conversations-admin@example.com' }));
    admin = await signUp(svc, outbox, 'conversations-admin@example.com');
    a = await signUp(svc, outbox);
    b = await signUp(svc, outbox);
    stranger = await signUpWithAgent(svc, outbox);
    const m = await svc.req('POST', '/api/admin/matches', {
      headers: bearer(admin.access_token),
      body: { user_a_id: a.user_id, user_b_id: b.user_id, reason: 'Both <i>ops</i>' },
    });
    expect(m.status, m.text).to.equal(200);
    matchId = m.body.match_id;
  });
  after(() => stopWithOutbox(svc, outbox));

  it('lists a member’s matches with the other member and the unread count', async () => {
    const sent = await svc.req('POST', '/api/messages', { headers: bearer(b.access_token), body: { match_id: matchId, content: 'Hi A' } });
    expect(sent.status, sent.text).to.equal(200);
    const list = await svc.req('GET', '/api/matches', { headers: bearer(a.access_token) });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.count).to.equal(1);
    expect(list.body.matches[0]).to.deep.include({ match_id: matchId, reason: 'Both <i>ops</i>', message_count: 1, unread_count: 1 });
    expect(list.body.matches[0].other_member).to.deep.equal({ user_id: b.user_id, full_name: 'Ada Lovelace' });
    const none = await svc.req('GET', '/api/matches', { headers: bearer(stranger.user.access_token) });
    expect(none.body).to.deep.equal({ matches: [], count: 0 });
    expect((await svc.req('GET', '/api/matches')).status).to.equal(401);
  });

  it('sends a signed-out browser to sign in, and back', async () => {
    const web = new WebSession(svc);
    for (const path of ['/app/inbox', '/app/matches', `/app/matches/${matchId}`]) {
      const res = await web.get(path);
      expect(res.status, path).to.equal(302);
      expect(res.headers.location).to.equal(`/signin?next=${encodeURIComponent(path)}`);
    }
  });

  it('refuses a form without its page token (403 csrf_failed) and writes nothing', async () => {
    const web = new WebSession(svc);
    await web.signIn(a.email, a.password);
    const res = await web.post(`/app/matches/${matchId}/messages`, { _csrf: 'forged', content: 'Not me' });
    expect(res.status).to.equal(403);
    expect(res.text).to.include('This form has expired');
    const read = await svc.req('GET', `/api/messages/${matchId}`, { headers: bearer(b.access_token) });
    expect(read.body.map((m: { content: string }) => m.content)).to.deep.equal(['Hi A']);
  });

  it('keeps another member’s match and introductions out of reach', async () => {
    const web = new WebSession(svc);
    await web.signIn(stranger.user.email, stranger.user.password);
    const page = await web.get(`/app/matches/${matchId}`);
    expect(page.status).to.equal(403);
    expect(page.text).to.include('Only the two members of a match');
    const post = await web.post(`/app/matches/${matchId}/messages`, { content: 'Intruding' });
    expect(post.status).to.equal(403);
    const intro = await web.post('/app/introductions/int_nothere000000000000/approve');
    expect(intro.status).to.equal(404);
  });

  it('escapes what members wrote, and shows the match to its members', async () => {
    const web = new WebSession(svc);
    await web.signIn(a.email, a.password);
    const sent = await web.post(`/app/matches/${matchId}/messages`, { content: '<img src=x onerror=alert(1)>' });
    expect(sent.status, sent.text).to.equal(303);
    const page = await web.get(`/app/matches/${matchId}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('&lt;img src=x onerror=alert(1)&gt;').and.not.include('<img src=x');
    expect(page.text).to.include('Both &lt;i&gt;ops&lt;/i&gt;');
    expect(page.text).to.include('Message sent.');
  });
});
