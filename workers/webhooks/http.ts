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
  secret: string;
  scheme: SignatureScheme;
  /** Unix seconds from the injected clock. */
  timestamp: number;
}

/** The headers of docs/WEBHOOKS.md: variant B (`timestamped`, default) or variant A (`body`). */
export function signedHeaders(r: SignedRequest): Record<string, string> {
  const key = Buffer.from(r.secret, 'utf8');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'agent-network-webhooks/1',
    'x-svc-event': r.event,
    'x-svc-delivery': r.deliveryId,
    'x-svc-attempt': String(r.attempt),
  };
  if (r.scheme === 'body') {
    headers['x-svc-signature'] = `sha256=${createHmac('sha256', key).update(r.body, 'utf8').digest('hex')}`;
  } else {
    headers['x-svc-timestamp'] = String(r.timestamp);
    headers['x-svc-agent-id'] = r.agentId;
    headers['x-svc-signature'] = `sha256=${createHmac('sha256', key).update(`${r.timestamp}.${r.body}`, 'utf8').digest('hex')}`;
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
