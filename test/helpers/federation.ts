import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROOF_PATH } from '../../api/routes/federation/federation.ts';
import type { TestService } from './service.ts';

/**
 * A peer network's web server on a loopback port (the service must run with
 * WEBHOOK_ALLOW_LOOPBACK=1), serving the proof of control for `body`: the token is learnt from a
 * first registration's 403 `peer_unverified`, as a partner learns it. Register `{...body,
 * base_url}` to lock the origin; `close` stops the server.
 */
export async function peerWithProof(svc: TestService, body: { name: string; contact_email: string; public_key?: string | null }) {
  let text = '';
  const server = http.createServer((req, res) => {
    if (req.url !== PROOF_PATH) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base_url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const challenge = await svc.req('POST', '/api/federation/register', { body: { ...body, base_url } });
  if (challenge.status !== 403) throw new Error(`expected 403 peer_unverified, got ${challenge.status} ${challenge.text}`);
  text = `${challenge.body.proof_token as string}\n`;
  return { base_url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
