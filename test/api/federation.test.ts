import { expect } from 'chai';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: federation (peer registration, review, portable agent directory)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'fedops@example.com', RATE_LIMIT_SCALE: '1' })));
  after(() => stopWithOutbox(svc, outbox));

  it('records a peer as pending, refuses a duplicate, lets a super admin approve or reject, and rate-limits registrations', async () => {
    const body = { name: 'Peer Net', base_url: 'https://peer.example.com/some/path', contact_email: 'Ops@Peer.example.com' };
    const r = await svc.req('POST', '/api/federation/register', { body });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ status: 'pending', base_url: 'https://peer.example.com' });
    expect(r.body.peer_id).to.match(/^fed_/);
    expect(r.body).to.not.have.property('contact_email');
    const dup = await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'https://PEER.example.com' } });
    expect(dup.status).to.equal(409);
    expect(dup.body.code).to.equal('peer_exists');
    expect((await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'http://insecure.example.com' } })).status).to.equal(422);

    const admin = await signUp(svc, outbox, 'fedops@example.com');
    const member = await signUp(svc, outbox);
    expect((await svc.req('POST', `/api/admin/federation/${r.body.peer_id}/approve`, { headers: bearer(member.access_token) })).status).to.equal(403);
    const pending = await svc.req('GET', '/api/admin/federation?status=pending', { headers: bearer(admin.access_token) });
    expect(pending.body.peers.map((p: { peer_id: string }) => p.peer_id)).to.deep.equal([r.body.peer_id]);
    expect(pending.body.peers[0].contact_email).to.equal('ops@peer.example.com');
    const ok = await svc.req('POST', `/api/admin/federation/${r.body.peer_id}/approve`, { headers: bearer(admin.access_token) });
    expect(ok.status, ok.text).to.equal(200);
    expect((await svc.req('POST', `/api/admin/federation/${r.body.peer_id}/reject`, { headers: bearer(admin.access_token) })).status).to.equal(409);
    expect((await svc.req('POST', '/api/admin/federation/fed_unknown/approve', { headers: bearer(admin.access_token) })).status).to.equal(404);

    const other = await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'https://other.example.com' } });
    await svc.req('POST', `/api/admin/federation/${other.body.peer_id}/reject`, { headers: bearer(admin.access_token) });
    expect((await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'https://other.example.com' } })).status).to.equal(200);
    for (let i = 0; i < 10; i++) await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: `https://n${i}.example.com` } });
    expect((await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'https://late.example.com' } })).status).to.equal(429);
  });

  it('serves visible agents as A2A agent cards, cursor-paged', async () => {
    const a = await svc.register({ capabilities: ['lead-gen', 'b2b-sales'] });
    const b = await svc.register();
    const first = await svc.req('GET', '/api/federation/agents?limit=1');
    expect(first.status).to.equal(200);
    expect(first.body.agents[0]).to.include({ id: b.agent_id, version: '1.0' });
    expect(first.body.has_more).to.equal(true);
    const second = await svc.req('GET', `/api/federation/agents?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.agents[0].id).to.equal(a.agent_id);
    expect(second.body.agents[0].skills.map((s: { id: string }) => s.id)).to.deep.equal(['lead-gen', 'b2b-sales']);
    expect(JSON.stringify(second.body)).to.not.match(/owner_email|@example\.com/);
    expect((await svc.req('GET', '/api/federation/agents?cursor=zzz')).status).to.equal(400);
  });
});
