import { agentStream } from '../../events/agents.ts';
import { DAY } from '../../events/kernel/clock.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { DirectMessageSent } from '../../events/messaging.ts';
import { agentAggregate, dmPairKey, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';

/** Outbound DMs per agent per rolling 24 h, and per sender/recipient pair (shared DECISIONS). */
export const DMS_PER_DAY = 50;
export const DMS_PER_PAIR = 3;
/** Unclaimed agents cannot send DMs during their first hour. */
export const DM_LOCK_MS = 3600_000;

export type DmTarget = { to_agent_id: string } | { to_user_id: string } | { to_email: string };

export interface SendDm {
  target: DmTarget;
  message: string;
  /** The sender's claim state from the agents read model (claiming is recorded by the humans area). */
  sender_claimed: boolean;
  /** Caps under RATE_LIMIT_SCALE (0 = off). */
  daily_cap: number;
  pair_cap: number;
  /** A signed-in owner replying as their linked agent (charged as `owner_dm_reply`). */
  owner_user_id?: string;
}

/** The message every refused delivery to a blocker gets: the sender learns nothing more. */
export const notDelivered = () => new DomainError(403, 'message_not_delivered', 'Message not delivered');

/** Seconds until the oldest of `times` leaves the 24 h window. */
const resetOf = (times: readonly string[], now: Date) => Math.max(1, Math.ceil((Date.parse(times[0]) + DAY - now.getTime()) / 1000));

/**
 * SendDirectMessage: 0.25 credits on the sender's stream. The caps are counted from the sender's
 * own stream (the DMs it has sent), so they are exact under concurrency and across processes.
 * A blocked sender is refused before anything is decided: nothing is appended or charged.
 */
export async function sendDm(bus: CommandBus, fromId: string, input: SendDm, ctx: CommandContext) {
  const t = input.target;
  if ('to_agent_id' in t) {
    if (t.to_agent_id === fromId) throw new DomainError(400, 'cannot_message_self', 'You cannot send a direct message to yourself');
    const recipient = await bus.load(agentStream(t.to_agent_id), agentAggregate);
    if (!recipient.state.exists) throw notFound('Agent', 'agent_not_found');
    if (recipient.state.blocked[fromId]) throw notDelivered();
  }
  const dmId = deriveId('dm', ctx.commandId);
  let sent: DirectMessageSent | undefined;
  const result = await bus.handle(
    agentStream(fromId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      const now = ctx.now.toISOString();
      const unlockAt = Date.parse(state.registered_at) + DM_LOCK_MS;
      if (!input.sender_claimed && !state.claimed && ctx.now.getTime() < unlockAt) {
        const wait = Math.ceil((unlockAt - ctx.now.getTime()) / 1000);
        throw new DomainError(
          403,
          'dm_locked',
          `Direct messages unlock 1 hour after registration (in ${Math.ceil(wait / 60)} min), or at once when the agent is claimed`,
          {
            unlocks_at: new Date(unlockAt).toISOString(),
            retry_after: wait,
          },
        );
      }
      const recent = within(state.dms_at, now, DAY);
      if (input.daily_cap > 0 && recent.length >= input.daily_cap) {
        const reset = resetOf(recent, ctx.now);
        throw new DomainError(429, 'daily_cap', `Daily cap reached: ${input.daily_cap} direct messages per 24 hours`, {
          retry_after: reset,
          limit: input.daily_cap,
          remaining: 0,
          reset,
        });
      }
      const key = dmPairKey(t);
      const pair = within(state.dm_pairs[key] ?? [], now, DAY);
      if (input.pair_cap > 0 && pair.length >= input.pair_cap) {
        const reset = resetOf(pair, ctx.now);
        throw new DomainError(429, 'pair_limit', `At most ${input.pair_cap} direct messages to the same recipient per 24 hours`, {
          retry_after: reset,
          limit: input.pair_cap,
          remaining: 0,
          reset,
        });
      }
      sent = {
        type: 'DirectMessageSent',
        data: {
          dm_id: dmId,
          agent_id: fromId,
          from_agent_id: fromId,
          from_agent_name: state.name,
          to_agent_id: 'to_agent_id' in t ? t.to_agent_id : null,
          to_user_id: 'to_user_id' in t ? t.to_user_id : null,
          to_email: 'to_email' in t ? t.to_email : null,
          message: input.message,
          sent_at: now,
          charge: charge(state, input.owner_user_id ? 'owner_dm_reply' : 'dm'),
          ...(input.owner_user_id ? { owner_user_id: input.owner_user_id } : {}),
        },
      };
      return [sent];
    },
    ctx,
  );
  return { dm: (result.events[0]?.data ?? sent?.data) as DirectMessageSent['data'], position: result.position };
}
