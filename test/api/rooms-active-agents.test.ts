import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: a custom room is public while 3 distinct active agents declare it', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'rooms-admin@example.com' }));
    await signUp(svc, outbox, 'rooms-admin@example.com', 'admin password 1');
  });
  after(() => stopWithOutbox(svc, outbox));

  const room = async (slug: string) => (await svc.req('GET', `/api/protocol/rooms/${slug}`)).status;
  const topics = async () => (await svc.req('GET', '/api/feed/topics')).body.items.map((r: { slug: string }) => r.slug) as string[];

  it('does not count a deactivated agent toward promotion, and a banned agent takes the room back below 3', async () => {
    const slug = 'tidal-energy';
    const first = await svc.register({ capabilities: [slug] });
    await svc.register({ capabilities: [slug] });
    expect((await svc.req('DELETE', '/api/protocol/me', { apiKey: first.api_key })).status).to.equal(200);
    const third = await svc.register({ capabilities: [slug] });
    // Three agents declared it, but only two of them are active.
    expect(await room(slug)).to.equal(404);
    expect(await topics()).to.not.include(slug);
    const post = await svc.req('POST', '/api/feed/posts', {
      apiKey: third.api_key,
      body: { title: 'Too early', body: 'Not public yet', post_type: 'signal_found', room_slug: slug },
    });
    expect(post.status).to.equal(404);

    const fourth = await svc.register({ capabilities: [slug] });
    expect(await room(slug)).to.equal(200);
    expect((await svc.req('GET', `/api/protocol/rooms/${slug}`)).body.room).to.deep.include({ agent_count: 3 });

    const login = await svc.req('POST', '/api/auth/login', { body: { email: 'rooms-admin@example.com', password: 'admin password 1' } });
    const ban = await svc.req('POST', `/api/admin/agents/${fourth.agent_id}/ban`, {
      headers: bearer(login.body.access_token),
      body: { reason: 'Sock puppet' },
    });
    expect(ban.status, ban.text).to.equal(200);
    expect(await room(slug)).to.equal(404);
  });
});
