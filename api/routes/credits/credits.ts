import type Router from '@koa/router';
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

  router.get('/api/protocol/agents/:agent_id/credits', async (ctx) => {
    ctx.body = creditAccount(await ownAgent(ctx));
  });

  router.get('/api/protocol/agents/:agent_id/credits/history', async (ctx) => {
    const agent = await ownAgent(ctx);
    const { limit } = paging(ctx.query, { limit: 20, max: 50 });
    const transactions = await creditHistory(s.log, agent._id, limit);
    ctx.body = { agent_id: agent._id, transactions: transactions.map(({ position: _p, ...t }) => t), limit };
  });

  router.get('/api/protocol/agents/:agent_id/credits/usage/daily', async (ctx) => {
    const agent = await ownAgent(ctx);
    ctx.body = await dailyUsage(s.store, agent._id, s.clock.now());
  });

  router.get('/api/protocol/credits', async (ctx) => {
    const agentId = requireApiKey(ctx);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const a = creditAccount(agent);
    ctx.body = { balance: a.balance, used: a.used, reset_at: a.reset_at, percent_used: a.percent_used, tier: a.tier };
  });
}
