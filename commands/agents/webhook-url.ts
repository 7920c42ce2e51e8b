import { isIP } from 'node:net';

/**
 * Configuration-time check of a webhook URL: https only, no credentials, and no host that is
 * obviously not public. Delivery re-checks every resolved address at connect time.
 */
export function checkWebhookUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'webhook_url must be an absolute URL';
  }
  if (url.protocol !== 'https:') return 'webhook_url must use https';
  if (url.username || url.password) return 'webhook_url must not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return 'webhook_url must point to a public host';
  }
  if (isIP(host) && !isPublicAddress(host)) return 'webhook_url must point to a public address';
  return null;
}

/** True for globally routable unicast addresses only. */
export function isPublicAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) return isPublicV4(address);
  if (v === 6) {
    const a = address.toLowerCase();
    const mapped = a.match(/^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/) ?? a.match(/^::(\d+\.\d+\.\d+\.\d+)$/);
    if (mapped) return isPublicV4(mapped[1]);
    if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(a)) return false;
    if (a === '::' || a === '::1') return false;
    const first = parseInt(a.split(':')[0] || '0', 16);
    if ((first & 0xfe00) === 0xfc00) return false; // fc00::/7 unique local
    if ((first & 0xffc0) === 0xfe80) return false; // fe80::/10 link-local
    if ((first & 0xff00) === 0xff00) return false; // multicast
    if (a.startsWith('64:ff9b:') || a.startsWith('2001:db8:') || a.startsWith('100::')) return false;
    return (first & 0xe000) === 0x2000; // 2000::/3 global unicast
  }
  return false;
}

function isPublicV4(address: string): boolean {
  const [a, b] = address.split('.').map(Number);
  if (a === 0 || a === 10 || a === 127) return false;
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  if (a === 169 && b === 254) return false; // link-local, cloud metadata
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0) return false;
  if (a === 198 && (b === 18 || b === 19)) return false;
  if (a >= 224) return false; // multicast, reserved, broadcast
  return true;
}
