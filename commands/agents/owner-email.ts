import { agentStream, ownerEmailStream } from '../../events/agents.ts';
import type { OwnerEmailReserved } from '../../events/agents.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import { agentAggregate } from './agent.ts';

/** A reservation whose agent never got written (the process died in between) is taken over after this. */
export const ORPHAN_RESERVATION_MS = 60_000;

/** `owner-email-<hash>`: who holds the normalised owner e-mail (its last reservation). */
export interface OwnerEmailState {
  holder: { agent_id: string; reserved_at: string } | null;
}

export const ownerEmailAggregate: Aggregate<OwnerEmailState, OwnerEmailReserved> = {
  initialState: () => ({ holder: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'OwnerEmailReserved':
        return { holder: { agent_id: event.data.agent_id, reserved_at: event.data.reserved_at } };
      default: {
        const _exhaustive: never = event.type;
        return state;
      }
    }
  },
};

/**
 * ReserveOwnerEmail: `holder` is the fact loaded about the current holder (null when the e-mail
 * is new or already ours): whether its agent was ever written.
 */
export type ReserveOwnerEmail = Command<
  'ReserveOwnerEmail',
  {
    email_hash: string;
    agent_id: string;
    holder: { agent_id: string; registered: boolean; owner_email_released_at: string | null } | null;
  },
  { now: Date }
>;

export const ownerEmailTaken = () => new DomainError(409, 'owner_email_taken', 'An agent is already registered for this owner e-mail');

/**
 * The 409 a registration gets when the owner e-mail, as normalised (commands/agents/email.ts), has
 * an agent: it names the normalised address, so a `+tag` or dotted variant is not a mystery.
 */
export const ownerEmailTakenAs = (given: string, normalised: string) =>
  new DomainError(
    409,
    'owner_email_taken',
    `An agent is already registered for this owner e-mail. Each owner e-mail has one agent, compared after normalising: lower case, any "+tag" removed, and for Gmail dots removed and googlemail.com read as gmail.com${
      given.trim().toLowerCase() === normalised ? '' : ` ("${given.trim()}" is normalised to "${normalised}")`
    }.`,
    { normalized_owner_email: normalised },
  );

/**
 * One agent per owner e-mail: a free e-mail is reserved; a reservation of this very agent (a
 * retried registration) stands; a reservation whose agent was never written is taken over once it
 * is older than a minute; so is the e-mail of a deactivated agent once its 30 days are over
 * (`owner_email_released_at`); any other holder refuses with 409.
 */
export function decideReserveOwnerEmail(command: ReserveOwnerEmail, state: OwnerEmailState): OwnerEmailReserved[] {
  const { email_hash, agent_id, holder } = command.data;
  const reserved: OwnerEmailReserved = { type: 'OwnerEmailReserved', data: { email_hash, agent_id, reserved_at: command.metadata.now.toISOString() } };
  const current = state.holder;
  if (current === null) return [reserved];
  if (current.agent_id === agent_id) return [];
  const orphan =
    holder !== null &&
    holder.agent_id === current.agent_id &&
    !holder.registered &&
    command.metadata.now.getTime() - new Date(current.reserved_at).getTime() > ORPHAN_RESERVATION_MS;
  const released =
    holder !== null &&
    holder.agent_id === current.agent_id &&
    holder.owner_email_released_at !== null &&
    command.metadata.now.toISOString() >= holder.owner_email_released_at;
  if (orphan || released) return [reserved];
  throw ownerEmailTaken();
}

/**
 * Reserves the e-mail before the agent is written. A new e-mail is appended with "no stream"
 * (no read first: only one registration can win); on a conflict the holder is loaded, and a
 * takeover of an orphaned reservation is appended with the revision it was decided on.
 */
export async function reserveOwnerEmail(bus: CommandBus, emailHash: string, agentId: string, ctx: CommandContext): Promise<void> {
  const stream = ownerEmailStream(emailHash);
  const command: ReserveOwnerEmail = {
    type: 'ReserveOwnerEmail',
    data: { email_hash: emailHash, agent_id: agentId, holder: null },
    metadata: { now: ctx.now },
  };
  try {
    await bus.appendRaw(stream, decideReserveOwnerEmail(command, ownerEmailAggregate.initialState()), 'no_stream', ctx);
    return;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
  const { state } = await bus.load(stream, ownerEmailAggregate);
  const held = state.holder;
  let holder: ReserveOwnerEmail['data']['holder'] = null;
  if (held && held.agent_id !== agentId) {
    const { state: agent } = await bus.load(agentStream(held.agent_id), agentAggregate);
    holder = { agent_id: held.agent_id, registered: agent.exists, owner_email_released_at: agent.owner_email_released_at };
  }
  const takeover: ReserveOwnerEmail = { ...command, data: { ...command.data, holder } };
  try {
    await bus.handle(stream, ownerEmailAggregate, (s) => decideReserveOwnerEmail(takeover, s), { ...ctx, commandId: `${ctx.commandId}:takeover` });
  } catch (err) {
    // Another registration moved the reservation meanwhile, again and again: it holds the e-mail.
    if ((err as { code?: unknown }).code === 'concurrency_conflict') throw ownerEmailTaken();
    throw err;
  }
}
