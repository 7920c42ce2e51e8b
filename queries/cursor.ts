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

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.position, c.key]), 'utf8').toString('base64url');
}

/** The cursor a client sent, or `null` when it is not one of ours (routes answer 400 `invalid_cursor`). */
export function decodeCursor(raw: string): Cursor | null {
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
