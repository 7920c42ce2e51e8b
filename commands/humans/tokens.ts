import { hkdfSync } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
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
  private readonly key: Uint8Array;

  constructor(
    serverSecret: string,
    jwtSecret: string | null,
    private readonly now: () => Date,
  ) {
    this.key = jwtSecret
      ? new TextEncoder().encode(jwtSecret)
      : new Uint8Array(hkdfSync('sha256', Buffer.from(serverSecret, 'utf8'), 'agent-network', 'jwt-hs256-v1', 32));
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
      .sign(this.key);
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
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALG],
        issuer: ISSUER,
        audience,
        currentDate: this.now(),
        requiredClaims: ['sub', 'exp', 'iat', 'sid'],
      });
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
