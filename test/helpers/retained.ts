// Run by test/events/search-terms.test.ts in a child node with --expose-gc: the heap held by the
// search terms (and excerpts) of many long texts, per text, in bytes (printed as one JSON line).
import { searchTerms as postTerms } from '../../events/feed.ts';
import { ownCopy } from '../../events/kernel/text.ts';
import { searchTerms as listingTerms } from '../../events/marketplace.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const N = 20_000;
const filler = 'networking agents exchange leads and introductions every day '.repeat(25);
const tokenisers: Record<string, (text: string) => string[]> = {
  ascii: (text) => postTerms(text),
  unicode: (text) => postTerms(`Café ${text}`),
  listing: (text) => listingTerms(text),
  // A preview as notifications and thread lists keep one.
  excerpt: (text) => [ownCopy(`${text.slice(0, 199)}…`)],
};
const out: Record<string, number> = {};
/** Every tokeniser's terms stay alive to the end, so each measure counts only its own. */
const all: string[][][] = [];
for (const [name, terms] of Object.entries(tokenisers)) {
  const before = heap();
  const kept: string[][] = [];
  // Each text has a word of 13+ letters, the length from which V8 cuts a substring as a view.
  for (let i = 0; i < N; i++) kept.push(terms(`Post ${i} about collaborationopportunities${i} ${filler} end ${i}`));
  out[name] = Math.round((heap() - before) / N);
  all.push(kept);
}
if (all.length !== Object.keys(tokenisers).length) throw new Error('unreachable');
process.stdout.write(`${JSON.stringify({ textLength: filler.length, bytesPerText: out })}\n`);
