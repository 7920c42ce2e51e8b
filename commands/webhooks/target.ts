import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { checkWebhookUrl, isPublicAddress } from '../agents/webhook-url.ts';

/** Resolves a host name to every address it has (the worker's is injectable for tests). */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

const isLoopback = (address: string) => {
  const a = address.toLowerCase();
  return a === '::1' || /^127\./.test(a) || /^::ffff:127\./.test(a);
};

/**
 * Configuration-time check of a webhook URL. `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK=1, tests only)
 * additionally admits http and https URLs whose host is a literal loopback address; nothing else.
 */
export function checkWebhookTarget(raw: string, allowLoopback: boolean): string | null {
  if (allowLoopback) {
    try {
      const url = new URL(raw);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if ((url.protocol === 'http:' || url.protocol === 'https:') && isIP(host) && isLoopback(host) && !url.username && !url.password) return null;
    } catch {
      // falls through to the full check and its message
    }
  }
  return checkWebhookUrl(raw);
}

export class RefusedTarget extends Error {}

/**
 * The connect-time guard: resolves the host itself and returns the one address to connect to.
 * Every resolved address must be public (one private answer refuses the whole name, so DNS
 * rebinding and mixed answers cannot pass); the caller pins the connection to the returned address.
 */
export async function resolvePublicTarget(url: URL, resolver: Resolver, allowLoopback: boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const admissible = (a: string) => isPublicAddress(a) || (allowLoopback && isLoopback(a));
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal'))
      throw new RefusedTarget(`host ${host} is not public`);
    try {
      addresses = await resolver(host);
    } catch (err) {
      throw new Error(`DNS lookup of ${host} failed: ${(err as { code?: string }).code ?? (err as Error).message}`, { cause: err });
    }
  }
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} returned no address`);
  const bad = addresses.find((a) => !admissible(a.address));
  if (bad) throw new RefusedTarget(`${host} resolves to a non-public address (${bad.address})`);
  if (url.protocol === 'http:' && !(allowLoopback && addresses.every((a) => isLoopback(a.address)))) throw new RefusedTarget('webhook_url must use https');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedTarget('webhook_url must use https');
  return addresses[0];
}

/**
 * Configuration-time resolution: a name that resolves now to a non-public address is refused at
 * once; a name that does not resolve (yet) is accepted, and delivery checks again at connect time.
 */
export async function checkResolvedTarget(raw: string, resolver: Resolver, allowLoopback: boolean): Promise<string | null> {
  try {
    await resolvePublicTarget(new URL(raw), resolver, allowLoopback);
    return null;
  } catch (err) {
    return err instanceof RefusedTarget ? err.message : null;
  }
}
