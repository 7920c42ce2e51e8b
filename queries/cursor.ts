import type { Collection, Filter } from '../projections/store/port.ts';

/**
 * The one paging cursor of the API (docs/DECISIONS.md "One cursor", docs/PAGING.md). A cursor names
 * a place in a list ordered by log position: the position of the event that wrote the item, and,
 * because one event can write several items of the same list (a matching run writes one
 * `new_match` per match), the item's key as a tie-breaker. Positions are unique, so (position, key)
 * is a total order and a client that follows `next_cursor` sees every item exactly once, however
 * many share a millisecond.
 *
 * A cursor also carries its direction: `next_cursor` continues in the order of the page that handed
 * it out. From a newest-first page it leads to older items (`older`); from an oldest-first page
 * (`after=0`, `since`, `poll_cursor`) to newer ones.
 *
 * Clients treat cursors as opaque strings (base64url of a small JSON); the format may change.
 */
export interface Cursor {
  /** Log position of the event that wrote the item (`seq` in the read models). */
  position: number;
  /** The item's key (its `_id`), to order items written by the same event. */
  key: string;
  /** True: the items before this place, newest first (the continuation of a newest-first page). */
  older?: boolean;
}

/** The place before every item of a list; `after=0` names it (read a list from its beginning). */
export const START: Cursor = { position: 0, key: '' };
export const START_CURSOR_TOKEN = '0';

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c.older ? [c.position, c.key, -1] : [c.position, c.key]), 'utf8').toString('base64url');
}

/** The cursor a client sent, or `null` when it is not one of ours (routes answer 400 `invalid_cursor`). */
export function decodeCursor(raw: string): Cursor | null {
  if (raw === START_CURSOR_TOKEN) return START;
  if (raw.length === 0 || raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length < 2 || parsed.length > 3) return null;
    const [position, key, direction]: unknown[] = parsed;
    if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) return null;
    if (typeof key !== 'string' || key.length > 256) return null;
    if (parsed.length === 3 && direction !== -1) return null;
    return parsed.length === 3 ? { position, key, older: true } : { position, key };
  } catch {
    return null;
  }
}

/** The cursor of a read-model document that carries its event's position in `seq`. */
export function cursorOf(doc: { _id: string; seq?: unknown }): string {
  return encodeCursor({ position: typeof doc.seq === 'number' ? doc.seq : 0, key: doc._id });
}

/** The cursor of a read-model document that continues a newest-first page after it (towards older items). */
export function olderCursorOf(doc: { _id: string; seq?: unknown }): string {
  return encodeCursor({ position: typeof doc.seq === 'number' ? doc.seq : 0, key: doc._id, older: true });
}

/** One page of a list in cursor order, where the next page continues, and where a poll for newer items resumes. */
/** A document a cursor can page: ordered by its log position `seq` (and `created_at` for `since`). */
export type Pageable = { _id: string; seq?: unknown; created_at?: unknown };

export interface CursorPage<T extends Pageable = Pageable> {
  docs: T[];
  /**
   * Pass as `after` to continue in this page's order: on an oldest-first page the last item's
   * cursor (the request's when the page is empty), on a newest-first page the cursor to the items
   * older than its last one (null when the page is empty and no cursor was given).
   */
  next_cursor: string | null;
  /** More items exist after `next_cursor` (in the page's direction) now. */
  has_more: boolean;
  /** Pass as `after` to get the items newer than every item of this page, oldest first (a poll). */
  poll_cursor: string;
}

export const CURSOR_ORDER = { seq: 1, _id: 1 } as const;
const NEWEST_FIRST = { seq: -1, _id: -1 } as const;

/** `filter` narrowed to the items after `after` in cursor order: a range on `seq`, the tie on `_id` tested. */
export function afterFilter(filter: Filter, after: Cursor): Filter {
  return { ...filter, seq: { $gte: after.position }, $or: [{ seq: { $gt: after.position } }, { _id: { $gt: after.key } }] };
}

/** `filter` narrowed to the items before `before` in cursor order (the continuation of a newest-first page). */
export function beforeFilter(filter: Filter, before: Cursor): Filter {
  return { ...filter, seq: { $lte: before.position }, $or: [{ seq: { $lt: before.position } }, { _id: { $lt: before.key } }] };
}

