import { expect } from 'chai';
import net from 'node:net';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';

// Issue 22, item 7: a request with two X-API-Key headers gets the same 401 as any wrong key,
// WWW-Authenticate included. Sent over a raw socket: HTTP clients merge repeated headers.

/** Sends one raw HTTP/1.1 request and returns its status line, headers (lower-cased) and body. */
function raw(
  svc: TestService,
  method: string,
  path: string,
  headerLines: string[],
  body = '',
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const u = new URL(svc.url);
  const request = [
    `${method} ${path} HTTP/1.1`,
    'Host: test',
    ...headerLines,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => socket.end(request));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

describe('api: two X-API-Key headers', () => {
  let svc: TestService;
  let a: { agent_id: string; api_key: string };
  let b: { agent_id: string; api_key: string };
  before(async () => {
    svc = await startTestService();
    a = await svc.register();
    b = await svc.register();
  });
  after(() => svc.stop());

  const routes: Array<[string, string, string]> = [
    ['GET', '/api/protocol/me', ''],
    ['GET', '/api/agent/webhooks/health', ''],
    ['POST', '/api/feed/posts', '{"content":"hello"}'],
    ['GET', '/api/feed/posts', ''],
    ['HEAD', '/api/protocol/me', ''],
  ];
  for (const [method, path, body] of routes) {
    it(`answers 401 unauthorized with WWW-Authenticate on ${method} ${path}, whichever keys the two headers carry`, async () => {
      for (const keys of [
        [a.api_key, a.api_key],
        [a.api_key, b.api_key],
        [a.api_key, 'ans_live_wrong'],
        ['', a.api_key],
      ]) {
        const r = await raw(svc, method, path, [...keys.map((k) => `X-API-Key: ${k}`), 'Content-Type: application/json'], body);
        expect(r.status, keys.join(' | ')).to.equal(401);
        expect(r.headers['www-authenticate'], keys.join(' | ')).to.match(/X-API-Key/);
        if (method !== 'HEAD') expect(JSON.parse(r.body)).to.include({ code: 'unauthorized' });
      }
    });
  }
});
