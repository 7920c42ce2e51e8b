// `?as_of=<position or ISO time>` on the reads that support it: the read models those reads use,
// folded from the log up to that position (projections/as-of.ts). Without the parameter: the live store.
import type { Context } from 'koa';
import { ValidationFailed } from '../events/kernel/errors.ts';
import { foldAsOf, positionAt } from '../projections/as-of.ts';
import { allProjections } from '../projections/index.ts';
import type { ReadStore } from '../projections/store/port.ts';
import type { Services } from './services.ts';

const invalid = (msg: string) => new ValidationFailed([{ loc: ['query', 'as_of'], msg, type: 'value_error.as_of' }]);

/** The position `as_of` names (a position, or the last event at or before an ISO time), or null when absent. */
export async function asOfPosition(s: Services, ctx: Context): Promise<number | null> {
  const raw = ctx.query.as_of;
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || raw === '') throw invalid('as_of must be a log position or an ISO 8601 time');
  const head = await s.log.headPosition();
  if (/^\d{1,16}$/.test(raw)) {
    const position = Number(raw);
    if (position > head) throw invalid(`as_of is past the head of the log (${head})`);
    return position;
  }
  const time = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time)) throw invalid('as_of must be a log position or an ISO 8601 time');
  return positionAt(s.log, time);
}

/**
 * The store to answer from: the live one, or (with `as_of`) the named projections folded up to
 * that position. The answer then carries `X-As-Of-Position`.
 */
export async function storeAsOf(s: Services, ctx: Context, projections: string[]): Promise<ReadStore> {
  const position = await asOfPosition(s, ctx);
  if (position === null) return s.store;
  ctx.set('X-As-Of-Position', String(position));
  ctx.set('Cache-Control', 'no-store');
  return foldAsOf(
    s.log,
    allProjections.filter((p) => projections.includes(p.name)),
    position,
  );
}
