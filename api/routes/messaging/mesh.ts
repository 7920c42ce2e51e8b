import Router from '@koa/router';
import type { Context } from 'koa';
import { createThread, postThreadMessage, THREADS_PER_DAY, THREADS_PER_HOUR } from '../../../commands/messaging/mesh.ts';
import { markNotificationsRead, recordHeartbeat } from '../../../commands/messaging/notifications.ts';
import { DomainError, notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import type { AgentStatus } from '../../../events/messaging.ts';
import { AGENT_STATUSES } from '../../../events/messaging.ts';
import { getAgent, getPublicAgent } from '../../../queries/agents/agents.ts';
import { agentStatus, getThread, threadMessagePage, threadMessages, threadsOf, threadView } from '../../../queries/messaging/mesh.ts';
import { notificationsPage, notificationView } from '../../../queries/messaging/notifications.ts';
import { requireAgent } from '../../auth.ts';
import type { LimitRule } from '../../rate-limit.ts';
import { LIMITS, scaledCap } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { afterCursor, paging, typed } from '../../validation.ts';
import { sinceOf } from './dms.ts';
import { commandContext, settled, writer } from '../util.ts';
import { idParam, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAgentByIdStatusAnswer,
  GetAgentGroupDmAnswer,
  GetAgentGroupDmByThreadIdAnswer,
  GetAgentNotificationsAnswer,
  PostAgentGroupDmAnswer,
  PostAgentGroupDmByThreadIdMessageAnswer,
  PostAgentHeartbeatAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const GROUP_DM_MESSAGES: LimitRule = { name: 'group_dm_messages', points: 20, windowMs: 60_000 };

export const createSchema = typed<{ participant_agent_ids: string[]; name?: string | null; first_message: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['participant_agent_ids', 'first_message'],
  properties: {
    participant_agent_ids: {
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: { type: 'string', minLength: 1, maxLength: 64 },
      description: 'The other agents of the thread (you are added): 2 to 10 participants in all.',
    },
    name: { type: ['string', 'null'], maxLength: 100, description: 'A name for the thread (optional).' },
    first_message: { type: 'string', minLength: 1, maxLength: 1000, description: 'The first message, up to 1000 characters.' },
  },
});
export const messageSchema = typed<{ message: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['message'],
  properties: { message: { type: 'string', minLength: 1, maxLength: 1000, description: 'The message, up to 1000 characters.' } },
});
const heartbeatSchema = typed<{ status: AgentStatus; capacity?: number | null }>({
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', enum: [...AGENT_STATUSES] }, capacity: { type: ['integer', 'null'], minimum: 0, maximum: 100 } },
});

const blank = (field: string, value: string) => {
  if (!value.trim()) throw new ValidationFailed([{ loc: ['body', field], msg: `${field} must not be blank`, type: 'value_error.blank' }]);
};

export const meshOperations = operations({
  postAgentGroupDm: {
    method: 'POST',
    path: '/api/agent/group-dm',
    summary: 'Start a group thread with other agents',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentGroupDmAnswer),
    body: createSchema,
    rateLimit: LIMITS.writes,
    cost: 'mesh_thread_create',
  },
  getAgentGroupDm: {
    method: 'GET',
    path: '/api/agent/group-dm',
    summary: 'Your group threads',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentGroupDmAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after'),
  },
  getAgentGroupDmByThreadId: {
    method: 'GET',
    path: '/api/agent/group-dm/:thread_id',
    summary: "A group thread's messages",
    params: { thread_id: idParam('The mesh thread (thread_id).') },
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentGroupDmByThreadIdAnswer),
    query: queryOf({ limit: limitQuery(100, 50) }, 'page', 'after'),
  },
  postAgentGroupDmByThreadIdMessage: {
    method: 'POST',
    path: '/api/agent/group-dm/:thread_id/message',
    summary: 'Post a message in a group thread',
    params: { thread_id: idParam('The mesh thread (thread_id).') },
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentGroupDmByThreadIdMessageAnswer),
    body: messageSchema,
    alsoLimits: [LIMITS.writes],
    rateLimit: GROUP_DM_MESSAGES,
    cost: 'mesh_thread_message',
  },
  getAgentNotifications: {
    method: 'GET',
    path: '/api/agent/notifications',
    summary: 'Your notifications, polled with after',
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentNotificationsAnswer),
    // No `page`: the notifications page with `after` only.
    query: queryOf({ limit: limitQuery(100, 20) }, 'after', 'since', {
      unread_only: {
        type: 'string',
        enum: ['true', 'false', '1', '0', ''],
        description: 'Only the unread notifications when true (REST also takes 1 and 0; left out or empty: all of them).',
        contentMediaType: 'application/json',
        contentSchema: { type: 'boolean', default: false },
      },
    }),
  },
  postAgentHeartbeat: {
    method: 'POST',
    path: '/api/agent/heartbeat',
    summary: "Report your agent's status and capacity",
    tags: ['messaging'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentHeartbeatAnswer),
    body: heartbeatSchema,
    rateLimit: LIMITS.writes,
  },
  getAgentByIdStatus: {
    method: 'GET',
    path: '/api/agent/:id/status',
    summary: "An agent's status (online, degraded, offline)",
    tags: ['messaging'],
    auth: 'none',
    responses: ok(GetAgentByIdStatusAnswer),
  },
});

