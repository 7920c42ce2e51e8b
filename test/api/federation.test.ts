import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROOF_PATH } from '../../api/routes/federation/federation.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('api: federation (peer registration, review, portable agent directory)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let outbox: string;
  before(async () => ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'fedops@example.com', RATE_LIMIT_SCALE: '1', WEBHOOK_ALLOW_LOOPBACK: '1' })));
  after(() => stopWithOutbox(svc, outbox));

  /** A peer's web server on a loopback port: serves `text` at the proof path (with `type`, or a redirect). */
  interface Receiver {
    url: string;
    text: string;
    type: string;
    redirect: string | null;
    hits: number;
    close(): Promise<void>;
  }
  const receivers: Receiver[] = [];
  async function receiver(): Promise<Receiver> {
    const r: Receiver = { url: '', text: '', type: 'text/plain; charset=utf-8', redirect: null, hits: 0, close: async () => undefined };
    const server = http.createServer((req, res) => {
      if (req.url !== PROOF_PATH) return res.writeHead(404).end();
      r.hits++;
      if (r.redirect) return res.writeHead(302, { location: r.redirect }).end();
      res.writeHead(200, { 'content-type': r.type }).end(r.text);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    r.close = () => new Promise((resolve) => server.close(() => resolve()));
    receivers.push(r);
    return r;
  }
  after(() => Promise.all(receivers.map((r) => r.close())));

  /** Registers `body`, first learning its token and publishing it at the receiver (as a partner does). */
  async function registerWithProof(at: Receiver, body: Record<string, unknown>) {
    const first = await svc.req('POST', '/api/federation/register', { body });
    expect(first.status, first.text).to.equal(403);
    at.text = `# tokens\n${first.body.proof_token}\n`;
    return svc.req('POST', '/api/federation/register', { body });
  }

  it('records a peer as pending once its origin serves the proof, refuses a duplicate, lets a super admin approve or reject, and rate-limits registrations', async () => {
    const peer = await receiver();
    const body = { name: 'Peer Net', base_url: `${peer.url}/some/path`, contact_email: 'Ops@Peer.example.com' };
    const r = await registerWithProof(peer, body);
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ status: 'pending', base_url: peer.url });
    expect(r.body.peer_id).to.match(/^fed_/);
    expect(r.body).to.not.have.property('contact_email');
    const dup = await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: `${peer.url}/another/path` } });
    expect(dup.status, dup.text).to.equal(409);
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

    const otherPeer = await receiver();
    const other = await registerWithProof(otherPeer, { ...body, base_url: otherPeer.url });
    await svc.req('POST', `/api/admin/federation/${other.body.peer_id}/reject`, { headers: bearer(admin.access_token) });
    expect((await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: otherPeer.url } })).status).to.equal(200);
    // Refused registrations count too: 7 so far from this address, 3 more reach the 10 an hour.
    for (let i = 0; i < 3; i++) await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: `https://n${i}.example.com` } });
    const late = await svc.req('POST', '/api/federation/register', { body: { ...body, base_url: 'https://late.example.com' } });
    expect(late.status, late.text).to.equal(429);
  });

  describe('squatting', () => {
    let fresh: TestService;
    let freshOutbox: string;
    before(async () => ({ svc: fresh, outbox: freshOutbox } = await startWithOutbox({ ADMIN_EMAILS: 'fedops@example.com', WEBHOOK_ALLOW_LOOPBACK: '1' })));
    after(() => stopWithOutbox(fresh, freshOutbox));
    const register = (body: Record<string, unknown>) => fresh.req('POST', '/api/federation/register', { body });

    it("a registration under another organisation's base_url is refused (403 peer_unverified) and does not lock it; the partner then registers", async () => {
      const partner = await receiver();
      partner.text = 'nothing here yet';
      const squat = { name: 'Squatter', base_url: partner.url, contact_email: 'me@squatter.example.net', public_key: 'squatter-key' };
      const refused = await register(squat);
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body).to.include({ code: 'peer_unverified', proof_url: `${partner.url}/.well-known/agent-network-federation.txt` });
      expect(refused.body.proof_token).to.match(/^anfed_[0-9a-f]{40}$/);
      expect(partner.hits).to.equal(1);

      // The partner learns its own token and publishes it; the squatter's token is another.
      const real = { name: 'Partner', base_url: partner.url, contact_email: 'ops@partner.example.com', public_key: 'partner-key' };
      const challenge = await register(real);
      expect(challenge.status).to.equal(403);
      expect(challenge.body.proof_token).to.not.equal(refused.body.proof_token);
      partner.text = `${challenge.body.proof_token}\n`;
      // With the partner's token published, the squatter's contact or key still proves nothing.
      expect((await register(squat)).status).to.equal(403);
      expect((await register({ ...real, contact_email: 'me@squatter.example.net' })).status).to.equal(403);
      expect((await register({ ...real, public_key: 'squatter-key' })).status).to.equal(403);
      const ok = await register(real);
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.include({ status: 'pending', base_url: partner.url });
      const admin = await signUp(fresh, freshOutbox, 'fedops@example.com');
      const peers = await fresh.req('GET', '/api/admin/federation', { headers: bearer(admin.access_token) });
      expect(peers.body.peers.map((p: { contact_email: string }) => p.contact_email)).to.deep.equal(['ops@partner.example.com']);
    });

    it('a redirect, a wrong content type, a missing file or a private address prove nothing', async () => {
      const at = await receiver();
      const body = { name: 'P', base_url: at.url, contact_email: 'ops@p.example.com' };
      const token = (await register(body)).body.proof_token as string;
      const elsewhere = await receiver();
      elsewhere.text = token;
      at.redirect = `${elsewhere.url}/.well-known/agent-network-federation.txt`;
      expect((await register(body)).status).to.equal(403);
      expect(elsewhere.hits, 'the redirect is not followed').to.equal(0);
      at.redirect = null;
      at.text = token;
      at.type = 'text/html';
      expect((await register(body)).status).to.equal(403);
      at.type = 'text/plain';
      at.text = `x${token}`;
      expect((await register(body)).status).to.equal(403);
      const priv = await register({ ...body, base_url: 'https://10.1.2.3' });
      expect(priv.status).to.equal(403);
      expect(priv.body.detail).to.match(/not public/);
      at.text = token;
      expect((await register(body)).status).to.equal(200);
    });
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
