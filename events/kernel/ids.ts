import * as nodeCrypto from 'node:crypto';
import { createHash, randomFillSync } from 'node:crypto';

// Crockford base32: ids stay URL-safe, case-insensitive and free of look-alike letters.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The first `length` base32 characters of a byte sequence given as bytes or as a latin1 string. */
function base32(bytes: Uint8Array | string, offset: number, length: number): string {
  const text = typeof bytes === 'string';
  let out = '';
  let bits = 0;
  let value = 0;
  for (let i = offset; out.length < length; i++) {
    value = (value << 8) | (text ? (bytes as string).charCodeAt(i) : (bytes as Uint8Array)[i]);
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= 0xff;
  }
  return out;
}

// One-shot SHA-256 (node >= 20.12 has crypto.hash, several times cheaper than createHash for
// short input, most of all with string output).
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'hex' | 'latin1') => string }).hash;
const sha256 = (text: string, encoding: 'hex' | 'latin1'): string =>
  oneShot
    ? oneShot('sha256', text, encoding)
    : createHash('sha256')
        .update(text)
        .digest(encoding === 'latin1' ? 'binary' : 'hex');

/** SHA-256 of a string as hex, one-shot where node has it. */
export function sha256Hex(text: string): string {
  return sha256(text, 'hex');
}

// Random bytes come from a pool refilled by the CSPRNG, so an id costs one slice, not one syscall.
const POOL_SIZE = 13 * 512;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

export type IdPrefix =
  | 'agt'
  | 'pst'
  | 'cmt'
  | 'dm'
  | 'thr'
  | 'lst'
  | 'ctr'
  | 'usr'
  | 'req'
  | 'cmd'
  | 'ntf'
  | 'img'
  | 'dlv'
  | 'msg'
  | 'mtc'
  | 'cmy'
  | 'crc'
  | 'dig'
  | 'rsp'
  | 'mail'
  | 'otp'
  | 'ses'
  | 'key'
  | 'run'
  | 'int'
  | 'fed'
  | 'ord'
  | 'pay'
  | 'icd'
  | 'cjr'
  | 'cpo'
  | 'crp'
  | 'cnt'
  | 'lead'
  | 'nda'
  | 'rpl';

/** A new random identifier with its type prefix, e.g. `agt_6x0k...` (20 base32 chars, 100 bits). */
export function newId(prefix: IdPrefix): string {
  if (poolOffset + 13 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = `${prefix}_${base32(pool, poolOffset, 20)}`;
  poolOffset += 13;
  return id;
}

/** A deterministic identifier derived from a command id, so a retried command produces the same ids. */
export function deriveId(prefix: IdPrefix, seed: string, label = ''): string {
  return `${prefix}_${base32(sha256(`${seed}\u0000${label}`, 'latin1'), 0, 20)}`;
}

/**
 * deriveId for a command minted for one request, which nothing can retry (CommandContext.fresh):
 * the same shape (20 base32 characters after the prefix), its first 10 the Unix time in ms
 * (`timeMs`, so ids sort by it) and the other 10 (50 bits) from SHA-256 of the seed and label.
 * A new entity's stream (`cpost-<id>`, `mail-<id>`) then lands beside the streams made just
 * before it in the event log's stream index, instead of on one random page per stream, which halves
 * the writer's cost of an append (docs/PERFORMANCE.md). Same inputs, same id.
 */
export function deriveOrderedId(prefix: IdPrefix, seed: string, label: string, timeMs: number): string {
  let t = Math.max(0, Math.min(Math.floor(timeMs), 0xffff_ffff_ffff));
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return `${prefix}_${time}${base32(sha256(`${seed}\u0000${label}`, 'latin1'), 0, 10)}`;
}

// (nibble & 0x3) | 0x8 for every hex nibble of byte 8's high half.
const VARIANT = Array.from({ length: 16 }, (_, n) => ((n & 0x3) | 0x8).toString(16));

/**
 * A deterministic, time-ordered UUID in the layout of RFC 9562 version 7: the 48-bit Unix time in
 * ms (`timeMs`), then 74 bits of SHA-256 of the seed and label. Ids minted close in time sort close
 * together, so the event log's unique index on ids takes each commit's new ids on one or two pages
 * instead of one random page per event. Same inputs, same id.
 */
export function deriveOrderedUuid(seed: string, label: string, timeMs: number): string {
  const hex = sha256(`${seed}\u0000${label}`, 'hex');
  const time = Math.max(0, Math.min(Math.floor(timeMs), 0xffff_ffff_ffff))
    .toString(16)
    .padStart(12, '0');
  const variant = VARIANT[hex.charCodeAt(16) - (hex.charCodeAt(16) >= 97 ? 87 : 48)];
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A deterministic RFC 4122-shaped UUID (EventStoreDB requires UUID event ids). */
export function deriveUuid(seed: string, label: string): string {
  const hex = sha256(`${seed}\u0000${label}`, 'hex');
  // Version 5 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
  const variant = VARIANT[hex.charCodeAt(16) - (hex.charCodeAt(16) >= 97 ? 87 : 48)];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
