import { agentStream } from '../../events/agents.ts';
import { DAY, HOUR } from '../../events/kernel/clock.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { MeshThreadCreated, MeshThreadMessagePosted } from '../../events/messaging.ts';
import { agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { notDelivered } from './dm.ts';

/** Mesh threads: 2 to 10 participants including the creator (shared DECISIONS); creation 10 per hour, 20 per day. */
export const MAX_PARTICIPANTS = 10;
export const THREADS_PER_HOUR = 10;
export const THREADS_PER_DAY = 20;

const limited = (code: string, detail: string, times: readonly string[], windowMs: number, limit: number, now: Date) => {
  const reset = Math.max(1, Math.ceil((Date.parse(times[0]) + windowMs - now.getTime()) / 1000));
  return new DomainError(429, code, detail, { retry_after: reset, limit, remaining: 0, reset });
};

export interface CreateThread {
  participant_agent_ids: string[];
  name: string | null;
  first_message: string;
  hourly_cap: number;
  daily_cap: number;
}

/** CreateMeshThread: flat 0.25 on the creator; every invitee must exist and must not have blocked the creator. */
export async function createThread(bus: CommandBus, creatorId: string, input: CreateThread, ctx: CommandContext) {
  const others = [...new Set(input.participant_agent_ids.filter((id) => id !== creatorId))];
  if (others.length < 1 || others.length + 1 > MAX_PARTICIPANTS) {
    throw new DomainError(400, 'participant_count', `A group DM has 2 to ${MAX_PARTICIPANTS} participants including you`);
  }
  for (const id of others) {
    const p = await bus.load(agentStream(id), agentAggregate);
    if (!p.state.exists) throw notFound(`Agent ${id}`, 'agent_not_found');
    if (p.state.blocked[creatorId]) throw notDelivered();
  }
  const threadId = deriveId('thr', ctx.commandId);
  let created: MeshThreadCreated | undefined;
  const result = await bus.handle(
    agentStream(creatorId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const now = ctx.now.toISOString();
      const day = within(state.threads_at, now, DAY);
      const hour = within(day, now, HOUR);
      if (input.hourly_cap > 0 && hour.length >= input.hourly_cap)
        throw limited('rate_limited', `Rate limit exceeded: ${input.hourly_cap} group DMs per hour`, hour, HOUR, input.hourly_cap, ctx.now);
      if (input.daily_cap > 0 && day.length >= input.daily_cap)
        throw limited('daily_cap', `Daily cap reached: ${input.daily_cap} group DMs per 24 hours`, day, DAY, input.daily_cap, ctx.now);
      created = {
        type: 'MeshThreadCreated',
        data: {
          thread_id: threadId,
          agent_id: creatorId,
          agent_name: state.name,
          name: input.name,
          participant_agent_ids: [creatorId, ...others],
          first_message_id: deriveId('msg', ctx.commandId, 'first'),
          first_message: input.first_message,
          created_at: now,
          charge: charge(state, 'mesh_thread_create'),
        },
      };
      return [created];
    },
    ctx,
  );
  return { thread: (result.events[0]?.data ?? created?.data) as MeshThreadCreated['data'], position: result.position };
}

/** PostMeshThreadMessage: 0.25 on the sender, participants only (the thread's membership is fixed at creation). */
export async function postThreadMessage(
  bus: CommandBus,
  senderId: string,
  thread: { thread_id: string; participant_agent_ids: string[] },
  message: string,
  ctx: CommandContext,
) {
  if (!thread.participant_agent_ids.includes(senderId)) throw new DomainError(403, 'not_a_participant', 'Only participants can read or post in this group DM');
  let posted: MeshThreadMessagePosted | undefined;
  const result = await bus.handle(
    agentStream(senderId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      posted = {
        type: 'MeshThreadMessagePosted',
        data: {
          thread_id: thread.thread_id,
          message_id: deriveId('msg', ctx.commandId),
          agent_id: senderId,
          agent_name: state.name,
          participant_agent_ids: thread.participant_agent_ids,
          message,
          posted_at: ctx.now.toISOString(),
          charge: charge(state, 'mesh_thread_message'),
        },
      };
      return [posted];
    },
    ctx,
  );
  return { message: (result.events[0]?.data ?? posted?.data) as MeshThreadMessagePosted['data'], position: result.position };
}
