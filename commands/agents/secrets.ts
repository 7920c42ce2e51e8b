import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'ans_live_';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const CLAIM_TOKEN_PREFIX = 'clm_';

const token = (prefix: string, bytes: number) => `${prefix}${randomBytes(bytes).toString('base64url')}`;

export const newApiKey = () => token(API_KEY_PREFIX, 32);
export const newWebhookSecret = () => token(WEBHOOK_SECRET_PREFIX, 32);
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

  constructor(serverSecret: string | Buffer) {
    const ikm = Buffer.isBuffer(serverSecret) ? serverSecret : Buffer.from(serverSecret, 'utf8');
    this.hashKey = Buffer.from(hkdfSync('sha256', ikm, 'agent-network', 'keyed-hash-v1', 32));
    this.encKey = Buffer.from(hkdfSync('sha256', ikm, 'agent-network', 'secret-encryption-v1', 32));
  }

  hash(value: string): string {
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
