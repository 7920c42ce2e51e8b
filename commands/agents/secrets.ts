import * as nodeCrypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomFillSync, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'ans_live_';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const CLAIM_TOKEN_PREFIX = 'clm_';

// One-shot SHA-256 (node >= 20.12). HMAC over it needs no key object per call, which makes the
// keyed hash of every authenticated request about three times cheaper than createHmac.
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Buffer, encoding: 'hex' | 'latin1') => string }).hash;
const BLOCK = 64;
const SCRATCH = 1024;

// CSPRNG bytes drawn from a pool refilled 4 KiB at a time (one getrandom call instead of one per
// secret). Every byte is handed out once, and wiped from the pool as it is.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomBytes(n: number): Buffer {
  if (n > POOL_SIZE / 4) return randomFillSync(Buffer.alloc(n));
  if (poolOffset + n > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + n));
  pool.fill(0, poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

const token = (prefix: string, bytes: number) => `${prefix}${randomBytes(bytes).toString('base64url')}`;

export const newApiKey = () => token(API_KEY_PREFIX, 32);
// Standard base64 (with padding) after the prefix: the Standard Webhooks secret format, which
// its libraries decode strictly. Secrets issued earlier use the URL-safe alphabet.
export const newWebhookSecret = () => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
export const newClaimToken = () => token(CLAIM_TOKEN_PREFIX, 24);

/**
 * Server-side secret handling. Keys, tokens and OTPs are stored only as keyed hashes
 * (HMAC-SHA256 under a key derived from the server secret), so a leaked log or database does
 * not reveal them and cannot be brute-forced offline without the server secret. Webhook secrets
 * must sign deliveries, so they are stored encrypted (AES-256-GCM) instead.
 */
export class SecretBox {
  private readonly hashKey: Buffer;
  private readonly encKey: Buffer;
  /** HMAC-SHA256 (RFC 2104) under hashKey: key XOR ipad followed by room for the message ... */
  private readonly inner = Buffer.alloc(BLOCK + SCRATCH);
  /** ... and key XOR opad followed by the inner digest. */
  private readonly outer = Buffer.alloc(BLOCK + 32);

  constructor(serverSecret: string | Buffer) {
    const ikm = Buffer.isBuffer(serverSecret) ? serverSecret : Buffer.from(serverSecret, 'utf8');
    this.hashKey = Buffer.from(hkdfSync('sha256', ikm, 'agent-network', 'keyed-hash-v1', 32));
    this.encKey = Buffer.from(hkdfSync('sha256', ikm, 'agent-network', 'secret-encryption-v1', 32));
    // The key is 32 bytes, shorter than the block: it is used zero-padded (RFC 2104).
    for (let i = 0; i < BLOCK; i++) {
      const k = i < this.hashKey.length ? this.hashKey[i] : 0;
      this.inner[i] = k ^ 0x36;
      this.outer[i] = k ^ 0x5c;
    }
  }

  /** Keyed hash (HMAC-SHA256, hex) of a secret; byte for byte what createHmac gives. */
  hash(value: string): string {
    if (oneShot !== undefined && value.length <= SCRATCH / 3) {
      // At most 3 UTF-8 bytes per UTF-16 unit, so the message always fits.
      const n = this.inner.write(value, BLOCK, 'utf8');
      this.outer.write(oneShot('sha256', this.inner.subarray(0, BLOCK + n), 'latin1'), BLOCK, 'latin1');
      const digest = oneShot('sha256', this.outer, 'hex');
      this.inner.fill(0, BLOCK, BLOCK + n);
      return digest;
    }
    return createHmac('sha256', this.hashKey).update(value, 'utf8').digest('hex');
  }

  /** Constant-time comparison of a presented value with a stored keyed hash. */
  verify(value: string, storedHash: string): boolean {
    const a = Buffer.from(this.hash(value), 'hex');
    const b = Buffer.from(storedHash, 'hex');
    return a.length === b.length && timingSafeEqual(a, b);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  decrypt(sealed: string): string {
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.encKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
