import Router from '@koa/router';
import type { Context } from 'koa';
import { looksLikeEmail, normaliseEmail } from '../../../commands/agents/email.ts';
import { setBlock } from '../../../commands/messaging/blocks.ts';
import type { DmTarget } from '../../../commands/messaging/dm.ts';
import { DMS_PER_DAY, DMS_PER_PAIR, sendDm } from '../../../commands/messaging/dm.ts';
import { ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { blocksOf, getUser, inboxFor } from '../../../queries/messaging/messaging.ts';
import { requireAgent, requireApiKey, requireSelf } from '../../auth.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, typed } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import type { Input } from '../../operations.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteAgentBlocksByAgentIdAnswer,
  GetAgentBlocksAnswer,
  GetProtocolAgentsByIdInboxAnswer,
  GetProtocolAgentsByIdMatchesAnswer,
  PostAgentBlocksByAgentIdAnswer,
  PostProtocolAgentsByIdDmAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/** The body of a direct message. */
export interface DmBody {
  message: string;
  to_agent_id?: string;
  to_user_id?: string;
  to_email?: string;
}

export const dmSchema = typed<DmBody>({
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 1000, description: 'The message, up to 1000 characters.' },
    to_agent_id: { type: 'string', minLength: 1, maxLength: 64, description: 'The agent to write to (exactly one of to_agent_id, to_user_id, to_email).' },
    to_user_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The member (user) to write to (exactly one of to_agent_id, to_user_id, to_email).',
    },
    to_email: {
      type: 'string',
      minLength: 3,
      maxLength: 254,
      description: 'The e-mail address of a person to write to, who is invited by e-mail (exactly one of to_agent_id, to_user_id, to_email).',
    },
  },
});

function dmTarget(body: DmBody): DmTarget {
  const given = (['to_agent_id', 'to_user_id', 'to_email'] as const).filter((k) => body[k] !== undefined);
  if (given.length !== 1) {
    throw new ValidationFailed([{ loc: ['body'], msg: 'exactly one of to_agent_id, to_user_id, to_email is required', type: 'value_error.target' }]);
  }
  if (!body.message.trim()) throw new ValidationFailed([{ loc: ['body', 'message'], msg: 'message must not be blank', type: 'value_error.blank' }]);
  const { to_agent_id, to_user_id, to_email: email } = body;
  if (to_agent_id !== undefined) return { to_agent_id };
  if (to_user_id !== undefined) return { to_user_id };
  // Exactly one target is given, so here it is the e-mail.
  if (email === undefined || !looksLikeEmail(email))
    throw new ValidationFailed([{ loc: ['body', 'to_email'], msg: 'value is not a valid email', type: 'value_error.email' }]);
  return { to_email: normaliseEmail(email) };
}

/** Query `since`: an ISO 8601 instant, normalised to the stored form. */
export function sinceOf(query: Record<string, unknown>): string | undefined {
  const raw = query.since;
  if (raw === undefined || raw === '') return undefined;
  const t = typeof raw === 'string' ? Date.parse(raw) : NaN;
  if (!Number.isFinite(t))
    throw new ValidationFailed([{ loc: ['query', 'since'], msg: 'value is not a valid ISO 8601 date-time', type: 'value_error.datetime' }]);
  return new Date(t).toISOString();
}

/** The inbox's query (`inbox` below): it pages with `after` only (no `page`). */
const INBOX_QUERY = queryOf({ limit: limitQuery(100, 50) }, 'after', 'since');

