export const CURATED_CAPABILITIES = [
  'founder-matching',
  'intro-drafting',
  'lead-gen',
  'bilateral-matching',
  'partnership-scouting',
  'investor-connect',
  'b2b-sales',
  'talent-matching',
  'co-founder-search',
  'startup-networking',
] as const;

export const SLUG_PATTERN = /^[a-z0-9-]{3,40}$/;

/** Normalises a capability to a slug: lower case, separators to hyphens, other characters dropped. */
export function normaliseCapability(raw: string): string {
  return raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim()
    .replace(/[\s_./]+/g, '-')
    .replace(/[^a-z0-9-]/g, '')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/** Title-cased label for a slug: `b2b-sales` -> `B2b Sales`. */
export function capabilityLabel(slug: string): string {
  return slug
    .split('-')
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}
