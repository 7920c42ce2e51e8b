import ipaddr from 'ipaddr.js';

/**
 * Names that never denote a public host, whatever they resolve to (RFC 6761 `localhost`, mDNS
 * `.local`, `.internal` cloud names, RFC 8375 `.home.arpa`); a trailing dot is ignored, so
 * `localhost.` is `localhost`.
 */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];

/** The URL's host as a bare lower-case name or address: IPv6 brackets and trailing dots removed. */
export function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
}

/** True for a host name (not an address) that is local by its form alone. */
export function isLocalName(host: string): boolean {
  if (host === 'localhost' || host === 'localdomain') return true;
  // A single-label name (`https://vm/`) is completed by the resolver's search list or hosts file:
  // never a public host.
  if (!host.includes('.')) return true;
  return LOCAL_SUFFIXES.some((s) => host.endsWith(s));
}

/** The address when `host` is an IP literal (IPv4 or IPv6, no zone), else null. */
export function parseAddress(host: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (host.includes('%')) return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host);
  const v6 = hexTail(host);
  if (v6 !== null && ipaddr.IPv6.isValid(v6)) return ipaddr.IPv6.parse(v6);
  return null;
}

/**
 * An IPv6 literal with its dotted IPv4 tail (`::a.b.c.d`, `::ffff:a.b.c.d`) written as two hex
 * groups: ipaddr.js reads every dotted tail as IPv4-mapped, so `::8.8.8.8` (IPv4-compatible)
 * would pass for `::ffff:8.8.8.8`. Null when the tail is not a four-part decimal IPv4 address.
 */
function hexTail(host: string): string | null {
  const m = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (!m) return host.includes('.') ? null : host;
  if (!ipaddr.IPv4.isValidFourPartDecimal(m[2])) return null;
  const [a, b, c, d] = ipaddr.IPv4.parse(m[2]).octets;
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** True when `host` is written as an IP address (zone-scoped IPv6 included). */
export function isAddressLiteral(host: string): boolean {
  return parseAddress(host) !== null || (host.includes('%') && ipaddr.IPv6.isValid(host.split('%')[0]));
}

// IANA's global unicast allocation for IPv6: everything outside it (::/8 with its IPv4-compatible
// and translated forms, 100::/8, 4000::/2, ...) is reserved or special-purpose.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

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
  const host = bareHost(url);
  if (isAddressLiteral(host)) return isPublicAddress(host) ? null : 'webhook_url must point to a public address';
  if (isLocalName(host)) return 'webhook_url must point to a public host';
  return null;
}

/**
 * True for globally routable unicast addresses only, classified by ipaddr.js against the IANA
 * special-purpose registries: IPv4 `range()` must be `unicast` (so private, loopback, link-local,
 * CGNAT, documentation 192.0.2/24, 198.51.100/24, 203.0.113/24, benchmarking 198.18/15, 192.0.0/24,
 * the 6to4 relay 192.88.99/24, AS112, AMT, multicast, 240/4 and broadcast are refused); IPv6 must be
 * `unicast` and inside 2000::/3 (so 6to4 2002::/16 and Teredo 2001::/32 with whatever IPv4 they
 * embed, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, IPv4-compatible ::/96, SIIT ::ffff:0:0/96,
 * documentation 2001:db8::/32 and 3fff::/20, benchmarking, ORCHID, discard, ULA, link-local and
 * multicast are refused). An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address it maps.
 */
export function isPublicAddress(address: string): boolean {
  const ip = parseAddress(address.toLowerCase());
  if (!ip) return false;
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST_V6);
}

/** True for a loopback address: 127/8, ::1, or an IPv4-mapped form of 127/8. */
export function isLoopbackAddress(address: string): boolean {
  const ip = parseAddress(address.toLowerCase());
  if (!ip) return false;
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) return (ip as ipaddr.IPv6).toIPv4Address().range() === 'loopback';
  return ip.range() === 'loopback';
}
