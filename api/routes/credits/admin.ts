import Router from '@koa/router';
import type { Context } from 'koa';
import { Type, type Static } from '@sinclair/typebox';
import { stringify } from 'csv-stringify/sync';
import type { LedgerEntry, LedgerFilter } from '../../../commands/credits/history.ts';
import { ledger, ledgerExists, ledgerJson, ledgerPage, matchesFilter } from '../../../commands/credits/history.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { creditStatement } from '../../../commands/credits/statement.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { encodeCursor } from '../../../queries/cursor.ts';
import type { Services } from '../../services.ts';
import { afterCursor } from '../../validation.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { mount, operations } from '../../operations.ts';
import { GetAdminAgentsByAgentIdCreditsStatementAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

const IsoTime = Type.String({ format: 'date-time', maxLength: 40 });

/** Query of the admin credit history and its export. */
export const CreditHistoryQuery = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('debit'), Type.Literal('credit')])),
    action: Type.Optional(Type.String({ pattern: '^[a-z0-9_]{1,40}$' })),
    from: Type.Optional(IsoTime),
    to: Type.Optional(IsoTime),
    // Clamped, not refused, within three digits: the history reads 0 as 1 and 201 to 999 as 200.
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,3}$',
        description: 'Page size of the history (default 50): at most three digits; 0 is read as 1, and values above 200 as 200. The export ignores it.',
        contentMediaType: 'application/json',
        contentSchema: { type: 'integer', minimum: 0, maximum: 999, default: 50 },
      }),
    ),
    after: Type.Optional(Type.String({ maxLength: 512 })),
    format: Type.Optional(Type.Union([Type.Literal('ndjson'), Type.Literal('csv')])),
  },
  { additionalProperties: false },
);

