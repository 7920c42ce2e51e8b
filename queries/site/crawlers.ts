import type { ReadStore } from '../../projections/store/port.ts';
import { PUBLIC_AGENTS } from '../agents/agents.ts';
import { listRooms } from '../feed/rooms.ts';

export type SitemapKind = 'agents' | 'rooms' | 'posts';

/** How many public URLs each sitemap holds (ghosted or deactivated agents and their posts, hidden rooms excluded). */
export async function sitemapCounts(store: ReadStore): Promise<Record<SitemapKind, number>> {
  const [agents, rooms, posts] = await Promise.all([
    store.collection('agents').count({ ...PUBLIC_AGENTS }),
    listRooms(store),
    store.collection('feed_counters').findOne({ _id: 'all' }),
  ]);
  return { agents, rooms: rooms.length, posts: posts?.visible ?? 0 };
}

/** One sitemap page, oldest first so pages stay stable as content grows (index-served). */
export async function sitemapPage(store: ReadStore, kind: SitemapKind, skip: number, limit: number) {
  if (kind === 'rooms') return (await listRooms(store)).slice(skip, skip + limit);
  if (kind === 'posts') return store.collection('posts').find({ hidden: false }, { sort: { seq: 1 }, skip, limit, projection: { _id: 1, published_at: 1 } });
  return store.collection('agents').find({ ...PUBLIC_AGENTS }, { sort: { seq: 1 }, skip, limit, projection: { _id: 1, last_active_at: 1, created_at: 1 } });
}
