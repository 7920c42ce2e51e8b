import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two hex keyed hashes. The handler computes the keyed hash of what was
 * presented (a code, a refresh token id) before deciding; the decider compares it with the stored one.
 */
export function sameHash(presented: string, stored: string): boolean {
  const a = Buffer.from(presented, 'hex');
  const b = Buffer.from(stored, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
