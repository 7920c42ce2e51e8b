import { hkdfSync } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { BoundedCache } from '../../events/kernel/cache.ts';
import { newId } from '../../events/kernel/ids.ts';

export const ACCESS_TTL_S = 15 * 60;
export const REFRESH_TTL_S = 7 * 24 * 3600;
const ALG = 'HS256';
const ISSUER = 'agent-network';
const ACCESS_AUDIENCE = 'agent-network:api';
const REFRESH_AUDIENCE = 'agent-network:refresh';

export interface AccessClaims {
  userId: string;
  sessionId: string;
}
export interface RefreshClaims extends AccessClaims {
  jti: string;
}

/**
 * JWTs with a pinned algorithm (HS256), issuer, audience and lifetime. Access and refresh tokens
 * have different audiences, so one can never stand in for the other. The signing key is JWT_SECRET
 * when set, otherwise derived from the server secret (HKDF), so no extra secret is needed.
 */
export class TokenService {
  private readonly secret: Uint8Array<ArrayBuffer>;
  /** The HMAC key, imported into WebCrypto once rather than on every sign and verify. */
  private key: Promise<CryptoKey> | null = null;
  /**
   * Tokens already verified, by audience and token: a client sends one access token with every
   * request for its 15 minutes, so the signature is checked once. A hit is the exact token string
   * (signature included) and still has its expiry checked against the clock.
   */
  private readonly verified = new BoundedCache<string, Record<string, unknown>>({ max: 10_000 });

  constructor(
    serverSecret: string,
    jwtSecret: string | null,
    private readonly now: () => Date,
  ) {
    this.secret = jwtSecret
      ? new TextEncoder().encode(jwtSecret)
      : new Uint8Array(hkdfSync('sha256', Buffer.from(serverSecret, 'utf8'), 'agent-network', 'jwt-hs256-v1', 32));
  }

  private cryptoKey(): Promise<CryptoKey> {
    this.key ??= crypto.subtle.importKey('raw', this.secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    return this.key;
  }

  private async sign(claims: Record<string, unknown>, subject: string, audience: string, ttl: number): Promise<string> {
    const iat = Math.floor(this.now().getTime() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setSubject(subject)
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .sign(await this.cryptoKey());
  }

  access(c: AccessClaims): Promise<string> {
    return this.sign({ sid: c.sessionId }, c.userId, ACCESS_AUDIENCE, ACCESS_TTL_S);
  }

  refresh(c: AccessClaims): Promise<{ token: string; jti: string }> {
    const jti = newId('ses');
    return this.sign({ sid: c.sessionId, jti }, c.userId, REFRESH_AUDIENCE, REFRESH_TTL_S).then((token) => ({ token, jti }));
  }

  private async verify(token: string, audience: string): Promise<Record<string, unknown> | null> {
    if (token.length > 4096) return null;
    const cacheKey = `${audience} ${token}`;
    const known = this.verified.get(cacheKey);
    // jose's expiry rule: expired once exp <= now (whole seconds, no tolerance).
    if (known) return Number(known.exp) > Math.floor(this.now().getTime() / 1000) ? known : null;
    try {
      const { payload } = await jwtVerify(token, await this.cryptoKey(), {
        algorithms: [ALG],
        issuer: ISSUER,
        audience,
        currentDate: this.now(),
        requiredClaims: ['sub', 'exp', 'iat', 'sid'],
      });
      this.verified.set(cacheKey, payload as Record<string, unknown>);
      return payload as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  async verifyAccess(token: string): Promise<AccessClaims | null> {
    const p = await this.verify(token, ACCESS_AUDIENCE);
    if (!p || typeof p.sub !== 'string' || typeof p.sid !== 'string') return null;
    return { userId: p.sub, sessionId: p.sid };
  }

  async verifyRefresh(token: string): Promise<RefreshClaims | null> {
    const p = await this.verify(token, REFRESH_AUDIENCE);
    if (!p || typeof p.sub !== 'string' || typeof p.sid !== 'string' || typeof p.jti !== 'string') return null;
    return { userId: p.sub, sessionId: p.sid, jti: p.jti };
  }
}
