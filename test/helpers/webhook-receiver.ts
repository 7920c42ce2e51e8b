// A webhook receiver written from docs/WEBHOOKS.md only (it imports nothing of the service):
// raw body first, timestamp within 300 s of its own clock, HMAC-SHA256 of the scheme's signed
// bytes with each accepted secret, any of the header's signatures matching in constant time,
// duplicates dropped by X-Svc-Delivery. `verifyWebhook` is the docs' Node.js example, typed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Scheme = 'delivery_timestamped' | 'standard_webhooks' | 'timestamped' | 'body';

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  verified: boolean;
  reason: string | null;
  duplicate: boolean;
}

/** The docs' verifier: true when any signature of the headers matches any of `secrets`. */
export function verifyWebhook(scheme: Scheme, secrets: string[], headers: http.IncomingHttpHeaders, rawBody: Buffer, nowSeconds: number): boolean {
  const h = (name: string) => String(headers[name] ?? '');
  const standard = scheme === 'standard_webhooks';
  const ts = standard ? h('webhook-timestamp') : h('x-svc-timestamp');
  if (scheme !== 'body' && (!/^\d+$/.test(ts) || Math.abs(nowSeconds - Number(ts)) > 300)) return false;
  const prefix = {
    delivery_timestamped: `${h('x-svc-delivery')}.${ts}.`,
    standard_webhooks: `${h('webhook-id')}.${ts}.`,
    timestamped: `${ts}.`,
    body: '',
  }[scheme];
  const candidates = standard
    ? h('webhook-signature')
        .split(' ')
        .filter((s) => s.startsWith('v1,'))
        .map((s) => Buffer.from(s.slice(3), 'base64'))
    : [h('x-svc-signature'), h('x-svc-signature-previous')]
        .flatMap((v) => v.split(','))
        .map((s) => s.trim().replace(/^sha256=/, ''))
        .filter((s) => /^[0-9a-f]{64}$/.test(s))
        .map((s) => Buffer.from(s, 'hex'));
  return secrets.some((secret) => {
    const key = standard ? Buffer.from(secret.replace(/^whsec_/, ''), 'base64') : Buffer.from(secret, 'utf8');
    const expected = createHmac('sha256', key).update(prefix).update(rawBody).digest();
    return candidates.some((c) => c.length === expected.length && timingSafeEqual(c, expected));
  });
}

/** Why a delivery is refused (the receiver's 401 body), or null when it verifies. */
export function refusal(scheme: Scheme, secrets: string[], headers: http.IncomingHttpHeaders, rawBody: Buffer, nowSeconds: number): string | null {
  if (verifyWebhook(scheme, secrets, headers, rawBody, nowSeconds)) return null;
  const ts = String(headers[scheme === 'standard_webhooks' ? 'webhook-timestamp' : 'x-svc-timestamp'] ?? '');
  if (scheme !== 'body' && !/^\d+$/.test(ts)) return 'missing timestamp';
  if (scheme !== 'body' && Math.abs(nowSeconds - Number(ts)) > 300) return 'timestamp outside the 5 minute window';
  return 'bad signature';
}

/** The JSON body of a delivery (docs/WEBHOOKS.md). */
export interface WebhookBody {
  event: string;
  agent_id: string;
  data: Record<string, unknown>;
  timestamp: string;
  cursor?: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Verified, first-seen deliveries (duplicates dropped), as parsed JSON. */
  accepted: Array<{ delivery: string; body: WebhookBody }>;
  /** The secrets the receiver accepts (current first). */
  secrets: string[];
  scheme: Scheme;
  /** Status to answer per incoming request (consumed in order), then `fallback`. */
  script: number[];
  fallback: number;
  /** Where a 302 answer points. */
  redirectTo: string;
  hang: boolean;
  close(): Promise<void>;
}

export async function startReceiver(opts: { secret: string; now: () => number; path?: string; scheme?: Scheme }): Promise<Receiver> {
  const seen = new Set<string>();
  const sockets = new Set<Socket>();
  const r = {
    received: [] as Received[],
    accepted: [] as Array<{ delivery: string; body: WebhookBody }>,
    secrets: [opts.secret],
    scheme: (opts.scheme ?? 'timestamped') as Scheme,
    script: [] as number[],
    fallback: 200,
    redirectTo: 'http://127.0.0.1:1/',
    hang: false,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const reason = refusal(r.scheme, r.secrets, req.headers, raw, Math.floor(opts.now() / 1000));
      const delivery = String(req.headers['x-svc-delivery'] ?? '');
      const duplicate = reason === null && seen.has(delivery);
      r.received.push({ headers: req.headers, raw, verified: reason === null, reason, duplicate });
      if (r.hang) return;
      if (reason !== null) {
        res.writeHead(401).end(reason);
        return;
      }
      const status = r.script.length ? (r.script.shift() as number) : r.fallback;
      if (status >= 200 && status < 300 && !duplicate) {
        seen.add(delivery);
        r.accepted.push({ delivery, body: JSON.parse(raw.toString('utf8')) as WebhookBody });
      }
      res.writeHead(status, status === 302 ? { location: r.redirectTo } : {}).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(r, {
    url: `http://127.0.0.1:${port}${opts.path ?? '/hook'}`,
    port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** A canary: counts every TCP connection it receives (it must stay at zero). */
export async function startCanary(): Promise<{ port: number; hits: () => number; close(): Promise<void> }> {
  const net = await import('node:net');
  let hits = 0;
  const server = net.createServer((s) => {
    hits++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { port, hits: () => hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Polls `fn` until it returns something truthy; the deadline only bounds a failure. */
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 120_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
