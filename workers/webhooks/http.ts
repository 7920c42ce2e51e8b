import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttemptResult } from '../../commands/webhooks/deliver.ts';
import type { Resolver } from '../../commands/webhooks/target.ts';
import { RefusedTarget, resolvePublicTarget } from '../../commands/webhooks/target.ts';
import type { SignatureScheme } from '../../events/webhooks.ts';

export interface SignedRequest {
  url: string;
  body: string;
  event: string;
  agentId: string;
  deliveryId: string;
  attempt: number;
  /** The secrets that sign: the current one first, then the previous one during a rotation's overlap. */
  secrets: string[];
  scheme: SignatureScheme;
  /** Unix seconds from the injected clock. */
  timestamp: number;
  /** The inbox cursor of the delivered entry (null for deliveries queued before cursors). */
  cursor: string | null;
  /** The replay this send belongs to (`X-Svc-Replay`; unsigned, informational). */
  replayId?: string;
}

const hmacHex = (secret: string, message: string) => createHmac('sha256', Buffer.from(secret, 'utf8')).update(message, 'utf8').digest('hex');

/**
 * The Standard Webhooks key: the base64 after `whsec_` (Node's decoder also reads the URL-safe
 * alphabet of secrets issued before the Standard Webhooks scheme).
 */
export const standardWebhooksKey = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/**
 * The headers of docs/WEBHOOKS.md for each scheme. Every valid secret signs: `delivery_timestamped`
 * lists its signatures in `X-Svc-Signature` (comma-separated), `standard_webhooks` in
 * `webhook-signature` (space-separated, per the specification); the two earlier schemes keep one
 * signature in `X-Svc-Signature` (the current secret, as receivers of them expect) and put the
 * previous secret's in `X-Svc-Signature-Previous`.
 */
export function signedHeaders(r: SignedRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'agent-network-webhooks/1',
    'x-svc-event': r.event,
    'x-svc-delivery': r.deliveryId,
    'x-svc-attempt': String(r.attempt),
  };
  if (r.cursor !== null) headers['x-svc-cursor'] = r.cursor;
  if (r.replayId) headers['x-svc-replay'] = r.replayId;
  const [current, ...previous] = r.secrets;
  switch (r.scheme) {
    case 'body': {
      headers['x-svc-signature'] = `sha256=${hmacHex(current, r.body)}`;
      if (previous.length) headers['x-svc-signature-previous'] = previous.map((p) => `sha256=${hmacHex(p, r.body)}`).join(',');
      break;
    }
    case 'timestamped': {
      const signed = `${r.timestamp}.${r.body}`;
      headers['x-svc-timestamp'] = String(r.timestamp);
      headers['x-svc-agent-id'] = r.agentId;
      headers['x-svc-signature'] = `sha256=${hmacHex(current, signed)}`;
      if (previous.length) headers['x-svc-signature-previous'] = previous.map((p) => `sha256=${hmacHex(p, signed)}`).join(',');
      break;
    }
    case 'delivery_timestamped': {
      const signed = `${r.deliveryId}.${r.timestamp}.${r.body}`;
      headers['x-svc-timestamp'] = String(r.timestamp);
      headers['x-svc-agent-id'] = r.agentId;
      headers['x-svc-signature'] = r.secrets.map((k) => `sha256=${hmacHex(k, signed)}`).join(',');
      break;
    }
    case 'standard_webhooks': {
      const signed = `${r.deliveryId}.${r.timestamp}.${r.body}`;
      headers['webhook-id'] = r.deliveryId;
      headers['webhook-timestamp'] = String(r.timestamp);
      headers['webhook-signature'] = r.secrets
        .map((k) => `v1,${createHmac('sha256', standardWebhooksKey(k)).update(signed, 'utf8').digest('base64')}`)
        .join(' ');
      break;
    }
    default: {
      const _exhaustive: never = r.scheme;
      throw new Error(`unknown signature scheme ${String(_exhaustive)}`);
    }
  }
  return headers;
}

export interface SendOptions {
  resolver: Resolver;
  allowLoopback: boolean;
  timeoutMs: number;
}

/**
 * One delivery attempt: resolve and check the target (RefusedTarget: no connection is made),
 * connect to the checked address only (the connection's lookup is pinned to it, TLS still verifies
 * the host name), send, never follow a redirect, give up after `timeoutMs`.
 */
export async function sendWebhook(r: SignedRequest, opts: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  let url: URL;
  let target: { address: string; family: number };
  try {
    url = new URL(r.url);
    target = await resolvePublicTarget(url, opts.resolver, opts.allowLoopback);
  } catch (err) {
    const refused = err instanceof RefusedTarget || err instanceof TypeError;
    return { status_code: null, outcome: refused ? 'refused' : 'failed', error: (err as Error).message, duration_ms: elapsed() };
  }
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const body = Buffer.from(r.body, 'utf8');
  const headers = { ...signedHeaders(r), 'content-length': String(body.length) };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'duration_ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, duration_ms: elapsed() });
    };
    const req = client.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        lookup: pinned,
        agent: false,
        servername: url.hostname.replace(/^\[|\]$/g, ''),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        res.on('error', () => undefined);
        if (status >= 200 && status < 300) finish({ status_code: status, outcome: 'delivered', error: null });
        else if (status === 410) finish({ status_code: status, outcome: 'gone', error: 'HTTP 410 Gone: webhook disabled' });
        else if (status >= 300 && status < 400) finish({ status_code: status, outcome: 'failed', error: `HTTP ${status}: redirects are not followed` });
        else finish({ status_code: status, outcome: 'failed', error: `HTTP ${status}` });
      },
    );
    const timer = setTimeout(() => {
      finish({ status_code: null, outcome: 'failed', error: `timed out after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err) => finish({ status_code: null, outcome: 'failed', error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(body);
  });
}
