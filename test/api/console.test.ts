import { expect } from 'chai';
import { consoleOperations } from '../../api/routes/console/console.ts';
import { ConsoleClient } from '../helpers/console.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import { defined } from '../helpers/defined.ts';
import { startReceiver, until } from '../helpers/webhook-receiver.ts';

const ADMIN = 'console-admin@example.com';
const PASSWORD = 'console password 1';

describe('api: the admin console (/admin, server-rendered, cookie session, CSRF)', function () {
  this.timeout(300_000);
  let svc: TestService;
  let outbox: string;
  let member: { email: string; password: string; access_token: string };

  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: ADMIN, WEBHOOK_ALLOW_LOOPBACK: '1' }));
    await signUp(svc, outbox, ADMIN, PASSWORD);
    member = await signUp(svc, outbox);
  });
  after(() => stopWithOutbox(svc, outbox));

  it('signs a super admin in with a cookie that scripts and other sites cannot use, and signs out', async () => {
    const browser = new ConsoleClient(svc);
    const signedIn = await browser.signIn(ADMIN, PASSWORD);
    expect(signedIn.status).to.equal(303);
    expect(signedIn.headers.location).to.equal('/admin/agents');
    const cookies = (signedIn.headers['set-cookie'] ?? []).filter((c) => c.startsWith('an_admin='));
    expect(cookies).to.have.length(1);
    expect(cookies[0])
      .to.match(/; path=\/admin/)
      .and.to.match(/; samesite=strict/i)
      .and.to.match(/; httponly/i);
    const agents = await browser.get('/admin/agents');
    expect(agents.status).to.equal(200);
    expect(agents.headers['content-type']).to.match(/^text\/html/);
    expect(agents.headers['x-frame-options']).to.equal('DENY');
    expect(agents.text).to.include('Most recent registrations');
    expect(agents.text).to.not.include('undefined');

    const out = await browser.post('/admin/logout', {}, ConsoleClient.csrfIn(agents));
    expect(out.status).to.equal(303);
    const after = await browser.get('/admin/agents');
    expect(after.status).to.equal(302);
    expect(after.headers.location).to.equal('/admin/login');
  });

  it('refuses a wrong password (401) and a member who is not a super admin (403), setting no session', async () => {
    const browser = new ConsoleClient(svc);
    const wrong = await browser.signIn(ADMIN, 'not the password');
    expect(wrong.status).to.equal(401);
    expect(wrong.text).to.include('Wrong e-mail or password');
    const notAdmin = await browser.signIn(member.email, member.password);
    expect(notAdmin.status).to.equal(403);
    expect([...browser.cookies.keys()]).to.not.include('an_admin');
  });

  it('answers 403 to a plain member on every console page and action of the route table, and 302 to the sign-in page without a session', async () => {
    const target = await svc.register();
    const params: Record<string, string> = { agent_id: target.agent_id, slug: 'lead-gen', contract_id: 'ctr_x', name: 'agents', kind: 'post', id: 'pst_x' };
    const concrete = (path: string) => path.replace(/:([a-z_]+)/g, (_, name: string) => defined(params[name], `a value for :${name} in ${path}`));
    // Every operation of the console that needs a super admin (all but the sign-in page and form).
    const guarded = Object.values(consoleOperations).filter((op) => op.auth !== 'none');
    expect(guarded.map((op) => `${op.method} ${op.path}`)).to.include.members(['GET /admin/site', 'GET /admin/disputes/:contract_id/evidence.json']);
    expect(guarded.filter((op) => op.method === 'GET')).to.have.length.at.least(8);
    for (const op of guarded) {
      const path = concrete(op.path);
      const label = `${op.method} ${path}`;
      const auth = { authorization: `Bearer ${member.access_token}` };
      const res =
        op.method === 'GET'
          ? await svc.req('GET', path, { headers: auth })
          : await svc.req(op.method, path, {
              // A complete form for every action, so that only the role can refuse it.
              rawBody: 'reason=x&into=b2b-sales&outcome=refunded&note=x',
              headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
            });
      expect(res.status, label).to.equal(403);
      expect(res.text, label).to.include('admin_required');
      if (op.method === 'GET') {
        const anonymous = await svc.req('GET', path);
        expect(anonymous.status, label).to.equal(302);
        expect(anonymous.headers.location, label).to.equal('/admin/login');
      }
    }
    // Nothing was done on the member's behalf: the agent is not banned, the room not hidden.
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: target.api_key })).status).to.equal(200);
    expect((await svc.req('GET', '/api/feed/topics/lead-gen')).status).to.equal(200);
  });

  it('looks an agent up: profile, key status, balance, the 30-day spend chart and the credit history from the log; bans it by form', async () => {
    const agent = await svc.register({ name: 'Chart Subject' });
    for (let i = 0; i < 3; i++) {
      const post = await svc.req('POST', '/api/feed/posts', {
        apiKey: agent.api_key,
        body: { title: `Post ${i}`, body: `Body ${i}`, post_type: 'signal_found' },
      });
      expect(post.status, post.text).to.equal(200);
    }
    const browser = new ConsoleClient(svc);
    expect((await browser.signIn(ADMIN, PASSWORD)).status).to.equal(303);
    const lookup = await browser.get(`/admin/agents?q=${agent.agent_id}`);
    expect(lookup.status).to.equal(302);
    expect(lookup.headers.location).to.equal(`/admin/agents/${agent.agent_id}`);
    const page = await browser.get(`/admin/agents/${agent.agent_id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('Chart Subject');
    expect(page.text, 'every field of the page has a value').to.not.include('undefined');
    expect(page.text).to.include(`registered ${svc.clock.now().toISOString()}`);
    expect(page.text).to.include('of 50');
    expect(page.text).to.match(/data-testid="key-status">active</);
    expect([...page.text.matchAll(/<rect class="bar"/g)]).to.have.length(30);
    const today = svc.clock.now().toISOString().slice(0, 10);
    expect(page.text).to.match(new RegExp(`data-date="${today}" data-amount="0.3"`));
    // The history lists the log's transactions: the grant and three posts.
    const history = await svc.req('GET', `/api/protocol/agents/${agent.agent_id}/credits/history`, { apiKey: agent.api_key });
    const rows = page.text.slice(page.text.indexOf('data-testid="credit-history"')).match(/<tr><td>/g) ?? [];
    expect(rows).to.have.length(history.body.transactions.length);

    const noToken = await browser.post(`/admin/agents/${agent.agent_id}/ban`, { reason: 'no token' });
    expect(noToken.status).to.equal(403);
    expect(noToken.text).to.include('csrf_failed');
    const forged = await browser.post(`/admin/agents/${agent.agent_id}/ban`, { reason: 'forged' }, 'forged-token');
    expect(forged.status).to.equal(403);
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agent.api_key })).status, 'nothing was banned').to.equal(200);

    const banned = await browser.post(`/admin/agents/${agent.agent_id}/ban`, { reason: 'Spam, <script>alert(1)</script>' }, ConsoleClient.csrfIn(page));
    expect(banned.status).to.equal(303);
    const after = await browser.get(banned.headers.location as string);
    expect(after.text).to.include('Agent banned.');
    expect(after.text).to.match(/data-testid="status">banned</);
    expect(after.text).to.include('Spam, &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(after.text).to.not.include('<script>alert(1)');
    expect((await svc.req('GET', '/api/protocol/me', { apiKey: agent.api_key })).status).to.equal(401);
  });

  it('hides and merges rooms by form, with the rules of the CLI (a curated room is neither merged nor hidden; a hidden room can be shown again)', async () => {
    for (let i = 0; i < 3; i++) await svc.register({ capabilities: ['console-room-test', 'console-room-hide'] });
    const browser = new ConsoleClient(svc);
    await browser.signIn(ADMIN, PASSWORD);
    const rooms = await browser.get('/admin/rooms');
    expect(rooms.status).to.equal(200);
    expect(rooms.text).to.include('data-room="console-room-test"');
    const csrf = ConsoleClient.csrfIn(rooms);
    const refused = await browser.post('/admin/rooms/lead-gen/merge', { into: 'b2b-sales' }, csrf);
    expect(refused.status).to.equal(422);
    expect(refused.text).to.include('room_not_mergeable');
    const merged = await browser.post('/admin/rooms/console-room-test/merge', { into: 'b2b-sales' }, csrf);
    expect(merged.status).to.equal(303);
    expect((await svc.req('GET', '/api/protocol/rooms/console-room-test/posts')).body.room_slug).to.equal('b2b-sales');
    const curated = await browser.post('/admin/rooms/b2b-sales/hide', {}, csrf);
    expect(curated.status).to.equal(422);
    expect(curated.text).to.include('room_not_hideable');
    expect((await svc.req('GET', '/api/protocol/rooms/b2b-sales')).status).to.equal(200);
    const hidden = await browser.post('/admin/rooms/console-room-hide/hide', {}, csrf);
    expect(hidden.status).to.equal(303);
    expect((await svc.req('GET', '/api/protocol/rooms/console-room-hide')).status).to.equal(404);
    const listed = await browser.get('/admin/rooms');
    expect(listed.text).to.include('action="/admin/rooms/console-room-hide/unhide"');
    const shown = await browser.post('/admin/rooms/console-room-hide/unhide', {}, csrf);
    expect(shown.status).to.equal(303);
    expect((await svc.req('GET', '/api/protocol/rooms/console-room-hide')).status).to.equal(200);
  });

  /** A contract in dispute: listing, response, accepted by the provider, disputed by the requester. */
  const disputedContract = async () => {
    const requester = await svc.register();
    const provider = await svc.register();
    const listing = await svc.req('POST', '/api/agent/marketplace', {
      apiKey: requester.api_key,
      body: { title: 'Console dispute', description: 'Work to argue about', category: 'engineering', price: 100, pricing_type: 'fixed' },
    });
    expect(listing.status, listing.text).to.equal(201);
    const response = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/respond`, { apiKey: provider.api_key, body: { message: 'Mine' } });
    expect(response.status, response.text).to.be.oneOf([200, 201]);
    const contract = await svc.req('POST', `/api/agent/marketplace/${listing.body.intent_id}/responses/${response.body.response_id}/accept`, {
      apiKey: requester.api_key,
    });
    expect(contract.status, contract.text).to.equal(201);
    const id = contract.body.contract_id as string;
    expect((await svc.req('POST', `/api/agent/contracts/${id}/accept`, { apiKey: provider.api_key, body: {} })).status).to.equal(200);
    const dispute = await svc.req('POST', `/api/agent/contracts/${id}/dispute`, { apiKey: requester.api_key, body: { note: 'Nothing delivered' } });
    expect(dispute.status, dispute.text).to.equal(200);
    return id;
  };

  it('lists the dispute queue, shows a dispute with its audit trail from the log and its evidence, and resolves it with a signed ruling', async () => {
    const id = await disputedContract();
    const browser = new ConsoleClient(svc);
    await browser.signIn(ADMIN, PASSWORD);
    const queue = await browser.get('/admin/disputes');
    expect(queue.status).to.equal(200);
    expect(queue.text).to.include(`/admin/disputes/${id}`);
    const page = await browser.get(`/admin/disputes/${id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.not.include('undefined');
    const api = await svc.req('GET', `/api/admin/disputes/${id}`, { headers: { authorization: `Bearer ${(await signInApi()).access_token}` } });
    const positions = [...page.text.slice(page.text.indexOf('data-testid="audit-trail"')).matchAll(/<td>(\d+)<\/td><\/tr>/g)].map((m) => Number(m[1]));
    expect(positions).to.deep.equal(api.body.trail.map((t: { position: number }) => t.position));
    const evidence = await browser.get(`/admin/disputes/${id}/evidence.json`);
    expect(evidence.status).to.equal(200);
    expect(evidence.headers['content-disposition']).to.include(`evidence-${id}.json`);
    const bundle = JSON.parse(evidence.text) as { format: string; contract_id: string; chain: { links: string[] }; events: unknown[] };
    expect(bundle).to.include({ format: 'agent-network/evidence/v1', contract_id: id });
    expect(bundle.chain.links).to.have.length(bundle.events.length + 2);

    const bad = await browser.post(`/admin/disputes/${id}/resolve`, { outcome: 'nobody-wins', note: 'x' }, ConsoleClient.csrfIn(page));
    expect(bad.status).to.equal(422);
    const resolved = await browser.post(
      `/admin/disputes/${id}/resolve`,
      { outcome: 'refunded', note: 'The provider never started' },
      ConsoleClient.csrfIn(page),
    );
    expect(resolved.status).to.equal(303);
    const after = await browser.get(resolved.headers.location as string);
    expect(after.text).to.match(/data-testid="outcome">refunded</);
    expect(after.text).to.include('Dispute resolved: refunded.');
    expect(after.text).to.not.include('undefined');
    expect((await browser.get('/admin/disputes')).text).to.not.include(`/admin/disputes/${id}"`);
  });

  it('shows each projection with its lag and rebuilds one from the button', async () => {
    const browser = new ConsoleClient(svc);
    await browser.signIn(ADMIN, PASSWORD);
    const page = await browser.get('/admin/projections');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('data-projection="agents"');
    expect(page.text).to.not.include('undefined');
    const started = await browser.post('/admin/projections/api_keys/rebuild', {}, ConsoleClient.csrfIn(page));
    expect(started.status).to.equal(303);
    const deadline = Date.now() + 120_000;
    let cell = '';
    while (Date.now() < deadline) {
      const now = await browser.get('/admin/projections');
      cell = /data-testid="rebuild-api_keys">([\s\S]*?)<\/td>/.exec(now.text)?.[1] ?? '';
      if (!cell.includes('running')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(cell).to.include('swapped');
    expect(cell).to.include('checksums equal');
    const unknown = await browser.post('/admin/projections/no-such/rebuild', {}, ConsoleClient.csrfIn(page));
    expect(unknown.status).to.equal(404);
  });

  it("replays an agent's webhook deliveries by form (CSRF-checked): the original delivery id arrives again, freshly signed", async () => {
    const agent = (await svc.register({ name: 'Replay Subject' })) as { agent_id: string; api_key: string; body: { webhook_secret: string } };
    const receiver = await startReceiver({ secret: agent.body.webhook_secret, now: () => svc.clock.now().getTime() });
    try {
      const worker = defined(svc.running.workers, 'the workers').webhooks;
      const pump = <T>(fn: () => T | Promise<T>, what: string) =>
        until(async () => {
          await worker.drain();
          await worker.sweep();
          return fn();
        }, what);
      const browser = new ConsoleClient(svc);
      expect((await browser.signIn(ADMIN, PASSWORD)).status).to.equal(303);
      const before = await browser.get(`/admin/agents/${agent.agent_id}`);
      expect(before.text).to.include('data-testid="replay-unavailable"');
      expect(before.text).to.not.include('data-testid="replay-form"');

      const hook = await svc.req('PATCH', `/api/protocol/agents/${agent.agent_id}/webhook`, { apiKey: agent.api_key, body: { webhook_url: receiver.url } });
      expect(hook.status).to.equal(200);
      const from = svc.clock.now().toISOString();
      expect((await svc.req('POST', '/api/agent/webhooks/test-fire', { apiKey: agent.api_key })).status).to.equal(200);
      const original = await pump(() => receiver.received[0], 'the original delivery');
      const deliveryId = String(original.headers['x-svc-delivery']);

      const page = await browser.get(`/admin/agents/${agent.agent_id}`);
      expect(page.text).to.include('data-testid="replay-form"');
      expect(page.text).to.include('Replay webhooks');
      const path = `/admin/agents/${agent.agent_id}/webhooks/replay`;
      const noToken = await browser.post(path, { from_time: from });
      expect(noToken.status).to.equal(403);
      expect(noToken.text).to.include('csrf_failed');
      const csrf = ConsoleClient.csrfIn(page);
      const both = await browser.post(path, { from: '0', from_time: from }, csrf);
      expect(both.status).to.equal(422);
      expect(both.text).to.include('validation_failed');
      const replays = await svc.running.services.store.collection('webhook_replays').find({ agent_id: agent.agent_id });
      expect(replays, 'no replay recorded by the refused forms').to.have.length(0);

      svc.clock.advance(10 * 60_000);
      const done = await browser.post(path, { from_time: from, to_time: '', limit: '' }, csrf);
      expect(done.status, done.text).to.equal(303);
      const after = await browser.get(done.headers.location as string);
      expect(after.text).to.match(/Replay rpl_[0-9a-z]+ queued: 1 deliveries\./);
      const again = await pump(() => receiver.received[1], 'the replayed delivery');
      expect(again.headers['x-svc-delivery']).to.equal(deliveryId);
      expect(again.headers['x-svc-replay']).to.match(/^rpl_/);
      expect(again.verified, again.reason ?? '').to.equal(true);
      expect(again.headers['x-svc-timestamp']).to.equal(String(Math.floor(svc.clock.now().getTime() / 1000)));
    } finally {
      await receiver.close();
    }
  });

  it('shows partner leads and 30 days of page views', async () => {
    const lead = await svc.req('POST', '/api/partner-leads', {
      body: { name: 'Pat <Partner>', email: 'pat@partner.example', company: 'Acme', message: 'Hello' },
    });
    expect(lead.status, lead.text).to.equal(200);
    for (const path of ['/', '/', '/pricing']) {
      const view = await svc.req('POST', '/api/analytics/pageview', { body: { path, session_id: 'sess-console' } });
      expect(view.status, view.text).to.equal(202);
    }
    const browser = new ConsoleClient(svc);
    await browser.signIn(ADMIN, PASSWORD);
    const page = await browser.get('/admin/site');
    expect(page.status).to.equal(200);
    expect(page.text).to.not.include('undefined');
    expect(page.text).to.include('Pat &lt;Partner&gt;');
    expect(page.text).to.match(/data-testid="total-views">3</);
    expect([...page.text.matchAll(/<rect class="bar"/g)]).to.have.length(30);
    const today = svc.clock.now().toISOString().slice(0, 10);
    expect(page.text).to.include(`data-date="${today}" data-views="3"`);
  });

  const signInApi = async () => {
    const login = await svc.req('POST', '/api/auth/login', { body: { email: ADMIN, password: PASSWORD } });
    expect(login.status).to.equal(200);
    return login.body as { access_token: string };
  };
});
