import type { Cursor } from '../cursor.ts';
import { listPage } from '../cursor.ts';
import type { ReadStore } from '../../projections/store/port.ts';

/** Active-profile counts of one kind (region or industry), largest first (index `by_kind`). */
export async function profileCounts(store: ReadStore, kind: 'region' | 'industry') {
  const docs = await store.collection('profile_stats').find({ kind }, { sort: { kind: 1, key: 1 }, hint: 'by_kind' });
  return docs
    .filter((d) => Number(d.count) > 0)
    .map((d) => ({ [kind]: String(d.key), count: Number(d.count) }))
    .sort((a, b) => b.count - a.count);
}

export const pitchDeck = (store: ReadStore) => store.collection('site_settings').findOne({ _id: 'pitch_deck' });

/** The partner leads, newest first, paged by the one cursor (queries/cursor.ts listPage). */
export async function partnerLeads(store: ReadStore, skip: number, limit: number, after?: Cursor) {
  const col = store.collection('partner_leads');
  const [page, total] = await Promise.all([listPage(col, { all: true }, { skip, limit, after }), col.count({ all: true }, { hint: 'all' })]);
  const docs = page.docs;
  return {
    total,
    next_cursor: page.next_cursor,
    has_more: page.has_more,
    poll_cursor: page.poll_cursor,
    leads: docs.map((d) => ({
      lead_id: d._id,
      name: d.name,
      email: d.email,
      company: d.company,
      role: d.role,
      message: d.message,
      submitted_at: d.submitted_at,
    })),
  };
}

/** Views per path and per day, and unique sessions per day, over the days from `sinceDay`. */
export async function pageViewStats(store: ReadStore, sinceDay: string) {
  const days = await store.collection('page_view_days').find({ all: true, day: { $gte: sinceDay } }, { sort: { all: 1, day: -1 }, hint: 'by_day' });
  const perPath = new Map<string, number>();
  const perDay = new Map<string, number>();
  for (const d of days) {
    perPath.set(String(d.path), (perPath.get(String(d.path)) ?? 0) + Number(d.views));
    perDay.set(String(d.day), (perDay.get(String(d.day)) ?? 0) + Number(d.views));
  }
  const sessions = await store.collection('page_view_sessions').find({ day: { $gte: sinceDay } }, { hint: 'by_day' });
  const uniquePerDay = new Map<string, number>();
  for (const s of sessions) uniquePerDay.set(String(s.day), (uniquePerDay.get(String(s.day)) ?? 0) + 1);
  return {
    since: sinceDay,
    total_views: [...perDay.values()].reduce((a, b) => a + b, 0),
    unique_sessions: sessions.length,
    views_per_path: [...perPath].map(([path, views]) => ({ path, views })).sort((a, b) => b.views - a.views || (a.path < b.path ? -1 : 1)),
    views_per_day: [...perDay]
      .map(([date, views]) => ({ date, views, unique_sessions: uniquePerDay.get(date) ?? 0 }))
      .sort((a, b) => (a.date < b.date ? -1 : 1)),
  };
}
