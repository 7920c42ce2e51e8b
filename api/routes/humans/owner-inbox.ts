import Router from '@koa/router';
import type { Context } from 'koa';
import { normaliseEmail } from '../../../commands/agents/email.ts';
import { replyFromInbox } from '../../../commands/humans/owner.ts';
import { DMS_PER_DAY, DMS_PER_PAIR } from '../../../commands/messaging/dm.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { getUser, memberDms } from '../../../queries/messaging/messaging.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { requireUser } from './auth.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';
import { GetAgentMyInboxAnswer, GetAgentMyInboxByAgentIdThreadAnswer, PostAgentMyInboxByAgentIdReplyAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

const replySchema = typed<{ message: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: { message: { type: 'string', minLength: 1, maxLength: 1000 } },
});

const messageView = (d: ReadModel<'member_dms'>) => ({
  dm_id: d._id,
  direction: d.direction ?? 'inbound',
  from_agent_id: d.from_agent_id,
  from_agent_name: d.from_agent_name,
  to_agent_id: d.to_agent_id ?? null,
  message: d.message,
  created_at: d.created_at,
});

/** The owner inbox (J): agent DMs to the signed-in member, by user id and by their address (also those sent before they joined). */
export const ownerInboxOperations = operations({
  getAgentMyInbox: {
    method: 'GET',
    path: '/api/agent/my-inbox',
    summary: "The signed-in owner's inbox of DMs to their agent",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetAgentMyInboxAnswer),
  },
  getAgentMyInboxByAgentIdThread: {
    method: 'GET',
    path: '/api/agent/my-inbox/:agent_id/thread',
    summary: "The owner's thread with one agent",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetAgentMyInboxByAgentIdThreadAnswer),
  },
  postAgentMyInboxByAgentIdReply: {
    method: 'POST',
    path: '/api/agent/my-inbox/:agent_id/reply',
    summary: "Reply as owner to an agent's DM",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostAgentMyInboxByAgentIdReplyAnswer),
    body: replySchema,
    rateLimit: LIMITS.writes,
    cost: 'owner_dm_reply',
  },
});

/** The member's DMs: to their user id and to their address (also those sent before they joined). */
export async function ownerDms(s: Services, userId: string): Promise<ReadModel<'member_dms'>[]> {
  const doc = await getUser(s.store, userId);
  const email = typeof doc?.email === 'string' ? doc.email : null;
  const emails = email ? [...new Set([email.toLowerCase(), normaliseEmail(email)])] : [];
  return memberDms(s.store, { user_id: userId, emails });
}

export interface InboxGroup {
  agent_id: string;
  agent_name: string;
  message_count: number;
  last_message: string;
  last_message_at: string;
}

/** The inbox: inbound DMs grouped by the agent that sent them, the latest conversation first. */
export function inboxGroups(dms: ReadModel<'member_dms'>[]): InboxGroup[] {
  const groups = new Map<string, InboxGroup>();
  for (const d of dms) {
    if (d.direction === 'outbound') continue;
    const id = d.from_agent_id;
    const g = groups.get(id);
    if (g) g.message_count++;
    else
      groups.set(id, {
        agent_id: id,
        agent_name: d.from_agent_name,
        message_count: 1,
        last_message: d.message,
        last_message_at: d.created_at,
      });
  }
  return [...groups.values()];
}

/** The thread with one agent, both directions, oldest first (404 when there is none). */
export function threadWith(dms: ReadModel<'member_dms'>[], other: string) {
  const thread = dms.filter((d) => (d.direction === 'outbound' ? d.to_agent_id === other : d.from_agent_id === other)).reverse();
  if (thread.length === 0) throw notFound('Conversation', 'conversation_not_found');
  return thread.map(messageView);
}

/** Replies as the member's linked agent to an agent that wrote to them (charged owner_dm_reply; a cap answers 429 with its headers, api/errors.ts). */
export async function replyAsOwner(
  s: Services,
  ctx: Context,
  user: { userId: string; agentId: string },
  dms: ReadModel<'member_dms'>[],
  other: string,
  message: string,
) {
  const result = await replyFromInbox(
    s.bus,
    {
      user_id: user.userId,
      agent_id: user.agentId,
      to_agent_id: other,
      message,
      conversation_exists: dms.some((d) => d.direction !== 'outbound' && d.from_agent_id === other),
      daily_cap: scaledCap(s.limiter, DMS_PER_DAY),
      pair_cap: scaledCap(s.limiter, DMS_PER_PAIR),
    },
    commandContext(s, ctx, user.userId),
  );
  await settled(s, result.position);
  return result;
}

export function ownerInboxRoutes(router: Router, s: Services): void {
  const dmsOf = async (ctx: Context) => {
    const user = requireUser(ctx);
    return { user, dms: await ownerDms(s, user.userId) };
  };

  const inbox = new Router({ prefix: '/api/agent/my-inbox' });
  mount(inbox, ownerInboxOperations.getAgentMyInbox, async (ctx) => {
    const { dms } = await dmsOf(ctx);
    const items = inboxGroups(dms);
    ctx.body = { items, total: items.length };
  });

  mount(inbox, ownerInboxOperations.getAgentMyInboxByAgentIdThread, async (ctx) => {
    const { dms } = await dmsOf(ctx);
    const other = ctx.params.agent_id;
    const messages = threadWith(dms, other);
    ctx.body = { agent_id: other, messages, total: messages.length };
  });

  mount(inbox, ownerInboxOperations.postAgentMyInboxByAgentIdReply, async (ctx, input) => {
    const { user, dms } = await dmsOf(ctx);
    if (!user.agentId) throw new DomainError(401, 'no_linked_agent', 'No active agent linked to your account');
    const agentId = user.agentId;
    const { message } = input.body;
    const other = ctx.params.agent_id;
    const result = await replyAsOwner(s, ctx, { userId: user.userId, agentId }, dms, other, message);
    ctx.body = {
      dm_id: result.dm.dm_id,
      direction: 'outbound',
      from_agent_id: agentId,
      to_agent_id: other,
      message,
      created_at: result.dm.sent_at,
      credits_charged: toCredits(result.dm.charge.amount_mc),
      balance: toCredits(result.dm.charge.balance_after_mc),
    };
  });

  router.use(inbox.routes());
}
