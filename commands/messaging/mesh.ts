import { agentStream } from '../../events/agents.ts';
import { DAY, HOUR } from '../../events/kernel/clock.ts';
import { DomainError, ValidationFailed, notFound } from '../../events/kernel/errors.ts';
import type { CodeWithStatus } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { MeshThreadCreated, MeshThreadMessagePosted } from '../../events/messaging.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import { notDelivered } from './dm.ts';

/** Mesh threads: 2 to 10 participants including the creator (shared DECISIONS); creation 10 per hour, 20 per day. */
export const MAX_PARTICIPANTS = 10;
export const THREADS_PER_HOUR = 10;
export const THREADS_PER_DAY = 20;

const limited = (code: CodeWithStatus<429>, detail: string, times: readonly string[], windowMs: number, limit: number, now: Date) => {
  const reset = Math.max(1, Math.ceil((Date.parse(times[0]) + windowMs - now.getTime()) / 1000));
  return new DomainError(429, code, detail, { retry_after: reset, limit, remaining: 0, reset });
};

/** The other participants a creator names: distinct, without the creator, in the order given. */
export function inviteesOf(creatorId: string, participantIds: readonly string[]): string[] {
  return [...new Set(participantIds.filter((id) => id !== creatorId))];
}

export interface InviteeFacts {
  agent_id: string;
  exists: boolean;
  blocks_creator: boolean;
}

export type CreateMeshThread = Command<
  'CreateMeshThread',
  {
    creator_agent_id: string;
    participant_agent_ids: string[];
    name: string | null;
    first_message: string;
    /** Each invitee's facts, from its own stream: it exists, and it blocks the creator. */
    invitees: ReadonlyArray<InviteeFacts>;
    /** Caps under RATE_LIMIT_SCALE (0 = off). */
    hourly_cap: number;
    daily_cap: number;
  },
  { now: Date; thread_id: string; first_message_id: string }
>;

/** CreateMeshThread: flat 0.25 on the creator; 2 to 10 participants; every invitee must exist and must not have blocked the creator. */
export function decideCreateMeshThread(command: CreateMeshThread, state: AgentState): MeshThreadCreated[] {
  const { creator_agent_id, participant_agent_ids, invitees, hourly_cap, daily_cap } = command.data;
  const { now } = command.metadata;
  const others = inviteesOf(creator_agent_id, participant_agent_ids);
  if (others.length < 1 || others.length + 1 > MAX_PARTICIPANTS) {
    throw new ValidationFailed([
      {
        loc: ['body', 'participant_agent_ids'],
        msg: `A group DM has 2 to ${MAX_PARTICIPANTS} participants including you`,
        type: 'value_error.participant_count',
      },
    ]);
  }
  for (const id of others) {
    const invitee = invitees.find((i) => i.agent_id === id);
    if (!invitee?.exists) throw notFound(`Agent ${id}`, 'agent_not_found');
    if (invitee.blocks_creator) throw notDelivered();
  }
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const at = now.toISOString();
  const day = within(state.threads_at, at, DAY);
  const hour = within(day, at, HOUR);
  if (hourly_cap > 0 && hour.length >= hourly_cap)
    throw limited('rate_limited', `Rate limit exceeded: ${hourly_cap} group DMs per hour`, hour, HOUR, hourly_cap, now);
  if (daily_cap > 0 && day.length >= daily_cap) throw limited('daily_cap', `Daily cap reached: ${daily_cap} group DMs per 24 hours`, day, DAY, daily_cap, now);
  return [
    {
      type: 'MeshThreadCreated',
      data: {
        thread_id: command.metadata.thread_id,
        agent_id: creator_agent_id,
        agent_name: state.name,
        name: command.data.name,
        participant_agent_ids: [creator_agent_id, ...others],
        first_message_id: command.metadata.first_message_id,
        first_message: command.data.first_message,
        created_at: at,
        charge: charge(state, 'mesh_thread_create'),
      },
    },
  ];
}

export interface CreateThread {
  participant_agent_ids: string[];
  name: string | null;
  first_message: string;
  hourly_cap: number;
  daily_cap: number;
}

export async function createThread(bus: CommandBus, creatorId: string, input: CreateThread, ctx: CommandContext) {
  const invitees: InviteeFacts[] = [];
  for (const id of inviteesOf(creatorId, input.participant_agent_ids)) {
    const p = await bus.load(agentStream(id), agentAggregate);
    invitees.push({ agent_id: id, exists: p.state.exists && p.state.deactivated_at === null, blocks_creator: p.state.blocked[creatorId] === true });
  }
  const command: CreateMeshThread = {
    type: 'CreateMeshThread',
    data: {
      creator_agent_id: creatorId,
      participant_agent_ids: input.participant_agent_ids,
      name: input.name,
      first_message: input.first_message,
      invitees,
      hourly_cap: input.hourly_cap,
      daily_cap: input.daily_cap,
    },
    metadata: { now: ctx.now, thread_id: deriveId('thr', ctx.commandId), first_message_id: deriveId('msg', ctx.commandId, 'first') },
  };
  const result = await bus.handle<AgentState, MeshThreadCreated>(
    agentStream(creatorId),
    agentAggregate,
    (state) => decideCreateMeshThread(command, state),
    ctx,
  );
  const [created] = result.events;
  return { thread: created.data, position: result.position };
}

export type PostMeshThreadMessage = Command<
  'PostMeshThreadMessage',
  { sender_agent_id: string; thread_id: string; participant_agent_ids: string[]; message: string },
  { now: Date; message_id: string }
>;

/** PostMeshThreadMessage: 0.25 on the sender, participants only (the thread's membership is fixed at creation). */
export function decidePostMeshThreadMessage(command: PostMeshThreadMessage, state: AgentState): MeshThreadMessagePosted[] {
  const { sender_agent_id, thread_id, participant_agent_ids, message } = command.data;
  if (!participant_agent_ids.includes(sender_agent_id)) throw new DomainError(403, 'not_a_participant', 'Only participants can read or post in this group DM');
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  return [
    {
      type: 'MeshThreadMessagePosted',
      data: {
        thread_id,
        message_id: command.metadata.message_id,
        agent_id: sender_agent_id,
        agent_name: state.name,
        participant_agent_ids,
        message,
        posted_at: command.metadata.now.toISOString(),
        charge: charge(state, 'mesh_thread_message'),
      },
    },
  ];
}

/** `thread` comes from the mesh-threads read model (its membership never changes after creation). */
export async function postThreadMessage(
  bus: CommandBus,
  senderId: string,
  thread: { thread_id: string; participant_agent_ids: string[] },
  message: string,
  ctx: CommandContext,
) {
  const command: PostMeshThreadMessage = {
    type: 'PostMeshThreadMessage',
    data: { sender_agent_id: senderId, thread_id: thread.thread_id, participant_agent_ids: thread.participant_agent_ids, message },
    metadata: { now: ctx.now, message_id: deriveId('msg', ctx.commandId) },
  };
  const result = await bus.handle<AgentState, MeshThreadMessagePosted>(
    agentStream(senderId),
    agentAggregate,
    (state) => decidePostMeshThreadMessage(command, state),
    ctx,
  );
  const [posted] = result.events;
  return { message: posted.data, position: result.position };
}
