import { expect } from 'chai';
import { createHash, createHmac, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_PREFIX, SecretBox, newApiKey, newClaimToken, newWebhookSecret } from '../../commands/agents/secrets.ts';
import { deriveId, deriveOrderedId, deriveOrderedUuid, deriveUuid, newId } from '../../events/kernel/ids.ts';
import { entityId } from '../../commands/handler.ts';

// The fast paths (one-shot hashing, pooled random bytes) must give exactly what the plain
// node:crypto formulation gives: ids and keyed hashes are stored, so a change would orphan data.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
function referenceBase32(bytes: Uint8Array, length: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= 0xff;
  }
  return out;
}
const referenceDeriveId = (prefix: string, seed: string, label = '') =>
  `${prefix}_${referenceBase32(createHash('sha256').update(`${seed}\u0000${label}`).digest(), 20)}`;
function referenceDeriveUuid(seed: string, label: string): string {
  const h = createHash('sha256').update(`${seed}\u0000${label}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const seeds = ['', 'a', 'é✓😀 unicode seed', createHash('sha256').update('idempotency').digest('hex'), ...Array.from({ length: 500 }, () => randomUUID())];

describe('events/kernel/ids and commands/agents/secrets', () => {
  it('derives the same post ids and event UUIDs as the plain createHash formulation', () => {
    for (const seed of seeds) {
      expect(deriveId('pst', seed)).to.equal(referenceDeriveId('pst', seed));
      expect(deriveId('cmt', seed, 'reply#3')).to.equal(referenceDeriveId('cmt', seed, 'reply#3'));
      expect(deriveUuid(seed, 'agent-agt_x#0')).to.equal(referenceDeriveUuid(seed, 'agent-agt_x#0'));
    }
  });

  it('derives time-ordered UUIDs (version 7 layout): the time in ms first, then the hash of seed and label; same inputs, same id', () => {
    const t = Date.parse('2026-11-23T19:40:00.123Z');
    for (const seed of seeds) {
      const id = deriveOrderedUuid(seed, 'agent-agt_x#0', t);
      expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(id).to.equal(deriveOrderedUuid(seed, 'agent-agt_x#0', t));
      expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).to.equal(t);
      // The random part is the v5 id's: the same hash bits after the version nibble.
      expect(id.slice(15)).to.equal(deriveUuid(seed, 'agent-agt_x#0').slice(15));
      expect(deriveOrderedUuid(seed, 'agent-agt_x#1', t)).to.not.equal(id);
    }
    const inOrder = Array.from({ length: 100 }, (_, i) => deriveOrderedUuid(randomUUID(), 'l', t + i * 7));
    expect([...inOrder].sort()).to.deep.equal(inOrder);
  });

  it('derives time-ordered entity ids: 20 base32 characters, the time in ms first, then the hash of seed and label; same inputs, same id', () => {
    const t = Date.parse('2026-11-23T19:40:00.123Z');
    const timeOf = (id: string) => [...id.slice(4, 14)].reduce((n, c) => n * 32 + ALPHABET.indexOf(c), 0);
    for (const seed of seeds) {
      const id = deriveOrderedId('cpo', seed, 'x', t);
      expect(id).to.match(/^cpo_[0-9a-hjkmnp-tv-z]{20}$/);
      expect(id).to.equal(deriveOrderedId('cpo', seed, 'x', t));
      expect(timeOf(id)).to.equal(t);
      // The other half is the first half of the plain derived id's hash.
      expect(id.slice(14)).to.equal(deriveId('cpo', seed, 'x').slice(4, 14));
      expect(deriveOrderedId('cpo', seed, 'y', t)).to.not.equal(id);
    }
    expect(timeOf(deriveOrderedId('cpo', 's', '', 0xffff_ffff_ffff))).to.equal(0xffff_ffff_ffff);
    expect(timeOf(deriveOrderedId('cpo', 's', '', -5))).to.equal(0);
    const inOrder = Array.from({ length: 200 }, (_, i) => deriveOrderedId('mail', randomUUID(), 'l', t + i * 3));
    expect([...inOrder].sort()).to.deep.equal(inOrder);
    // A command that can be retried keeps ids of its command id alone; a fresh one gets the ordered id of its time.
    const now = new Date(t);
    expect(entityId('cpo', { commandId: 'c1', actor: null, requestId: null, now })).to.equal(deriveId('cpo', 'c1'));
    expect(entityId('cpo', { commandId: 'c1', actor: null, requestId: null, now, fresh: true }, 'l')).to.equal(deriveOrderedId('cpo', 'c1', 'l', t));
  });

  it('makes random ids of 20 base32 characters that do not repeat', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = newId('req');
      expect(id).to.match(/^req_[0-9a-hjkmnp-tv-z]{20}$/);
      ids.add(id);
    }
    expect(ids.size).to.equal(20_000);
  });

  it('computes the keyed hash byte for byte as HMAC-SHA256 under the derived key, for any input', () => {
    const secret = randomBytes(32).toString('hex');
    const box = new SecretBox(secret);
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'agent-network', 'keyed-hash-v1', 32));
    const values = ['', '123456', 'é'.repeat(341), 'é'.repeat(342), '😀'.repeat(200), 'x'.repeat(5000), ...Array.from({ length: 300 }, () => newApiKey())];
    for (const v of values) expect(box.hash(v)).to.equal(createHmac('sha256', key).update(v, 'utf8').digest('hex'));
    const k = newApiKey();
    expect(box.verify(k, box.hash(k))).to.equal(true);
    expect(box.verify(newApiKey(), box.hash(k))).to.equal(false);
    expect(box.verify(k, 'not-a-hash')).to.equal(false);
  });

  it('issues distinct secrets with their prefixes and round-trips encryption', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => newApiKey()));
    expect(keys.size).to.equal(2000);
    for (const k of keys) expect(k.startsWith(API_KEY_PREFIX) && k.length === API_KEY_PREFIX.length + 43).to.equal(true);
    expect(newWebhookSecret()).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newClaimToken()).to.match(/^clm_[\w-]{32}$/);
    const box = new SecretBox('server secret');
    const sealed = box.encrypt('whsec_plain');
    expect(sealed).to.not.include('whsec_plain');
    expect(box.encrypt('whsec_plain')).to.not.equal(sealed);
    expect(box.decrypt(sealed)).to.equal('whsec_plain');
  });
});
