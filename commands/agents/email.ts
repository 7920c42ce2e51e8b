import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const disposable = new Set<string>(require('disposable-email-domains') as string[]);
const disposableWildcards = require('disposable-email-domains/wildcard.json') as string[];

// Providers that ignore dots in the local part (Gmail and its alias domain).
const DOTLESS = new Set(['gmail.com', 'googlemail.com']);
const ALIASES: Record<string, string> = { 'googlemail.com': 'gmail.com' };

/**
 * One agent per owner e-mail: lower-case; every provider's `+tag` removed; for Gmail-style
 * providers dots removed and googlemail folded into gmail.
 */
export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  let local = email.slice(0, at);
  let domain = email.slice(at + 1);
  domain = ALIASES[domain] ?? domain;
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (DOTLESS.has(domain)) local = local.replaceAll('.', '');
  return `${local}@${domain}`;
}

export function isDisposableDomain(email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (disposable.has(domain)) return true;
  return disposableWildcards.some((w) => domain === w || domain.endsWith(`.${w}`));
}

/** A pragmatic address check (the JSON Schema `email` format does the rest). */
export function looksLikeEmail(raw: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw.trim()) && raw.length <= 254;
}
