import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as ed from '@noble/ed25519';
import { chainEntries, verifyEvidenceChain } from '../../commands/marketplace/evidence.ts';
import type { EvidenceBundle } from '../../commands/marketplace/evidence.ts';
import { canonicalJson, chainHashes } from '../../events/kernel/signing.ts';
import { startWithOutbox, stopWithOutbox } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';
import { signUp } from '../helpers/users.ts';
import type { Party } from './marketplace-helpers.ts';
import { as, bearer, move, openContract, party } from './marketplace-helpers.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;

describe('api: admin disputes, evidence bundles and signed rulings', function () {
  this.timeout(180_000);
  let svc: TestService;
  let outbox: string;
  let requester: Party;
  let provider: Party;
  let admin: string;
  let member: string;
  let disputed: string;
  before(async () => {
    ({ svc, outbox } = await startWithOutbox({ ADMIN_EMAILS: 'judge@example.com' }));
    requester = await party(svc, outbox);
    provider = await party(svc, outbox);
    admin = (await signUp(svc, outbox, 'judge@example.com')).access_token;
    member = (await signUp(svc, outbox)).access_token;
    disputed = await openContract(svc, 'bearer', requester, provider);
    await move(svc, 'bearer', provider, disputed, 'accept', { note: 'on it' });
    await move(svc, 'api_key', provider, disputed, 'start');
    await move(svc, 'bearer', requester, disputed, 'dispute', { note: 'no word for a week' });
  });
  after(() => stopWithOutbox(svc, outbox));

  it('shows the dispute queue to super admins only (others 403)', async () => {
    expect((await svc.req('GET', '/api/admin/disputes', bearer(member))).status).to.equal(403);
    expect((await svc.req('GET', '/api/admin/disputes', as('api_key', requester))).status).to.equal(401);
    const q = await svc.req('GET', '/api/admin/disputes', bearer(admin));
    expect(q.status, q.text).to.equal(200);
    const item = q.body.items.find((i: { contract_id: string }) => i.contract_id === disputed);
    expect(item).to.include({ state: 'disputed', disputed_by: requester.agent_id, dispute_note: 'no word for a week' });
    expect((await svc.req('GET', `/api/admin/disputes/${disputed}`, bearer(member))).status).to.equal(403);
  });

  it("answers the audit trail straight from the contract's stream (the test compares them event by event)", async () => {
    const r = await svc.req('GET', `/api/admin/disputes/${disputed}`, bearer(admin));
    expect(r.status, r.text).to.equal(200);
    const stream = (await svc.running.services.log.readStream(`contract-${disputed}`)).filter((e) => e.type !== 'MailQueued');
    expect(r.body.trail).to.have.length(stream.length);
    r.body.trail.forEach((row: Record<string, unknown>, i: number) => {
      const e = stream[i];
      const d = (e?.data ?? {}) as Record<string, unknown>;
      expect(row).to.include({ position: e?.position, revision: e?.revision, event_id: e?.id, type: e?.type, at: e?.metadata.occurred_at });
      if (e?.type === 'ContractTransitioned') expect(row).to.include({ action: d.action, from: d.from, to: d.to, actor: d.actor_id, note: d.note });
    });
    expect(r.body.trail.map((t: { action: string }) => t.action)).to.deep.equal(['open', 'accept', 'start', 'dispute']);
    expect(r.body.trail[1]).to.include({ actor: provider.agent_id, actor_role: 'provider', from: 'open', to: 'accepted', note: 'on it' });
    expect(r.body.trail[3]).to.include({ actor: requester.agent_id, actor_role: 'requester', to: 'disputed', note: 'no word for a week' });
    // A contract that was never disputed has no dispute.
    const calm = await openContract(svc, 'api_key', requester, provider);
    expect((await svc.req('GET', `/api/admin/disputes/${calm}`, bearer(admin))).status).to.equal(404);
  });

  it('gives an evidence bundle whose hash chain verifies, and fails after one byte is changed', async () => {
    const r = await svc.req('GET', `/api/admin/disputes/${disputed}/evidence`, bearer(admin));
    expect(r.status, r.text).to.equal(200);
    const bundle = r.body as EvidenceBundle;
    expect(bundle.listing?.type).to.equal('ListingCreated');
    expect(bundle.response?.type).to.equal('ListingResponded');
    expect(bundle.events.map((e) => e.type)).to.deep.equal(['ContractOpened', 'ContractTransitioned', 'ContractTransitioned', 'ContractTransitioned']);
    for (const e of bundle.events) expect(e.position).to.be.a('number');
    expect(verifyEvidenceChain(bundle)).to.equal(true);
    // The documented recipe, by hand: sha256(prev + "\n" + JCS(entry)) over [listing, response, ...events].
    expect(chainHashes(chainEntries(bundle)).at(-1)).to.equal(bundle.chain.head);
    // One byte of the bundle's text changed (a note), parsed again: the chain no longer verifies.
    const text = JSON.stringify(bundle);
    const at = text.indexOf('no word for a week');
    const tampered = JSON.parse(`${text.slice(0, at)}No${text.slice(at + 2)}`) as EvidenceBundle;
    expect(verifyEvidenceChain(tampered)).to.equal(false);
    const positionShift = JSON.parse(text) as EvidenceBundle;
    positionShift.events[0].position += 1;
    expect(verifyEvidenceChain(positionShift)).to.equal(false);
  });

  it('resolves with a ruling signed by the service key: node crypto.verify, @noble/ed25519 and the documented verifier all accept it', async () => {
    const evidence = (await svc.req('GET', `/api/admin/disputes/${disputed}/evidence`, bearer(admin))).body as EvidenceBundle;
    const r = await svc.req('POST', `/api/admin/disputes/${disputed}/resolve`, bearer(admin, { outcome: 'refunded', note: 'The provider never delivered' }));
    expect(r.status, r.text).to.equal(200);
    expect(r.body.contract.state).to.equal('refunded');
    expect(r.body.ruling.ruling).to.include({ contract_id: disputed, outcome: 'refunded', evidence_head: evidence.chain.head });
    // Either party fetches it; a third party cannot.
    const fetched = await svc.req('GET', `/api/agent/contracts/${disputed}/ruling`, as('api_key', provider));
    expect(fetched.status, fetched.text).to.equal(200);
    expect((await svc.req('GET', `/api/contracts/${disputed}/ruling`, as('bearer', requester))).body.signature).to.deep.equal(fetched.body.signature);
    const { ruling, signature } = fetched.body as { ruling: Record<string, unknown>; signature: { kid: string; value: string } };
    const keys = (await svc.req('GET', '/.well-known/service-key.json')).body as { keys: Array<{ kid: string; x: string }> };
    const jwk = keys.keys.find((k) => k.kid === signature.kid);
    expect(jwk, 'the signing key is published').to.not.equal(undefined);
    const bytes = Buffer.from(canonicalJson(ruling), 'utf8');
    const sig = Buffer.from(signature.value, 'base64url');
    const publicKey = createPublicKey({ key: { ...jwk, kty: 'OKP', crv: 'Ed25519' }, format: 'jwk' });
    expect(verify(null, bytes, publicKey, sig)).to.equal(true);
    expect(ed.verify(new Uint8Array(sig), new Uint8Array(bytes), new Uint8Array(Buffer.from(jwk?.x ?? '', 'base64url')))).to.equal(true);
    const changed = Buffer.from(canonicalJson({ ...ruling, outcome: 'completed' }), 'utf8');
    expect(verify(null, changed, publicKey, sig)).to.equal(false);
    expect(ed.verify(new Uint8Array(sig), new Uint8Array(changed), new Uint8Array(Buffer.from(jwk?.x ?? '', 'base64url')))).to.equal(false);

    // docs/examples/verify-ruling.mjs, run as a user would: valid as fetched, invalid once altered.
    const dir = mkdtempSync(join(tmpdir(), 'ruling-'));
    try {
      writeFileSync(join(dir, 'ruling.json'), JSON.stringify(fetched.body));
      writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys));
      const ok = await run(process.execPath, ['docs/examples/verify-ruling.mjs', join(dir, 'ruling.json'), join(dir, 'keys.json')], { cwd: root });
      expect(ok.stdout).to.match(new RegExp(`^valid: ${disputed} ruled refunded`));
      writeFileSync(join(dir, 'ruling.json'), JSON.stringify({ ...fetched.body, ruling: { ...ruling, note: 'The provider delivered' } }));
      const bad = await run(process.execPath, ['docs/examples/verify-ruling.mjs', join(dir, 'ruling.json'), join(dir, 'keys.json')], { cwd: root }).then(
        () => null,
        (err: { code?: number; stdout?: string }) => err,
      );
      expect(bad?.code).to.equal(1);
      expect(bad?.stdout).to.contain('INVALID');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // The ruling is on the stream, so the trail shows it and the bundle after the ruling still starts with the chain the ruling names.
    const trail = await svc.req('GET', `/api/admin/disputes/${disputed}`, bearer(admin));
    expect(trail.body.trail.map((t: { action: string }) => t.action)).to.deep.equal(['open', 'accept', 'start', 'dispute', 'resolve', 'ruling']);
    const later = (await svc.req('GET', `/api/admin/disputes/${disputed}/evidence`, bearer(admin))).body as EvidenceBundle;
    expect(later.chain.links).to.include(evidence.chain.head);
    expect(verifyEvidenceChain(later)).to.equal(true);
    // A second resolution is refused: the contract is no longer disputed.
    expect((await svc.req('POST', `/api/admin/disputes/${disputed}/resolve`, bearer(admin, { outcome: 'completed', note: 'x' }))).status).to.equal(409);
  });

  it('has no ruling before a resolution (404) and validates the resolution body (422)', async () => {
    const id = await openContract(svc, 'api_key', requester, provider);
    await move(svc, 'api_key', provider, id, 'accept');
    await move(svc, 'api_key', provider, id, 'dispute');
    expect((await svc.req('GET', `/api/agent/contracts/${id}/ruling`, as('api_key', requester))).status).to.equal(404);
    expect((await svc.req('POST', `/api/admin/disputes/${id}/resolve`, bearer(admin, { outcome: 'cancelled', note: 'x' }))).status).to.equal(422);
    expect((await svc.req('POST', `/api/admin/disputes/${id}/resolve`, bearer(admin, { outcome: 'completed' }))).status).to.equal(422);
  });
});
