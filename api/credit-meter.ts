import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { CreditMeter, MeteredCharge } from '../commands/handler.ts';
import { DryRunComplete } from '../commands/handler.ts';
import { DomainError } from '../events/kernel/errors.ts';
import { toCredits } from '../events/kernel/money.ts';
import { renderError } from './errors.ts';
import { isRecord } from './guards.ts';
import { DRY_RUN_STATUS } from './openapi.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `?dry_run=1` (or `true`) on a write. */
function wantsDryRun(ctx: Context): boolean {
  // Most writes carry no query string: nothing to parse.
  if (!WRITE_METHODS.has(ctx.method) || ctx.querystring === '') return false;
  const raw = ctx.query.dry_run;
  return raw === '1' || raw === 'true';
}

/** What a request's charges cost its caller, and the balance they leave (the last charge's). */
function totals(charges: readonly MeteredCharge[]): { cost_mc: number; remaining_mc: number; before_mc: number } | null {
  const first = charges[0];
  const last = charges.at(-1);
  if (!first || !last) return null;
  const cost = charges.reduce((sum, c) => sum + c.amount_mc, 0);
  return { cost_mc: cost, remaining_mc: last.balance_after_mc, before_mc: first.balance_after_mc + first.amount_mc };
}

function setCostHeaders(ctx: Context, costMc: number, remainingMc: number): void {
  ctx.set('X-Credits-Cost', String(toCredits(costMc)));
  ctx.set('X-Credits-Remaining', String(toCredits(remainingMc)));
}

/**
 * The one place cost headers and dry runs live (docs/BILLING.md). Every command of the request
 * reports the charges it appended through the command context's meter (commands/handler.ts), so
 * every charged write answers `X-Credits-Cost` and `X-Credits-Remaining`, and a 402 answers the
 * cost it refused and the balance. With `?dry_run=1` the route runs as usual (validation, rate
 * limits without using them up, facts, the decider with the balance check) and the handler stops
 * at the first decision: the answer says what it would cost and whether it would pass, and
 * nothing is appended (nor stored for Idempotency-Key replays).
 */
export function creditMeter(logger: Logger) {
  return async function meterCredits(ctx: Context, next: Next) {
    const dryRun = wantsDryRun(ctx);
    if (dryRun) {
      const { dry_run: _d, ...rest } = ctx.query;
      ctx.query = rest;
    }
    const meter: CreditMeter = { dryRun, charges: [] };
    ctx.state.creditMeter = meter;
    ctx.state.dryRun = dryRun;
    try {
      await next();
      const t = totals(meter.charges);
      if (t) setCostHeaders(ctx, t.cost_mc, t.remaining_mc);
    } catch (err) {
      if (err instanceof DryRunComplete) {
        const t = totals(err.charges);
        setCostHeaders(ctx, t?.cost_mc ?? 0, t?.remaining_mc ?? 0);
        if (!t) ctx.remove('X-Credits-Remaining');
        ctx.status = DRY_RUN_STATUS;
        ctx.res.statusMessage = 'Dry Run';
        ctx.body = {
          dry_run: true,
          would_pass: true,
          cost: toCredits(t?.cost_mc ?? 0),
          balance: t ? toCredits(t.before_mc) : null,
          balance_after: t ? toCredits(t.remaining_mc) : null,
          charges: err.charges.map((c) => ({ agent_id: c.agent_id, action: c.action, amount: toCredits(c.amount_mc) })),
        };
        return;
      }
      if (err instanceof DomainError && err.code === 'insufficient_credits') {
        const { required, balance } = err.extra;
        if (typeof required === 'number' && typeof balance === 'number') {
          ctx.set('X-Credits-Cost', String(required));
          ctx.set('X-Credits-Remaining', String(balance));
        }
      }
      if (!dryRun) throw err;
      // A dry run that would fail: the same status and error body, marked as a dry run.
      renderError(ctx, err, logger);
      const body: unknown = ctx.body;
      if (isRecord(body)) {
        const extra = err instanceof DomainError && typeof err.extra.required === 'number' ? { cost: err.extra.required } : {};
        ctx.body = { ...body, dry_run: true, would_pass: false, ...extra };
      }
    }
  };
}
