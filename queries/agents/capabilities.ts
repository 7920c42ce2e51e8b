import MiniSearch from 'minisearch';
import { CURATED_CAPABILITIES } from '../../events/capabilities.ts';
import type { ReadStore } from '../../projections/store/port.ts';
import { publicRooms } from '../feed/posts.ts';

/**
 * Capability suggestions from the public rooms (one per capability): without a query the rooms in
 * their listed order; with one, a fuzzy prefix search over slug, label and description (the slug
 * weighs most), best first, at most `limit`.
 */
export async function suggestCapabilities(store: ReadStore, q: string, limit: number) {
  const rooms = await publicRooms(store);
  const curated = new Set<string>(CURATED_CAPABILITIES);
  const toSuggestion = (r: (typeof rooms)[number], score?: number) => ({
    slug: r._id,
    label: r.label,
    curated: curated.has(r._id),
    agent_count: r.agent_count ?? 0,
    ...(score !== undefined ? { score: Math.round(score * 100) / 100 } : {}),
  });
  if (!q) return rooms.slice(0, limit).map((r) => toSuggestion(r));
  const index = new MiniSearch<{ id: string; slug: string; label: string; description: string }>({
    fields: ['slug', 'label', 'description'],
    tokenize: (text) => text.split(/[\s\-_]+/).filter(Boolean),
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { slug: 3, label: 2 } },
  });
  index.addAll(rooms.map((r) => ({ id: r._id, slug: r._id, label: String(r.label), description: String(r.description ?? '') })));
  const byId = new Map(rooms.map((r) => [r._id, r]));
  const suggestions = [];
  for (const h of index.search(q.toLowerCase())) {
    const r = byId.get(String(h.id));
    if (r) suggestions.push(toSuggestion(r, h.score));
    if (suggestions.length >= limit) break;
  }
  return suggestions;
}
