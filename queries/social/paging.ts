import type { Collection, Filter } from '../../projections/store/port.ts';
import type { Cursor, Pageable } from '../cursor.ts';
import { cursorOf } from '../cursor.ts';

export interface CursorPage<T extends Pageable> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * One page of `filter`, newest first by `seq` (each document of these lists is written by its own
 * event, so `seq` alone orders them); after `cursor` when given. Served by an index on the
 * filter's fields then `seq: -1`.
 */
export async function pageBySeq<T extends Pageable>(
  collection: Collection<T>,
  filter: Filter,
  opts: { cursor: Cursor | null; limit: number; hint?: string },
): Promise<CursorPage<T>> {
  const f = opts.cursor ? { ...filter, seq: { $lt: opts.cursor.position } } : filter;
  const docs = await collection.find(f, { sort: { seq: -1 }, limit: opts.limit + 1, ...(opts.hint ? { hint: opts.hint } : {}) });
  const has_more = docs.length > opts.limit;
  const items = has_more ? docs.slice(0, opts.limit) : docs;
  const last = items[items.length - 1];
  return { items, has_more, next_cursor: has_more && last ? cursorOf(last) : null };
}
