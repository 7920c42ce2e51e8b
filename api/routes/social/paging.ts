import type { Cursor } from '../../../queries/cursor.ts';
import { decodeCursor } from '../../../queries/cursor.ts';
import { DomainError, ValidationFailed } from '../../../events/kernel/errors.ts';

/** Query `cursor` and `limit` of a cursor-paged list: a cursor that is not ours is 400 `invalid_cursor`. */
export function cursorPaging(query: Record<string, unknown>, defaults: { limit: number; max: number }): { cursor: Cursor | null; limit: number } {
  const raw = query.cursor;
  let cursor: Cursor | null = null;
  if (raw !== undefined && raw !== '') {
    cursor = typeof raw === 'string' ? decodeCursor(raw) : null;
    if (!cursor) throw new DomainError(400, 'invalid_cursor', 'cursor is not a cursor this list returned');
  }
  const rawLimit = query.limit;
  let limit = defaults.limit;
  if (rawLimit !== undefined && rawLimit !== '') {
    const n = typeof rawLimit === 'string' && /^\d+$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(n >= 1 && n <= defaults.max))
      throw new ValidationFailed([
        { loc: ['query', 'limit'], msg: `value must be an integer between 1 and ${defaults.max}`, type: 'value_error.number.range' },
      ]);
    limit = n;
  }
  return { cursor, limit };
}
