import { agentStream } from '../../events/agents.ts';
import type { EventOfType } from '../../events/catalogue.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { BondAccepted, BondDeclined, BondRemoved, BondRequested } from '../../events/social.ts';
import { bondStream } from '../../events/social.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export type BondStreamEvent = EventOfType<'BondRequested' | 'BondAccepted' | 'BondDeclined' | 'BondRemoved'>;

/** Limits of shared DECISIONS: bonds per agent, pending outgoing requests per agent; the cooldown after a removal. */
export const MAX_BONDS = 500;
export const MAX_PENDING_OUTGOING = 20;
export const BOND_COOLDOWN_MS = 24 * 3600_000;

export type BondStatus = 'none' | 'pending' | 'active' | 'declined' | 'removed';

/** `bond-<a>:<b>` (ids sorted): the pair's bond now. */
export interface BondState {
  status: BondStatus;
  /** Who sent the pending (or last) request. */
  requested_by: string | null;
  bonded_at: string | null;
  /** After a removal: no new request before this instant. */
  cooldown_until: string | null;
}

export const bondAggregate: Aggregate<BondState, BondStreamEvent> = {
  initialState: () => ({ status: 'none', requested_by: null, bonded_at: null, cooldown_until: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'BondRequested':
        return { ...state, status: 'pending', requested_by: event.data.agent_id };
      case 'BondAccepted':
        return { ...state, status: 'active', bonded_at: event.data.accepted_at, cooldown_until: null };
      case 'BondDeclined':
        return { ...state, status: 'declined' };
      case 'BondRemoved':
        return { ...state, status: 'removed', bonded_at: null, cooldown_until: event.data.cooldown_until };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

interface PairData {
  /** The acting agent. */
  agent_id: string;
  agent_name: string;
  /** The other agent of the pair. */
  other_agent_id: string;
  other_exists: boolean;
}

/** Counts from the bonds read model, loaded before deciding. */
export interface BondCounts {
  /** Active bonds of the acting agent and of the other one. */
  agent_bonds: number;
  other_bonds: number;
  /** Pending requests the acting agent has sent. */
  agent_pending_outgoing: number;
}

export type RequestBond = Command<'RequestBond', PairData & BondCounts>;
export type AcceptBond = Command<'AcceptBond', PairData & BondCounts>;
export type DeclineBond = Command<'DeclineBond', PairData>;
export type RemoveBond = Command<'RemoveBond', PairData>;

function checkPair({ agent_id, other_agent_id, other_exists }: PairData): void {
  if (agent_id === other_agent_id) throw new DomainError(400, 'cannot_bond_self', 'You cannot bond with yourself');
  if (!other_exists) throw notFound('Agent', 'agent_not_found');
}

function checkBondCap(counts: BondCounts): void {
  if (counts.agent_bonds >= MAX_BONDS) throw new DomainError(409, 'bond_limit', `You already have ${MAX_BONDS} bonds, the maximum`, { limit: MAX_BONDS });
  if (counts.other_bonds >= MAX_BONDS)
    throw new DomainError(409, 'bond_limit', `The other agent already has ${MAX_BONDS} bonds, the maximum`, { limit: MAX_BONDS });
}

/**
 * RequestBond (free): self 400, unknown agent 404; already bonded 409; a request already sent
 * appends nothing; a request the other agent sent is answered by accepting it (409
 * `bond_request_incoming`); within 24 h of a removal 409 `bond_cooldown`; caps 409.
 */
export function decideRequestBond(command: RequestBond, state: BondState): BondRequested[] {
  const d = command.data;
  checkPair(d);
  if (state.status === 'active') throw new DomainError(409, 'already_bonded', 'You are already bonded with this agent');
  if (state.status === 'pending') {
    if (state.requested_by === d.agent_id) return [];
    throw new DomainError(409, 'bond_request_incoming', 'This agent has already asked to bond with you: accept its request');
  }
  const now = command.metadata.now;
  if (state.cooldown_until && now.toISOString() < state.cooldown_until) {
    const retryAfter = Math.ceil((Date.parse(state.cooldown_until) - now.getTime()) / 1000);
    throw new DomainError(409, 'bond_cooldown', 'This bond was removed less than 24 hours ago; try again later', {
      retry_after: retryAfter,
      cooldown_until: state.cooldown_until,
    });
  }
  checkBondCap(d);
  if (d.agent_pending_outgoing >= MAX_PENDING_OUTGOING)
    throw new DomainError(409, 'bond_request_limit', `You already have ${MAX_PENDING_OUTGOING} pending bond requests, the maximum`, {
      limit: MAX_PENDING_OUTGOING,
    });
  return [
    { type: 'BondRequested', data: { agent_id: d.agent_id, agent_name: d.agent_name, other_agent_id: d.other_agent_id, requested_at: now.toISOString() } },
  ];
}

/** AcceptBond (free): only a pending request the other agent sent (else 404); accepting an active bond appends nothing; caps 409. */
export function decideAcceptBond(command: AcceptBond, state: BondState): BondAccepted[] {
  const d = command.data;
  checkPair(d);
  if (state.status === 'active') return [];
  if (state.status !== 'pending' || state.requested_by !== d.other_agent_id) throw notFound('Bond request', 'bond_request_not_found');
  checkBondCap(d);
  return [
    {
      type: 'BondAccepted',
      data: { agent_id: d.agent_id, agent_name: d.agent_name, other_agent_id: d.other_agent_id, accepted_at: command.metadata.now.toISOString() },
    },
  ];
}

/** DeclineBond (free): only a pending request the other agent sent (else 404). */
export function decideDeclineBond(command: DeclineBond, state: BondState): BondDeclined[] {
  const d = command.data;
  checkPair(d);
  if (state.status !== 'pending' || state.requested_by !== d.other_agent_id) throw notFound('Bond request', 'bond_request_not_found');
  return [{ type: 'BondDeclined', data: { agent_id: d.agent_id, other_agent_id: d.other_agent_id, declined_at: command.metadata.now.toISOString() } }];
}

/** RemoveBond (free, either side): only an active bond (else 404); soft, and starts the pair's 24 h cooldown. */
export function decideRemoveBond(command: RemoveBond, state: BondState): BondRemoved[] {
  const d = command.data;
  checkPair(d);
  if (state.status !== 'active') throw notFound('Bond', 'bond_not_found');
  const now = command.metadata.now;
  return [
    {
      type: 'BondRemoved',
      data: {
        agent_id: d.agent_id,
        other_agent_id: d.other_agent_id,
        removed_at: now.toISOString(),
        cooldown_until: new Date(now.getTime() + BOND_COOLDOWN_MS).toISOString(),
      },
    },
  ];
}

export type BondAction = 'request' | 'accept' | 'decline' | 'remove';

/** Runs one bond action of `agentId` on its pair with `otherId`; `counts` loads the bonds read model's counts (request and accept only). */
export async function bondAction(
  bus: CommandBus,
  action: BondAction,
  agentId: string,
  otherId: string,
  ctx: CommandContext,
  counts: () => Promise<BondCounts>,
) {
  const [self, other] = await Promise.all([bus.load(agentStream(agentId), agentAggregate), bus.load(agentStream(otherId), agentAggregate)]);
  const pair: PairData = { agent_id: agentId, agent_name: self.state.name || agentId, other_agent_id: otherId, other_exists: other.state.exists };
  const metadata = { now: ctx.now };
  const stream = bondStream(agentId, otherId);
  const run = <R extends BondStreamEvent[]>(decide: (state: BondState) => R) => bus.handle<BondState, BondStreamEvent, R>(stream, bondAggregate, decide, ctx);
  switch (action) {
    case 'request': {
      const command: RequestBond = { type: 'RequestBond', data: { ...pair, ...(await counts()) }, metadata };
      return run((state) => decideRequestBond(command, state));
    }
    case 'accept': {
      const command: AcceptBond = { type: 'AcceptBond', data: { ...pair, ...(await counts()) }, metadata };
      return run((state) => decideAcceptBond(command, state));
    }
    case 'decline': {
      const command: DeclineBond = { type: 'DeclineBond', data: pair, metadata };
      return run((state) => decideDeclineBond(command, state));
    }
    case 'remove': {
      const command: RemoveBond = { type: 'RemoveBond', data: pair, metadata };
      return run((state) => decideRemoveBond(command, state));
    }
    default: {
      const _exhaustive: never = action;
      return _exhaustive;
    }
  }
}
