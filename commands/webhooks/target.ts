import { lookup as dnsLookup } from 'node:dns/promises';
import { bareHost, checkWebhookUrl, isAddressLiteral, isLocalName, isLoopbackAddress, isPublicAddress } from '../agents/webhook-url.ts';

/** Resolves a host name to every address it has (the worker's is injectable for tests). */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Configuration-time check of a webhook URL. `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK=1, tests only)
 * additionally admits http and https URLs whose host is a literal loopback address; nothing else.
 */
export function checkWebhookTarget(raw: string, allowLoopback: boolean): string | null {
  if (allowLoopback) {
    try {
      const url = new URL(raw);
      const host = bareHost(url);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackAddress(host) && !url.username && !url.password) return null;
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
export async function resolvePublicTarget(
  url: URL,
  resolver: Resolver,
  allowLoopback: boolean,
  /** Plain http to public hosts too (link previews fetch public pages; webhooks stay https only). */
  opts: { allowHttp?: boolean } = {},
): Promise<{ address: string; family: number }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedTarget('webhook_url must use https');
  if (url.username || url.password) throw new RefusedTarget('webhook_url must not carry credentials');
  const host = bareHost(url);
  const admissible = (a: string) => isPublicAddress(a) || (allowLoopback && isLoopbackAddress(a));
  let addresses: Array<{ address: string; family: number }>;
  if (isAddressLiteral(host)) addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  else {
    if (isLocalName(host)) throw new RefusedTarget(`host ${host} is not public`);
    try {
      addresses = await resolver(host);
    } catch (err) {
      throw new Error(`DNS lookup of ${host} failed: ${(err as { code?: string }).code ?? (err as Error).message}`, { cause: err });
    }
  }
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} returned no address`);
  const bad = addresses.find((a) => !admissible(a.address));
  if (bad) throw new RefusedTarget(`${host} resolves to a non-public address (${bad.address})`);
  if (url.protocol === 'http:' && !opts.allowHttp && !(allowLoopback && addresses.every((a) => isLoopbackAddress(a.address))))
    throw new RefusedTarget('webhook_url must use https');
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

/** How the service resolves webhook hosts at configuration time (the deployment's settings). */
export interface TargetCheckOptions {
  resolver: Resolver;
  allowLoopback: boolean;
}

/**
 * The facts every command that sets a webhook URL (registration, `PATCH /api/protocol/me`,
 * `PATCH .../webhook`) carries to its decider: the deployment's loopback allowance and what
 * resolving the URL's host found. Resolution runs only when the literal check passes (a refused
 * URL needs no lookup).
 */
export interface WebhookUrlFacts {
  allow_loopback: boolean;
  /** null: the host resolved to public addresses only, or does not resolve yet. */
  resolution_problem: string | null;
}

export async function webhookUrlFacts(url: string | null | undefined, opts: TargetCheckOptions): Promise<WebhookUrlFacts> {
  const resolution = url && checkWebhookTarget(url, opts.allowLoopback) === null ? await checkResolvedTarget(url, opts.resolver, opts.allowLoopback) : null;
  return { allow_loopback: opts.allowLoopback, resolution_problem: resolution };
}

/** The one configuration-time rule for a webhook URL (pure): the literal check, then what resolution found. */
export function webhookUrlProblem(url: string, facts: WebhookUrlFacts): string | null {
  return checkWebhookTarget(url, facts.allow_loopback) ?? facts.resolution_problem;
}
