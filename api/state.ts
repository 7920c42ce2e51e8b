// What the middlewares and handlers keep in Koa's `ctx.state`, typed by module augmentation of
// Koa's DefaultState (TypeScript's declaration merging): every `ctx.state.x` below reads with its
// type, without an assertion. A new field of the state is declared here.
import type { Principal } from './auth.ts';
import type { CreditMeter } from '../commands/handler.ts';
import type { ConsoleUser } from './console/session.ts';
import type { Operation } from './operations.ts';
import type { Member } from './web/member.ts';

declare module 'koa' {
  interface DefaultState {
    /** The request's id (X-Request-Id), set by the front middleware (api/app.ts) before anything else. */
    requestId: string;
    /** The authenticated caller (api/auth.ts); absent for an anonymous request. */
    principal?: Principal;
    /** The operation of the matched route (api/operations.ts mount). */
    operation?: Operation;
    /** The write's command id: its Idempotency-Key, or a fresh one (api/idempotency.ts). */
    commandId?: string;
    /** Whether commandId was made for this request (no Idempotency-Key was sent). */
    freshCommand?: boolean;
    /** The charged route's credit meter (api/credit-meter.ts). */
    creditMeter?: CreditMeter;
    /** A charged route asked for its cost only (X-Dry-Run). */
    dryRun?: boolean;
    /** The signed-in member of a page request, once read (null: nobody is signed in). */
    member?: Member | null;
    /** The console's signed-in super admin. */
    consoleUser?: ConsoleUser;
    /** The answer may be cached by the read models' position (api/http-cache.ts). */
    cacheableByPosition?: boolean;
    /**
     * The route template that answered: the mounted operation's path (api/operations.ts `mount`),
     * a remembered answer's, the metrics endpoint's; the metrics label (api/metrics.ts routeOf).
     */
    route?: string;
    /** The page's form body is parsed (api/web/member.ts). */
    formParsed?: boolean;
  }
}
