import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { CreditTransaction } from '../../../commands/credits/history.ts';
import { creditHistory, creditHistoryAfter } from '../../../commands/credits/history.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { creditAccount, dailyUsage } from '../../../queries/credits/credits.ts';
import { encodeCursor, START } from '../../../queries/cursor.ts';
import { requireApiKey, requireSelf } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging } from '../../validation.ts';
import { StatementQuery, statementOf } from './admin.ts';
import { storeAsOf } from '../../as-of.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetProtocolAgentsByAgentIdCreditsAnswer,
  GetProtocolAgentsByAgentIdCreditsHistoryAnswer,
  GetProtocolAgentsByAgentIdCreditsStatementAnswer,
  GetProtocolAgentsByAgentIdCreditsUsageDailyAnswer,
  GetProtocolCreditsAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

export const creditOperations = operations({
  getProtocolAgentsByAgentIdCredits: {
    method: 'GET',
    path: '/api/protocol/agents/:agent_id/credits',
    summary: "Your agent's credit account",
    tags: ['credits'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByAgentIdCreditsAnswer),
    query: queryOf('as_of'),
  },
  getProtocolAgentsByAgentIdCreditsHistory: {
    method: 'GET',
    path: '/api/protocol/agents/:agent_id/credits/history',
    summary: "Your agent's credit transactions (newest first, or after a cursor)",
    tags: ['credits'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByAgentIdCreditsHistoryAnswer),
    query: queryOf({ limit: limitQuery(50, 20) }, 'page', 'after'),
  },
  getProtocolAgentsByAgentIdCreditsStatement: {
    method: 'GET',
    path: '/api/protocol/agents/:agent_id/credits/statement',
    summary: "Your agent's signed credit statement of a period (docs/BILLING.md)",
    tags: ['credits'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByAgentIdCreditsStatementAnswer),
    query: StatementQuery,
  },
  getProtocolAgentsByAgentIdCreditsUsageDaily: {
    method: 'GET',
    path: '/api/protocol/agents/:agent_id/credits/usage/daily',
    summary: "Your agent's credit usage per day",
    tags: ['credits'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByAgentIdCreditsUsageDailyAnswer),
  },
  getProtocolCredits: {
    method: 'GET',
    path: '/api/protocol/credits',
    summary: 'Your balance, usage and reset date',
    tags: ['credits'],
    auth: 'key',
    responses: ok(GetProtocolCreditsAnswer),
  },
});

export function creditRoutes(router: Router, s: Services): void {
  const ownAgent = async (ctx: RouterContext) => {
    const requester = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.agent_id, requester);
    const agent = await getAgent(s.store, requester);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    return agent;
  };

  const account = new Router({ prefix: '/api/protocol/agents/:agent_id/credits' });
  mount(account, creditOperations.getProtocolAgentsByAgentIdCredits, async (ctx) => {
    const requester = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.agent_id, requester);
    const agent = await getAgent(await storeAsOf(s, ctx, ['agents'], requester), requester);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = creditAccount(agent);
  });

  mount(account, creditOperations.getProtocolAgentsByAgentIdCreditsHistory, async (ctx) => {
    const agent = await ownAgent(ctx);
    const { limit, skip, page } = paging(ctx.query, { limit: 20, max: 50 });
    const after = afterCursor(ctx.query);
    const cursor = (t: CreditTransaction) => encodeCursor({ position: t.position, key: t.transaction_id });
    const view = (t: CreditTransaction) => {
      const { position: _p, ...rest } = t;
      return { ...rest, cursor: cursor(t) };
    };
    if (after && !after.older) {
      // Oldest first after the cursor: next_cursor continues forwards and is also where a poll resumes.
      const r = await creditHistoryAfter(s.log, agent._id, after.position, limit);
      const last = r.transactions.at(-1);
      const next = last ? cursor(last) : encodeCursor({ position: after.position, key: after.key });
      ctx.body = { agent_id: agent._id, transactions: r.transactions.map(view), limit, next_cursor: next, has_more: r.has_more, poll_cursor: next };
      return;
    }
    // Newest first (from the newest, `page` skipping whole pages, or before a newest-first cursor):
    // next_cursor continues towards older ones, poll_cursor is where a poll for newer ones resumes.
    const r = await creditHistory(s.log, agent._id, limit, after ? 0 : skip, after?.position);
    const first = r.transactions[0];
    const last = r.transactions.at(-1);
    let newest = first;
    if (!newest && !after && skip > 0) newest = (await creditHistory(s.log, agent._id, 1)).transactions[0];
    ctx.body = {
      agent_id: agent._id,
      transactions: r.transactions.map(view),
      limit,
      page,
      next_cursor: last ? encodeCursor({ position: last.position, key: last.transaction_id, older: true }) : after ? encodeCursor(after) : null,
      has_more: r.has_more,
      poll_cursor: newest ? cursor(newest) : after ? encodeCursor({ position: after.position, key: after.key }) : encodeCursor(START),
    };
  });

  mount(account, creditOperations.getProtocolAgentsByAgentIdCreditsStatement, async (ctx, input) => {
    const agent = await ownAgent(ctx);
    ctx.body = await statementOf(s, agent._id, agent.tier === 'enterprise', input.query);
  });

  mount(account, creditOperations.getProtocolAgentsByAgentIdCreditsUsageDaily, async (ctx) => {
    const agent = await ownAgent(ctx);
    ctx.body = await dailyUsage(s.store, agent._id, s.clock.now());
  });

  router.use(account.routes());

  const summary = new Router({ prefix: '/api/protocol/credits' });
  mount(summary, creditOperations.getProtocolCredits, async (ctx) => {
    const agentId = requireApiKey(ctx);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const a = creditAccount(agent);
    ctx.body = { balance: a.balance, used: a.used, reset_at: a.reset_at, percent_used: a.percent_used, tier: a.tier };
  });
  router.use(summary.routes());
}
