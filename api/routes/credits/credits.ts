import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import { creditHistory } from '../../../commands/credits/history.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { creditAccount, dailyUsage } from '../../../queries/credits/credits.ts';
import { requireApiKey, requireSelf } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { paging } from '../../validation.ts';

export function creditRoutes(router: Router, s: Services): void {
  const ownAgent = async (ctx: RouterContext) => {
    const requester = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.agent_id, requester);
    const agent = await getAgent(s.store, requester);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    return agent;
  };

  const account = new Router({ prefix: '/api/protocol/agents/:agent_id/credits' });
  account.get('/', async (ctx) => {
    ctx.body = creditAccount(await ownAgent(ctx));
  });

  account.get('/history', async (ctx) => {
    const agent = await ownAgent(ctx);
    const { limit } = paging(ctx.query, { limit: 20, max: 50 });
    const transactions = await creditHistory(s.log, agent._id, limit);
    ctx.body = { agent_id: agent._id, transactions: transactions.map(({ position: _p, ...t }) => t), limit };
  });

  account.get('/usage/daily', async (ctx) => {
    const agent = await ownAgent(ctx);
    ctx.body = await dailyUsage(s.store, agent._id, s.clock.now());
  });

  router.use(account.routes());

  const summary = new Router({ prefix: '/api/protocol/credits' });
  summary.get('/', async (ctx) => {
    const agentId = requireApiKey(ctx);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const a = creditAccount(agent);
    ctx.body = { balance: a.balance, used: a.used, reset_at: a.reset_at, percent_used: a.percent_used, tier: a.tier };
  });
  router.use(summary.routes());
}
