// Verifies a dispute ruling offline: node verify-ruling.mjs ruling.json service-key.json
// ruling.json: the answer of GET /api/contracts/{id}/ruling; service-key.json: GET /.well-known/service-key.json.
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';

const { ruling, signature } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const jwk = JSON.parse(readFileSync(process.argv[3], 'utf8')).keys.find((k) => k.kid === signature.kid);
const ok =
  !!jwk && verify(null, Buffer.from(canonicalize(ruling), 'utf8'), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature.value, 'base64url'));
console.log(ok ? `valid: ${ruling.contract_id} ruled ${ruling.outcome} by ${ruling.ruled_by} at ${ruling.ruled_at}` : 'INVALID signature');
process.exit(ok ? 0 : 1);
