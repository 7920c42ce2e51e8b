import { createHash, randomBytes } from 'node:crypto';

// Crockford base32: ids stay URL-safe, case-insensitive and free of look-alike letters.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array, length: number): string {
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

export type IdPrefix =
  | 'agt' | 'pst' | 'cmt' | 'dm' | 'thr' | 'lst' | 'ctr' | 'usr' | 'req' | 'cmd' | 'ntf' | 'img' | 'dlv' | 'msg' | 'mtc' | 'cmy' | 'crc' | 'dig' | 'rsp' | 'mail' | 'otp' | 'ses' | 'key' | 'run';

/** A new random identifier with its type prefix, e.g. `agt_6x0k...` (20 base32 chars, 100 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base32(randomBytes(13), 20)}`;
}

/** A deterministic identifier derived from a command id, so a retried command produces the same ids. */
export function deriveId(prefix: IdPrefix, seed: string, label = ''): string {
  return `${prefix}_${base32(createHash('sha256').update(`${seed}\u0000${label}`).digest(), 20)}`;
}

/** A deterministic RFC 4122-shaped UUID (EventStoreDB requires UUID event ids). */
export function deriveUuid(seed: string, label: string): string {
  const h = createHash('sha256').update(`${seed}\u0000${label}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
