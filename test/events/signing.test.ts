import { createPublicKey, verify } from 'node:crypto';
import { expect } from 'chai';
import { CHAIN_GENESIS, ServiceKey, chainHashes, chainLink, sha256Hex, verifyServiceSignature } from '../../events/kernel/signing.ts';
import { startTestService } from '../helpers/service.ts';
import type { TestService } from '../helpers/service.ts';

describe('events/kernel/signing: the service key and hash chains', () => {
  const key = ServiceKey.fromServerSecret('a server secret of at least thirty-two characters');
  const doc = { ruling: 'completed', contract_id: 'ctr_1', note: 'delivered as agreed', at: '2026-11-25T00:00:00.000Z' };

  it('derives the same key from the same secret and another from another secret', () => {
    expect(ServiceKey.fromServerSecret('a server secret of at least thirty-two characters').jwk()).to.deep.equal(key.jwk());
    expect(ServiceKey.fromServerSecret('another server secret, also thirty-two characters').jwk().x).to.not.equal(key.jwk().x);
  });

  it('signs canonical JSON: key order does not matter, any change of a value breaks the signature', () => {
    const sig = key.sign(doc);
    const reordered = { at: doc.at, note: doc.note, contract_id: doc.contract_id, ruling: doc.ruling };
    expect(verifyServiceSignature(reordered, sig, key.jwk().x)).to.equal(true);
    expect(verifyServiceSignature({ ...doc, ruling: 'refunded' }, sig, key.jwk().x)).to.equal(false);
    expect(verifyServiceSignature(doc, { value: 'not-a-signature' }, key.jwk().x)).to.equal(false);
  });

  it("a signature verifies with node's own crypto.verify from the published JWK", () => {
    const sig = key.sign(doc);
    const publicKey = createPublicKey({ key: { ...key.jwk() }, format: 'jwk' });
    const bytes = Buffer.from('{"at":"2026-11-25T00:00:00.000Z","contract_id":"ctr_1","note":"delivered as agreed","ruling":"completed"}');
    expect(verify(null, bytes, publicKey, Buffer.from(sig.value, 'base64url'))).to.equal(true);
    expect(verify(null, Buffer.concat([bytes, Buffer.from(' ')]), publicKey, Buffer.from(sig.value, 'base64url'))).to.equal(false);
  });

  it('chains entries: each hash is sha256(previous + newline + JCS(entry)), and a change, drop or swap changes the tail', () => {
    const entries = [{ n: 1 }, { n: 2 }, { n: 3 }];
    const hashes = chainHashes(entries);
    expect(hashes[0]).to.equal(sha256Hex(`${CHAIN_GENESIS}\n{"n":1}`));
    expect(hashes[2]).to.equal(chainLink(hashes[1], { n: 3 }));
    const tail = hashes[2];
    expect(chainHashes([{ n: 1 }, { n: 2 }, { n: 4 }])[2]).to.not.equal(tail);
    expect(chainHashes([{ n: 1 }, { n: 3 }]).at(-1)).to.not.equal(tail);
    expect(chainHashes([{ n: 2 }, { n: 1 }, { n: 3 }])[2]).to.not.equal(tail);
    // Two adjacent periods link: the second starts from the first's last hash.
    expect(chainHashes([{ n: 3 }], hashes[1])[0]).to.equal(tail);
  });

  describe('GET /.well-known/service-key.json', function () {
    this.timeout(300_000);
    let svc: TestService;
    before(async () => (svc = await startTestService()));
    after(() => svc.stop());

    it('publishes the running service key as a JWK set that verifies its signatures', async () => {
      const res = await svc.req('GET', '/.well-known/service-key.json');
      expect(res.status).to.equal(200);
      const [jwk] = (res.body as { keys: Array<{ kty: string; crv: string; x: string; kid: string }> }).keys;
      expect(jwk).to.include({ kty: 'OKP', crv: 'Ed25519', kid: svc.running.services.serviceKey.kid });
      expect(verifyServiceSignature(doc, svc.running.services.serviceKey.sign(doc), jwk.x)).to.equal(true);
    });
  });
});