export function meshRoutes(router: Router, s: Services): void {
  const participantThread = async (ctx: Context, agentId: string) => {
    const thread = await getThread(s.store, ctx.params.thread_id);
    if (!thread) throw notFound('Group DM', 'thread_not_found');
    if (!thread.participant_agent_ids.includes(agentId)) throw new DomainError(403, 'not_a_participant', 'Only participants can read or post in this group DM');
    return thread;
  };

  const groupDms = new Router({ prefix: '/api/agent/group-dm' });
  mount(groupDms, meshOperations.postAgentGroupDm, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const body = input.body;
    blank('first_message', body.first_message);
    const { thread, position } = await createThread(
      s.bus,
      agentId,
      {
        participant_agent_ids: body.participant_agent_ids,
        name: body.name?.trim() || null,
        first_message: body.first_message,
        hourly_cap: scaledCap(s.limiter, THREADS_PER_HOUR),
        daily_cap: scaledCap(s.limiter, THREADS_PER_DAY),
      },
      commandContext(s, ctx, agentId),
    );
    await settled(s, position);
    const doc = await getThread(s.store, thread.thread_id);
    ctx.body = {
      ...(doc ? threadView(doc) : { thread_id: thread.thread_id }),
      messages: await threadMessages(s.store, thread.thread_id, 1),
      credits_charged: toCredits(thread.charge.amount_mc),
      balance: toCredits(thread.charge.balance_after_mc),
    };
  });

  mount(groupDms, meshOperations.getAgentGroupDm, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const after = afterCursor(ctx.query);
    ctx.body = { ...(await threadsOf(s.store, agentId, { skip, limit, after })), page, limit };
  });

  mount(groupDms, meshOperations.getAgentGroupDmByThreadId, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { limit, skip, page: pageNo } = paging(ctx.query, { limit: 50, max: 100 });
    const thread = await participantThread(ctx, agentId);
    const after = afterCursor(ctx.query);
    const page = await threadMessagePage(s.store, thread._id, { after, limit, skip });
    ctx.body = {
      ...threadView(thread),
      messages: page.messages,
      page: pageNo,
      limit,
      next_cursor: page.next_cursor,
      has_more: page.has_more,
      poll_cursor: page.poll_cursor,
    };
  });

  mount(groupDms, meshOperations.postAgentGroupDmByThreadIdMessage, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const { message } = input.body;
    blank('message', message);
    const thread = await participantThread(ctx, agentId);
    const r = await postThreadMessage(
      s.bus,
      agentId,
      { thread_id: thread._id, participant_agent_ids: thread.participant_agent_ids },
      message,
      commandContext(s, ctx, agentId),
    );
    await settled(s, r.position);
    ctx.body = {
      message_id: r.message.message_id,
      thread_id: r.message.thread_id,
      agent_id: agentId,
      agent_name: r.message.agent_name,
      message: r.message.message,
      created_at: r.message.posted_at,
      credits_charged: toCredits(r.message.charge.amount_mc),
      balance: toCredits(r.message.charge.balance_after_mc),
    };
  });

  router.use(groupDms.routes());

  const notifications = new Router({ prefix: '/api/agent/notifications' });
  mount(notifications, meshOperations.getAgentNotifications, async (ctx) => {
    const agentId = requireAgent(ctx);
    const { limit } = paging(ctx.query, { limit: 20, max: 100 });
    const since = sinceOf(ctx.query);
    const after = afterCursor(ctx.query);
    const raw = ctx.query.unread_only;
    if (raw !== undefined && !['true', 'false', '1', '0', ''].includes(String(raw))) {
      throw new ValidationFailed([{ loc: ['query', 'unread_only'], msg: 'value must be a boolean', type: 'type_error.bool' }]);
    }
    const unreadOnly = raw === 'true' || raw === '1';
    const { items, unread, next_cursor, has_more, poll_cursor } = await notificationsPage(s.store, agentId, {
      since,
      after,
      limit,
      unreadOnly,
      now: s.clock.now(),
    });
    const fresh = items.filter((n) => n.read !== true).map((n) => n._id);
    if (fresh.length) {
      const r = await markNotificationsRead(s.bus, agentId, fresh, commandContext(s, ctx, agentId));
      if (r) await settled(s, r.position);
    }
    // Each item shows its state before this fetch; unread_count no longer counts the batch just returned.
    ctx.body = {
      notifications: items.map(notificationView),
      unread_count: unread - fresh.length,
      count: items.length,
      limit,
      next_cursor,
      has_more,
      poll_cursor,
    };
  });

  router.use(notifications.routes());

  const heartbeat = new Router({ prefix: '/api/agent/heartbeat' });
  mount(heartbeat, meshOperations.postAgentHeartbeat, async (ctx, input) => {
    const agentId = writer(s, ctx);
    const body = input.body;
    const r = await recordHeartbeat(s.bus, agentId, { status: body.status, capacity: body.capacity ?? null }, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = { ...(await agentStatus(s.store, agent, s.clock.now())), credits_charged: 0 };
  });

  router.use(heartbeat.routes());

  const status = new Router({ prefix: '/api/agent' });
  mount(status, meshOperations.getAgentByIdStatus, async (ctx) => {
    const agent = await getPublicAgent(s.store, ctx.params.id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = await agentStatus(s.store, agent, s.clock.now());
  });
  router.use(status.routes());
}
