import { createHash, hkdfSync } from 'node:crypto';
import { createRequire } from 'node:module';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

ed.hashes.sha512 = sha512;

// canonicalize (RFC 8785 JCS) is a CommonJS module exporting the function itself.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (input: unknown) => string | undefined;

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** RFC 8785 (JCS) canonical JSON text: what is hashed and signed, so any verifier gets the same bytes. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** Lower-case hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The first link of every hash chain: 64 zeros. */
export const CHAIN_GENESIS = '0'.repeat(64);

/** One chain link: SHA-256 over the previous hash and the canonical JSON of the entry, `prev + "\n" + jcs(entry)`. */
export function chainLink(previousHash: string, entry: unknown): string {
  return sha256Hex(`${previousHash}\n${canonicalJson(entry)}`);
}

/** The hashes of a chain over `entries` starting at `start` (the previous period's last hash, or genesis). */
export function chainHashes(entries: readonly unknown[], start = CHAIN_GENESIS): string[] {
  const hashes: string[] = [];
  let previous = start;
  for (const entry of entries) {
    previous = chainLink(previous, entry);
    hashes.push(previous);
  }
  return hashes;
}

/** The public half of the service key as a JSON Web Key (RFC 8037). */
export interface ServiceJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/** A detached signature over the canonical JSON of a document. */
export interface ServiceSignature {
  alg: 'EdDSA';
  kid: string;
  /** base64url Ed25519 signature of `canonicalJson(document)`. */
  value: string;
}

/**
 * The service's Ed25519 signing key (rulings, statements). Derived with HKDF from the server
 * secret, so every process of one deployment signs with the same key and the key only changes
 * when SECRET_KEY does; its public half is published at /.well-known/service-key.json.
 */
export class ServiceKey {
  readonly publicKey: Uint8Array;
  readonly kid: string;
  readonly #seed: Uint8Array;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes');
    this.#seed = seed;
    this.publicKey = ed.getPublicKey(seed);
    this.kid = `svc-${createHash('sha256').update(this.publicKey).digest('hex').slice(0, 16)}`;
  }

  static fromServerSecret(secret: string): ServiceKey {
    return new ServiceKey(new Uint8Array(hkdfSync('sha256', secret, 'agent-network', 'service-signing-key/ed25519/v1', 32)));
  }

  jwk(): ServiceJwk {
    return { kty: 'OKP', crv: 'Ed25519', x: b64u(this.publicKey), kid: this.kid, use: 'sig', alg: 'EdDSA' };
  }

  /** Signs the canonical JSON of `document` (deterministic: the same document gives the same signature). */
  sign(document: unknown): ServiceSignature {
    const bytes = new TextEncoder().encode(canonicalJson(document));
    return { alg: 'EdDSA', kid: this.kid, value: b64u(ed.sign(bytes, this.#seed)) };
  }
}

/** Checks a detached signature against a published JWK `x` (base64url public key). */
export function verifyServiceSignature(document: unknown, signature: Pick<ServiceSignature, 'value'>, publicKeyX: string): boolean {
  try {
    const bytes = new TextEncoder().encode(canonicalJson(document));
    return ed.verify(new Uint8Array(Buffer.from(signature.value, 'base64url')), bytes, new Uint8Array(Buffer.from(publicKeyX, 'base64url')));
  } catch {
    return false;
  }
}
