// A webhook receiver written from docs/WEBHOOKS.md only: raw body first, timestamp within 300 s
// of its own clock, HMAC-SHA256 of `<timestamp>.<raw body>` (variant B) or of the body (variant A)
// keyed by the whole secret, constant-time comparison, duplicates dropped by X-Svc-Delivery.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  verified: boolean;
  reason: string | null;
  duplicate: boolean;
}

export function verifyWebhook(secret: string, headers: http.IncomingHttpHeaders, rawBody: Buffer, nowSeconds: number, variant: 'B' | 'A' = 'B'): string | null {
  const sig = String(headers['x-svc-signature'] ?? '').replace(/^sha256=/, '');
  let message: Buffer;
  if (variant === 'B') {
    const ts = String(headers['x-svc-timestamp'] ?? '');
    if (!/^\d+$/.test(ts)) return 'missing timestamp';
    if (Math.abs(nowSeconds - Number(ts)) > 300) return 'timestamp outside the 5 minute window';
    message = Buffer.concat([Buffer.from(`${ts}.`, 'utf8'), rawBody]);
  } else {
    message = rawBody;
  }
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(message).digest();
  const given = /^[0-9a-f]{64}$/.test(sig) ? Buffer.from(sig, 'hex') : Buffer.alloc(0);
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bad signature';
}

/** The JSON body of a delivery (docs/WEBHOOKS.md). */
export interface WebhookBody {
  event: string;
  agent_id: string;
  data: Record<string, unknown>;
  timestamp: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Verified, first-seen deliveries (duplicates dropped), as parsed JSON. */
  accepted: Array<{ delivery: string; body: WebhookBody }>;
  secret: string;
  variant: 'A' | 'B';
  /** Status to answer per incoming request (consumed in order), then `fallback`. */
  script: number[];
  fallback: number;
  /** Where a 302 answer points. */
  redirectTo: string;
  hang: boolean;
  close(): Promise<void>;
}

export async function startReceiver(opts: { secret: string; now: () => number; path?: string }): Promise<Receiver> {
  const seen = new Set<string>();
  const sockets = new Set<Socket>();
  const r = {
    received: [] as Received[],
    accepted: [] as Array<{ delivery: string; body: WebhookBody }>,
    secret: opts.secret,
    variant: 'B' as 'A' | 'B',
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
      const reason = verifyWebhook(r.secret, req.headers, raw, Math.floor(opts.now() / 1000), r.variant);
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
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
