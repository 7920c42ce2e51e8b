import Router from '@koa/router';
import { sendA2A } from '../../../commands/messaging/a2a.ts';
import type { SendA2A } from '../../../commands/messaging/a2a.ts';
import { ensurePassport, publicPassport, regeneratePassport } from '../../../commands/messaging/passport.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { A2A_INTENTS } from '../../../events/messaging.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { cursorOf } from '../../../queries/cursor.ts';
import { inboxPage } from '../../../queries/messaging/messaging.ts';
import { requireAgent } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { afterCursor, checkFreeForm, paging, typed } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import { LIMITS } from '../../rate-limit.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import { GetAgentA2aInboxAnswer, GetAgentByIdPassportAnswer, PostAgentA2aMessageAnswer, PostAgentPassportRegenerateAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

const a2aSchema = typed<{ to_agent_id: string; intent: SendA2A['intent']; payload?: Record<string, unknown>; sign?: boolean }>({
  type: 'object',
  additionalProperties: false,
  required: ['to_agent_id', 'intent'],
  properties: {
    to_agent_id: { type: 'string', minLength: 1, maxLength: 64 },
    intent: { type: 'string', enum: [...A2A_INTENTS] },
    payload: { type: 'object' },
    sign: { type: 'boolean' },
  },
});

export const a2aOperations = operations({
  postAgentA2aMessage: {
    method: 'POST',
    path: '/api/agent/a2a/message',
    summary: 'Send an A2A message (intent and payload) to another agent',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentA2aMessageAnswer),
    body: a2aSchema,
    rateLimit: LIMITS.writes,
    cost: 'a2a_message',
  },
  getAgentA2aInbox: {
    method: 'GET',
    path: '/api/agent/a2a/inbox',
    summary: 'Your A2A inbox, polled with after',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentA2aInboxAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  getAgentByIdPassport: {
    method: 'GET',
    path: '/api/agent/:id/passport',
    summary: "An agent's signed passport",
    tags: ['messaging'],
    auth: 'none',
    responses: ok(GetAgentByIdPassportAnswer),
  },
  postAgentPassportRegenerate: {
    method: 'POST',
    path: '/api/agent/passport/regenerate',
    summary: 'Issue a new passport for your agent',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentPassportRegenerateAnswer),
    rateLimit: LIMITS.writes,
  },
});

export function a2aRoutes(router: Router, s: Services): void {
  const passportFor = async (agentId: string) => {
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const now = s.clock.now();
    const state = await ensurePassport(s.bus, s.secrets, agentId, now);
    return publicPassport(state, { agent_id: agentId, name: agent.name, capabilities: agent.capabilities }, s.secrets, now);
  };

  const a2a = new Router({ prefix: '/api/agent/a2a' });
  mount(a2a, a2aOperations.postAgentA2aMessage, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const body = input.body;
    checkFreeForm(body.payload, 'payload');
    const { message: m, position } = await sendA2A(
      s.bus,
      s.secrets,
      agentId,
      { to_agent_id: body.to_agent_id, intent: body.intent, payload: body.payload ?? {}, sign: body.sign === true },
      commandContext(s, ctx, agentId),
    );
    await settled(s, position);
    ctx.body = {
      message_id: m.message_id,
      from_agent_id: m.from_agent_id,
      to_agent_id: m.to_agent_id,
      intent: m.intent,
      payload: m.payload,
      signature: m.signature,
      status: 'delivered',
      created_at: m.sent_at,
      credits_charged: toCredits(m.charge.amount_mc),
      balance: toCredits(m.charge.balance_after_mc),
    };
  });

  mount(a2a, a2aOperations.getAgentA2aInbox, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const after = afterCursor(ctx.query);
    const { items, total, next_cursor, has_more, poll_cursor } = await inboxPage(s.store, agentId, 'a2a_message', { skip, limit, after });
    ctx.body = {
      items: items.map((d) => ({ ...d.payload, delivered_via: d.delivered_via ?? 'inbox', cursor: cursorOf(d) })),
      total,
      page,
      limit,
      next_cursor,
      has_more,
      poll_cursor,
    };
  });

  router.use(a2a.routes());

  const passports = new Router({ prefix: '/api/agent' });
  mount(passports, a2aOperations.getAgentByIdPassport, async (ctx) => {
    ctx.body = await passportFor(ctx.params.id);
  });

  mount(passports, a2aOperations.postAgentPassportRegenerate, async (ctx) => {
    const agentId = writer(s, ctx);
    const r = await regeneratePassport(s.bus, s.secrets, agentId, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = await passportFor(agentId);
  });
  router.use(passports.routes());
}
