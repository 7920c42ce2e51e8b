import type { Collection, Doc, Filter } from '../projections/store/port.ts';

/**
 * The one paging cursor of the API (docs/DECISIONS.md "One cursor"). A cursor names a place in a
 * list ordered by log position: the position of the event that wrote the item, and, because one
 * event can write several items of the same list (a matching run writes one `new_match` per match),
 * the item's key as a tie-breaker. Positions are unique, so (position, key) is a total order and a
 * poller that follows `next_cursor` sees every item exactly once, however many share a millisecond.
 *
 * Clients treat cursors as opaque strings (base64url of a small JSON); the format may change.
 */
export interface Cursor {
  /** Log position of the event that wrote the item (`seq` in the read models). */
  position: number;
  /** The item's key (its `_id`), to order items written by the same event. */
  key: string;
}

/** The place before every item of a list; `after=0` names it (read a list from its beginning). */
export const START: Cursor = { position: 0, key: '' };
export const START_CURSOR_TOKEN = '0';

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.position, c.key]), 'utf8').toString('base64url');
}

/** The cursor a client sent, or `null` when it is not one of ours (routes answer 400 `invalid_cursor`). */
export function decodeCursor(raw: string): Cursor | null {
  if (raw === START_CURSOR_TOKEN) return START;
  if (raw.length === 0 || raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2) return null;
    const [position, key] = parsed as unknown[];
    if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) return null;
    if (typeof key !== 'string' || key.length > 256) return null;
    return { position, key };
  } catch {
    return null;
  }
}

/** The cursor of a read-model document that carries its event's position in `seq`. */
export function cursorOf(doc: { _id: string; seq?: unknown }): string {
  return encodeCursor({ position: typeof doc.seq === 'number' ? doc.seq : 0, key: doc._id });
}

/** One page of a list in cursor order, and where the next poll resumes. */
export interface CursorPage {
  docs: Doc[];
  /** Pass as `after` to get what comes after this page (the last item's cursor, or `after` when the page is empty). */
  next_cursor: string;
  /** More items exist after `next_cursor` now. */
  has_more: boolean;
}

export const CURSOR_ORDER = { seq: 1, _id: 1 } as const;

/** `filter` narrowed to the items after `after` in cursor order: a range on `seq`, the tie on `_id` tested. */
export function afterFilter(filter: Filter, after: Cursor): Filter {
  return { ...filter, seq: { $gte: after.position }, $or: [{ seq: { $gt: after.position } }, { _id: { $gt: after.key } }] };
}

/**
 * The items of `filter` after `after`, oldest first, in (seq, _id) order. Served by an index
 * `{...equality fields, seq: 1, _id: 1}` (the lower bound on `seq` is a range on it; the tie
 * condition is tested on the few items of the cursor's own position only).
 */
export async function pageAfter(collection: Collection, filter: Filter, after: Cursor, limit: number, hint?: string): Promise<CursorPage> {
  const docs = await collection.find(afterFilter(filter, after), { sort: CURSOR_ORDER, limit: limit + 1, ...(hint ? { hint } : {}) });
  const has_more = docs.length > limit;
  if (has_more) docs.length = limit;
  const last = docs[docs.length - 1];
  return { docs, has_more, next_cursor: last ? cursorOf(last) : encodeCursor(after) };
}

/**
 * Where a poller resumes after a newest-first page: its newest item's cursor, or the list's
 * beginning when the page is empty.
 */
export function headCursor(newestFirst: Doc[]): string {
  const newest = newestFirst[0];
  return newest ? cursorOf(newest) : encodeCursor(START);
}

/**
 * The items of `filter` created after the instant `since`, oldest first, in (created_at, seq, _id)
 * order. A page never ends inside a millisecond: when the `limit`th item shares its `created_at`
 * with the next one, the page takes the whole millisecond, so the next poll with `since` = the
 * last `created_at` seen misses nothing (a page may then exceed `limit` by one burst).
 */
export async function pageSince(collection: Collection, filter: Filter, since: string, limit: number, hint?: string): Promise<CursorPage> {
  const sort = { created_at: 1, seq: 1, _id: 1 } as const;
  const opts = hint ? { hint } : {};
  let docs = await collection.find({ ...filter, created_at: { $gt: since } }, { sort, limit: limit + 1, ...opts });
  let has_more = docs.length > limit;
  if (has_more) {
    const edge = docs[limit - 1].created_at;
    if (docs[limit].created_at === edge) {
      const millisecond = await collection.find({ ...filter, created_at: edge }, { sort, ...opts });
      docs = [...docs.slice(0, limit).filter((d) => d.created_at !== edge), ...millisecond];
      has_more = (await collection.find({ ...filter, created_at: { $gt: edge } }, { sort, limit: 1, ...opts })).length > 0;
    } else {
      docs.length = limit;
    }
  }
  const last = docs[docs.length - 1];
  if (last) return { docs, has_more, next_cursor: cursorOf(last) };
  // Nothing after `since`: resume after the last item at or before it.
  const before = await collection.find({ ...filter, created_at: { $lte: since } }, { sort: { created_at: -1, seq: -1, _id: -1 }, limit: 1, ...opts });
  return { docs, has_more, next_cursor: before[0] ? cursorOf(before[0]) : encodeCursor(START) };
}

/** A cursor-paged list: `after` (oldest first), `since` (oldest first, tie-safe) or the newest page (newest first). */
export async function listPage(
  collection: Collection,
  filter: Filter,
  opts: { since?: string; after?: Cursor; limit: number; skip?: number },
): Promise<CursorPage> {
  if (opts.after) return pageAfter(collection, filter, opts.after, opts.limit);
  if (opts.since) return pageSince(collection, filter, opts.since, opts.limit);
  const skip = opts.skip ?? 0;
  const docs = await collection.find(filter, { sort: { seq: -1, _id: -1 }, skip, limit: opts.limit });
  // A later page (`page` > 0) has newer items before it: they come after its newest item.
  return { docs, next_cursor: headCursor(docs), has_more: skip > 0 };
}
