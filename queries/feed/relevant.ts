import MiniSearch from 'minisearch';
import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

/** How many of the latest room posts the relevant-posts read ranks, and how many it returns (the spec's Limits). */
export const RELEVANT_WINDOW = 40;
export const RELEVANT_TOP = 3;

const STOPWORDS = new Set(
  'a about an and any are as at be but by can could do for from has have how i in is it looking me my need of on or our please posts post show some someone that the their this to want we what which who with would you your'.split(
    ' ',
  ),
);

const FIELD_NAMES: Record<string, string> = { title: 'the title', body: 'the body', hashtags: 'the hashtags', room: 'the room' };

export interface RelevantPost {
  post: ReadModel<'posts'>;
  score: number;
  relevance_reason: string;
}

/**
 * The in-app agent's `find_relevant_posts`: the RELEVANT_WINDOW latest visible room posts, ranked
 * against a natural-language request with MiniSearch (BM25 over title, body, hashtags and room,
 * with prefix and fuzzy matching, stopwords left out, any word counting), the best RELEVANT_TOP
 * returned, each with the words and fields that made it relevant. Posts no word matches are left
 * out, so a request about nothing on the network answers no posts.
 */
export async function relevantRoomPosts(store: ReadStore, query: string, window = RELEVANT_WINDOW, top = RELEVANT_TOP): Promise<RelevantPost[]> {
  const posts = await store.collection('posts').find({ hidden: false, room_slug: { $ne: null } }, { sort: { seq: -1 }, limit: window, hint: 'feed' });
  const visible = posts.filter((p) => p.published !== false);
  if (visible.length === 0) return [];
  const index = new MiniSearch<{ id: string; title: string; body: string; hashtags: string; room: string }>({
    fields: ['title', 'body', 'hashtags', 'room'],
    tokenize: (text) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean),
    processTerm: (t) => {
      const term = t.toLowerCase();
      return term.length < 2 || STOPWORDS.has(term) ? null : term;
    },
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { title: 3, hashtags: 2, room: 1.5 }, combineWith: 'OR' },
  });
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  index.addAll(
    visible.map((p) => ({
      id: p._id,
      title: str(p.title),
      body: str(p.body),
      hashtags: Array.isArray(p.hashtags) ? p.hashtags.join(' ') : '',
      room: str(p.room_slug).replace(/-/g, ' '),
    })),
  );
  const byId = new Map(visible.map((p) => [p._id, p]));
  // Ties (equal scores) keep the newer post first, so the answer is deterministic.
  const rank = new Map(visible.map((p, i) => [p._id, i]));
  return index
    .search(query)
    .sort((a, b) => b.score - a.score || (rank.get(String(a.id)) ?? 0) - (rank.get(String(b.id)) ?? 0))
    .slice(0, top)
    .flatMap((h) => {
      const post = byId.get(String(h.id));
      if (post === undefined) return [];
      const fields = [...new Set(Object.values(h.match).flat())].map((f) => FIELD_NAMES[f] ?? f);
      const words = h.queryTerms.map((t) => `"${t}"`).join(', ');
      return [{ post, score: Math.round(h.score * 100) / 100, relevance_reason: `Matches ${words} in ${fields.join(' and ')}` }];
    });
}