/** One audited ledger entry (the JSON page, and each NDJSON line). */
export const LedgerEntryView = Type.Object({
  position: Type.Integer(),
  revision: Type.Integer(),
  event_id: Type.String(),
  event_type: Type.String(),
  transaction_id: Type.String(),
  type: Type.Union([Type.Literal('debit'), Type.Literal('credit')]),
  action: Type.String(),
  amount: Type.Number(),
  amount_mc: Type.Integer(),
  balance_after: Type.Number(),
  reference: Type.Record(Type.String(), Type.String()),
  actor: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export const CSV_COLUMNS = [
  'position',
  'revision',
  'created_at',
  'event_id',
  'event_type',
  'type',
  'action',
  'amount',
  'balance_after',
  'actor',
  'reference',
] as const;

export const ledgerView = (e: LedgerEntry): Static<typeof LedgerEntryView> => ledgerJson(e);

/** Query of a credit statement: the period `[from, to)`; defaults: the ledger's start, and now. */
export const StatementQuery = Type.Object({ from: Type.Optional(IsoTime), to: Type.Optional(IsoTime) }, { additionalProperties: false });

/** The JSON page of the admin credit history. */
export const LedgerPage = Type.Object({
  agent_id: Type.String(),
  filters: Type.Object({
    type: Type.Union([Type.String(), Type.Null()]),
    action: Type.Union([Type.String(), Type.Null()]),
    from: Type.Union([Type.String(), Type.Null()]),
    to: Type.Union([Type.String(), Type.Null()]),
  }),
  entries: Type.Array(LedgerEntryView),
  limit: Type.Integer(),
  next_cursor: Type.String(),
  has_more: Type.Boolean(),
});

export const adminCreditOperations = operations({
  getAdminAgentsByAgentIdCreditsHistory: {
    method: 'GET',
    path: '/api/admin/agents/:agent_id/credits/history',
    summary: "Super admin: any agent's credit ledger with positions and actors (oldest first, cursor-paged)",
    tags: ['credits'],
    auth: 'admin',
    query: CreditHistoryQuery,
    responses: { 200: { schema: LedgerPage } },
  },
  getAdminAgentsByAgentIdCreditsHistoryExport: {
    method: 'GET',
    path: '/api/admin/agents/:agent_id/credits/history/export',
    summary: "Super admin: an agent's whole (filtered) ledger as NDJSON (default) or CSV (format=csv)",
    tags: ['credits'],
    auth: 'admin',
    query: CreditHistoryQuery,
    responses: { 200: { contentType: 'application/x-ndjson', alsoContentTypes: ['text/csv'], schema: { type: 'string' } } },
  },
  getAdminAgentsByAgentIdCreditsStatement: {
    method: 'GET',
    path: '/api/admin/agents/:agent_id/credits/statement',
    summary: "Super admin: an agent's signed credit statement of a period",
    tags: ['credits'],
    auth: 'admin',
    responses: ok(GetAdminAgentsByAgentIdCreditsStatementAnswer),
    query: StatementQuery,
  },
});

function filterOf(q: Static<typeof CreditHistoryQuery>): LedgerFilter {
  const iso = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
  return { type: q.type, action: q.action, from: iso(q.from), to: iso(q.to) };
}

/**
 * Super-admin credit audits (docs/BILLING.md): any agent's ledger straight from its stream, with
 * each entry's log position and actor; filters by type, action and time range; cursor-paged
 * (oldest first), and exported whole as NDJSON or CSV.
 */
export function adminCreditRoutes(router: Router, s: Services): void {
  const audit = new Router({ prefix: '/api/admin/agents/:agent_id/credits' });
  const load = async (ctx: Context & { params: Record<string, string> }, input: { readonly query: Static<typeof CreditHistoryQuery> }) => {
    requireSuperAdmin(ctx);
    const q = input.query;
    const agentId = ctx.params.agent_id;
    if (!(await ledgerExists(s.log, agentId))) throw notFound('Agent', 'agent_not_found');
    return { q, agentId, filter: filterOf(q) };
  };

  mount(audit, adminCreditOperations.getAdminAgentsByAgentIdCreditsHistory, async (ctx, input) => {
    const { q, agentId, filter } = await load(ctx, input);
    const limit = Math.min(Math.max(Number(q.limit ?? 50), 1), 200);
    const after = afterCursor(ctx.query)?.position ?? 0;
    const page = await ledgerPage(s.log, agentId, filter, after, limit);
    const last = page.entries.at(-1);
    ctx.body = {
      agent_id: agentId,
      filters: { type: filter.type ?? null, action: filter.action ?? null, from: filter.from ?? null, to: filter.to ?? null },
      entries: page.entries.map(ledgerView),
      limit,
      next_cursor: encodeCursor({ position: last ? last.position : after, key: last?.transaction_id ?? '' }),
      has_more: page.has_more,
    };
  });

  mount(audit, adminCreditOperations.getAdminAgentsByAgentIdCreditsHistoryExport, async (ctx, input) => {
    const { q, agentId, filter } = await load(ctx, input);
    const format = q.format ?? 'ndjson';
    const rows: Array<Static<typeof LedgerEntryView>> = [];
    for await (const e of ledger(s.log, agentId)) if (matchesFilter(e, filter)) rows.push(ledgerView(e));
    ctx.set('Content-Disposition', `attachment; filename="credits-${agentId}.${format}"`);
    if (format === 'csv') {
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = stringify(
        rows.map((r) => ({ ...r, reference: JSON.stringify(r.reference) })),
        { header: true, columns: [...CSV_COLUMNS] },
      );
    } else {
      ctx.type = 'application/x-ndjson; charset=utf-8';
      ctx.body = rows.map((r) => `${JSON.stringify(r)}\n`).join('');
    }
  });
  mount(audit, adminCreditOperations.getAdminAgentsByAgentIdCreditsStatement, async (ctx, input) => {
    requireSuperAdmin(ctx);
    const q = input.query;
    const agent = await getAgent(s.store, ctx.params.agent_id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = await statementOf(s, ctx.params.agent_id, agent.tier === 'enterprise', q);
  });
  router.use(audit.routes());
}

/** The signed statement of a period (commands/credits/statement.ts; format and verifier in docs/BILLING.md). */
export function statementOf(s: Services, agentId: string, unlimited: boolean, q: Static<typeof StatementQuery>) {
  const now = s.clock.now();
  const from = q.from ? new Date(q.from) : new Date(0);
  const to = q.to ? new Date(q.to) : now;
  if (to.getTime() < from.getTime()) throw new ValidationFailed([{ loc: ['query', 'to'], msg: 'to must not be before from', type: 'value_error.range' }]);
  return creditStatement(s.log, s.serviceKey, agentId, from, to, now, unlimited);
}