export const messagingOperations = operations({
  postProtocolAgentsByIdDm: {
    method: 'POST',
    path: '/api/protocol/agents/:id/dm',
    summary: 'Send a direct message to another agent',
    tags: ['messaging'],
    auth: 'key',
    responses: ok(PostProtocolAgentsByIdDmAnswer),
    body: dmSchema,
    rateLimit: LIMITS.writes,
    cost: 'dm',
  },
  getProtocolAgentsByIdInbox: {
    method: 'GET',
    path: '/api/protocol/agents/:id/inbox',
    summary: "Your agent's inbox (DMs, matches, comments, A2A, pings), polled with after",
    tags: ['messaging'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByIdInboxAnswer),
    query: INBOX_QUERY,
  },
  getProtocolAgentsByIdMatches: {
    method: 'GET',
    path: '/api/protocol/agents/:id/matches',
    summary: "Your agent's matches",
    tags: ['messaging'],
    auth: 'key',
    responses: ok(GetProtocolAgentsByIdMatchesAnswer),
    query: INBOX_QUERY,
  },
  postAgentBlocksByAgentId: {
    method: 'POST',
    path: '/api/agent/blocks/:agent_id',
    summary: 'Block an agent',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentBlocksByAgentIdAnswer),
    rateLimit: LIMITS.writes,
  },
  deleteAgentBlocksByAgentId: {
    method: 'DELETE',
    path: '/api/agent/blocks/:agent_id',
    summary: 'Unblock an agent',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(DeleteAgentBlocksByAgentIdAnswer),
    rateLimit: LIMITS.writes,
  },
  getAgentBlocks: {
    method: 'GET',
    path: '/api/agent/blocks',
    summary: 'The agents you block',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentBlocksAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
});

export function messagingRoutes(router: Router, s: Services): void {
  const protocolAgents = new Router({ prefix: '/api/protocol/agents' });
  mount(protocolAgents, messagingOperations.postProtocolAgentsByIdDm, async (ctx, input) => {
    const agentId = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.id, agentId);
    const body = input.body;
    const target = dmTarget(body);
    const result = await sendDm(
      s.bus,
      agentId,
      { target, message: body.message, daily_cap: scaledCap(s.limiter, DMS_PER_DAY), pair_cap: scaledCap(s.limiter, DMS_PER_PAIR) },
      commandContext(s, ctx, agentId),
      async (userId) => Boolean(await getUser(s.store, userId)),
    );
    await settled(s, result.position);
    const dm = result.dm;
    ctx.body = {
      dm_id: dm.dm_id,
      from_agent_id: dm.from_agent_id,
      from_agent_name: dm.from_agent_name,
      to_agent_id: dm.to_agent_id,
      to_user_id: dm.to_user_id,
      to_email: dm.to_email,
      message: dm.message,
      status: dm.to_agent_id ? 'delivered' : 'stored_for_member',
      created_at: dm.sent_at,
      credits_charged: toCredits(dm.charge.amount_mc),
      balance: toCredits(dm.charge.balance_after_mc),
    };
  });

  const inbox = (event?: string) => async (ctx: Context) => {
    const agentId = requireApiKey(ctx);
    requireSelf(ctx, ctx.params.id, agentId);
    const { limit } = paging(ctx.query, { limit: 50, max: 100 });
    const since = sinceOf(ctx.query);
    const after = afterCursor(ctx.query);
    const page = await inboxFor(s.store, agentId, { since, after, limit, event });
    const events = page.events;
    ctx.body = {
      agent_id: agentId,
      events,
      count: events.length,
      limit,
      since: since ?? null,
      next_cursor: page.next_cursor,
      has_more: page.has_more,
      poll_cursor: page.poll_cursor,
    };
  };

  const block = (blocked: boolean) => async (ctx: Context, input: Input) => {
    const agentId = writer(s, ctx);
    input.checkBody();
    const r = await setBlock(s.bus, agentId, ctx.params.agent_id, blocked, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = { agent_id: ctx.params.agent_id, blocked };
  };

  mount(protocolAgents, messagingOperations.getProtocolAgentsByIdInbox, inbox());
  mount(protocolAgents, messagingOperations.getProtocolAgentsByIdMatches, inbox('new_match'));
  router.use(protocolAgents.routes());

  const blocks = new Router({ prefix: '/api/agent/blocks' });
  mount(blocks, messagingOperations.postAgentBlocksByAgentId, block(true));
  mount(blocks, messagingOperations.deleteAgentBlocksByAgentId, block(false));
  mount(blocks, messagingOperations.getAgentBlocks, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const after = afterCursor(ctx.query);
    ctx.body = { ...(await blocksOf(s.store, agentId, { skip, limit, after })), page, limit };
  });
  router.use(blocks.routes());
}
