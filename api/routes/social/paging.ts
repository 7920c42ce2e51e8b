import type { Cursor } from '../../../queries/cursor.ts';
import { cursorParam, paging } from '../../validation.ts';

/**
 * Query `cursor` and `limit` of a newest-first browse list (followers, bonds, leaderboard,
 * directories): a cursor that is not ours is 400 `invalid_cursor`, a limit out of range 422.
 */
export function cursorPaging(query: Record<string, unknown>, defaults: { limit: number; max: number }): { cursor: Cursor | null; limit: number } {
  const raw = query.cursor === '' ? undefined : query.cursor;
  const cursor = cursorParam({ cursor: raw }, 'cursor') ?? null;
  return { cursor, limit: paging({ limit: query.limit }, defaults).limit };
}
