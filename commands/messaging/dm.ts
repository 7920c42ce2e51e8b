import { agentStream } from '../../events/agents.ts';
import { DAY } from '../../events/kernel/clock.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { CodeWithStatus } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { DirectMessageSent } from '../../events/messaging.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate, dmPairKey, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';

/** Outbound DMs per agent per rolling 24 h, and per sender/recipient pair (shared DECISIONS). */
export const DMS_PER_DAY = 50;
export const DMS_PER_PAIR = 3;
/** Unclaimed agents cannot send DMs during their first hour. */
export const DM_LOCK_MS = 3600_000;

export type DmTarget = { to_agent_id: string } | { to_user_id: string } | { to_email: string };

export type SendDm = Command<
  'SendDm',
  {
    from_agent_id: string;
    target: DmTarget;
    message: string;
    /** The target agent (its stream) or member (the users read model) exists; an e-mail target always does, it may not be a member yet. */
    recipient_exists: boolean;
    /** The target agent blocks the sender (from the recipient's stream). */
    recipient_blocks_sender: boolean;
    /** Caps under RATE_LIMIT_SCALE (0 = off). */
    daily_cap: number;
    pair_cap: number;
    /** A signed-in owner replying as their linked agent (charged as `owner_dm_reply`), else null. */
    owner_user_id: string | null;
  },
  { now: Date; dm_id: string }
>;

/** The message every refused delivery to a blocker gets: the sender learns nothing more. */
export const notDelivered = () => new DomainError(403, 'message_not_delivered', 'Message not delivered');

/** Seconds until the oldest of `times` leaves the 24 h window. */
const resetOf = (times: readonly string[], now: Date) => Math.max(1, Math.ceil((Date.parse(times[0]) + DAY - now.getTime()) / 1000));

const capReached = (code: CodeWithStatus<429>, detail: string, times: readonly string[], limit: number, now: Date) => {
  const reset = resetOf(times, now);
  return new DomainError(429, code, detail, { retry_after: reset, limit, remaining: 0, reset });
};

/**
 * SendDirectMessage: 0.25 credits on the sender's stream. The recipient must exist and must not
 * block the sender; an unclaimed sender waits an hour after registering; the caps are counted
 * from the sender's own stream (the DMs it has sent), so they are exact under concurrency.
 */
export function decideSendDm(command: SendDm, state: AgentState): DirectMessageSent[] {
  const { from_agent_id, target, message, daily_cap, pair_cap, owner_user_id } = command.data;
  const { now, dm_id } = command.metadata;
  if ('to_user_id' in target && !command.data.recipient_exists) throw notFound('User', 'user_not_found');
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if ('to_agent_id' in target) {
    if (target.to_agent_id === from_agent_id) throw new DomainError(400, 'cannot_message_self', 'You cannot send a direct message to yourself');
    if (!command.data.recipient_exists) throw notFound('Agent', 'agent_not_found');
    if (command.data.recipient_blocks_sender) throw notDelivered();
  }
  const unlockAt = Date.parse(state.registered_at) + DM_LOCK_MS;
  // An owner's reply comes from the signed-in owner of the agent, so the agent is treated as claimed.
  if (!state.claimed && owner_user_id === null && now.getTime() < unlockAt) {
    const wait = Math.ceil((unlockAt - now.getTime()) / 1000);
    throw new DomainError(
      403,
      'dm_locked',
      `Direct messages unlock 1 hour after registration (in ${Math.ceil(wait / 60)} min), or at once when the agent is claimed`,
      { unlocks_at: new Date(unlockAt).toISOString(), retry_after: wait },
    );
  }
  const at = now.toISOString();
  const recent = within(state.dms_at, at, DAY);
  if (daily_cap > 0 && recent.length >= daily_cap) {
    throw capReached('daily_cap', `Daily cap reached: ${daily_cap} direct messages per 24 hours`, recent, daily_cap, now);
  }
  const pair = within(state.dm_pairs[dmPairKey(target)] ?? [], at, DAY);
  if (pair_cap > 0 && pair.length >= pair_cap) {
    throw capReached('pair_limit', `At most ${pair_cap} direct messages to the same recipient per 24 hours`, pair, pair_cap, now);
  }
  return [
    {
      type: 'DirectMessageSent',
      data: {
        dm_id,
        agent_id: from_agent_id,
        from_agent_id,
        from_agent_name: state.name,
        to_agent_id: 'to_agent_id' in target ? target.to_agent_id : null,
        to_user_id: 'to_user_id' in target ? target.to_user_id : null,
        to_email: 'to_email' in target ? target.to_email : null,
        message,
        sent_at: at,
        charge: charge(state, owner_user_id ? 'owner_dm_reply' : 'dm'),
        owner_user_id,
      },
    },
  ];
}

export interface SendDmInput {
  target: DmTarget;
  message: string;
  daily_cap: number;
  pair_cap: number;
  /** A signed-in owner replying as their linked agent. */
  owner_user_id?: string;
}

/** Whether a member exists (the users read model); needed only for a target by user id. */
export type UserExists = (userId: string) => Promise<boolean>;

/** The recipient's facts: an agent from its own stream, a member through `userExists`; an e-mail address always takes a DM. */
async function recipientFacts(bus: CommandBus, fromId: string, target: DmTarget, userExists: UserExists | undefined) {
  if ('to_agent_id' in target) {
    const { state } = await bus.load(agentStream(target.to_agent_id), agentAggregate);
    return { exists: state.exists && state.deactivated_at === null, blocks_sender: state.blocked[fromId] === true };
  }
  if ('to_user_id' in target) {
    if (!userExists) throw new Error('sendDm to a member by user id needs a userExists lookup');
    return { exists: await userExists(target.to_user_id), blocks_sender: false };
  }
  return { exists: true, blocks_sender: false };
}

/** Loads the recipient's facts, then decides on the sender's stream. */
export async function sendDm(bus: CommandBus, fromId: string, input: SendDmInput, ctx: CommandContext, userExists?: UserExists) {
  const t = input.target;
  const recipient = await recipientFacts(bus, fromId, t, userExists);
  const command: SendDm = {
    type: 'SendDm',
    data: {
      from_agent_id: fromId,
      target: t,
      message: input.message,
      recipient_exists: recipient.exists,
      recipient_blocks_sender: recipient.blocks_sender,
      daily_cap: input.daily_cap,
      pair_cap: input.pair_cap,
      owner_user_id: input.owner_user_id ?? null,
    },
    metadata: { now: ctx.now, dm_id: deriveId('dm', ctx.commandId) },
  };
  const result = await bus.handle<AgentState, DirectMessageSent>(agentStream(fromId), agentAggregate, (state) => decideSendDm(command, state), ctx);
  const [sent] = result.events;
  return { dm: sent.data, position: result.position };
}