/**
 * The items of `filter` after `after`, oldest first, in (seq, _id) order. Served by an index
 * `{...equality fields, seq: 1, _id: 1}` (the lower bound on `seq` is a range on it; the tie
 * condition is tested on the few items of the cursor's own position only).
 */
export async function pageAfter<T extends Pageable>(
  collection: Collection<T>,
  filter: Filter,
  after: Cursor,
  limit: number,
  hint?: string,
): Promise<CursorPage<T>> {
  const docs = await collection.find(afterFilter(filter, after), { sort: CURSOR_ORDER, limit: limit + 1, ...(hint ? { hint } : {}) });
  const has_more = docs.length > limit;
  if (has_more) docs.length = limit;
  const last = docs[docs.length - 1];
  const next_cursor = last ? cursorOf(last) : encodeCursor({ position: after.position, key: after.key });
  return { docs, has_more, next_cursor, poll_cursor: next_cursor };
}

/** The items of `filter` before `before`, newest first: the continuation of a newest-first page. */
export async function pageBefore<T extends Pageable>(collection: Collection<T>, filter: Filter, before: Cursor, limit: number): Promise<CursorPage<T>> {
  const docs = await collection.find(beforeFilter(filter, before), { sort: NEWEST_FIRST, limit: limit + 1 });
  const has_more = docs.length > limit;
  if (has_more) docs.length = limit;
  const last = docs[docs.length - 1];
  const next_cursor = last ? olderCursorOf(last) : encodeCursor(before);
  return { docs, has_more, next_cursor, poll_cursor: docs[0] ? cursorOf(docs[0]) : encodeCursor({ position: before.position, key: before.key }) };
}

/**
 * A newest-first page (`skip` items skipped, `page` * `limit`): `has_more` says whether older items
 * follow it, `next_cursor` continues towards them, `poll_cursor` is where a poll for newer items
 * resumes (the newest item of the page; on an empty page, the newest item of the list or its start).
 */
export async function newestPage<T extends Pageable>(collection: Collection<T>, filter: Filter, skip: number, limit: number): Promise<CursorPage<T>> {
  const docs = await collection.find(filter, { sort: NEWEST_FIRST, skip, limit: limit + 1 });
  const has_more = docs.length > limit;
  if (has_more) docs.length = limit;
  const last = docs[docs.length - 1];
  let newest = docs[0];
  if (!newest && skip > 0) newest = (await collection.find(filter, { sort: NEWEST_FIRST, limit: 1 }))[0];
  return { docs, has_more, next_cursor: last ? olderCursorOf(last) : null, poll_cursor: newest ? cursorOf(newest) : encodeCursor(START) };
}

/**
 * The items of `filter` created after the instant `since`, oldest first, in (created_at, seq, _id)
 * order. A page never ends inside a millisecond: when the `limit`th item shares its `created_at`
 * with the next one, the page takes the whole millisecond, so the next poll with `since` = the
 * last `created_at` seen misses nothing (a page may then exceed `limit` by one burst).
 */
export async function pageSince<T extends Pageable>(
  collection: Collection<T>,
  filter: Filter,
  since: string,
  limit: number,
  hint?: string,
): Promise<CursorPage<T>> {
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
  if (last) return { docs, has_more, next_cursor: cursorOf(last), poll_cursor: cursorOf(last) };
  // Nothing after `since`: resume after the last item at or before it.
  const before = await collection.find({ ...filter, created_at: { $lte: since } }, { sort: { created_at: -1, seq: -1, _id: -1 }, limit: 1, ...opts });
  const resume = before[0] ? cursorOf(before[0]) : encodeCursor(START);
  return { docs, has_more, next_cursor: resume, poll_cursor: resume };
}

/**
 * A cursor-paged list: `after` an oldest-first cursor (oldest first), `after` a newest-first cursor
 * (newest first, older items), `since` (oldest first, tie-safe), else the newest page (newest
 * first, `skip` items skipped). `next_cursor` always continues in the page's own order.
 */
export async function listPage<T extends Pageable>(
  collection: Collection<T>,
  filter: Filter,
  opts: { since?: string; after?: Cursor; limit: number; skip?: number },
): Promise<CursorPage<T>> {
  if (opts.after?.older) return pageBefore(collection, filter, opts.after, opts.limit);
  if (opts.after) return pageAfter(collection, filter, opts.after, opts.limit);
  if (opts.since) return pageSince(collection, filter, opts.since, opts.limit);
  return newestPage(collection, filter, opts.skip ?? 0, opts.limit);
}
