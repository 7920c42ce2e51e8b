import { agentStream } from '../../events/agents.ts';
import type { EventOfType } from '../../events/catalogue.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { TrustStampGiven } from '../../events/social.ts';
import { stampsStream } from '../../events/social.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export type StampsStreamEvent = EventOfType<'TrustStampGiven'>;

/** At most this many distinct capabilities one endorser stamps on one target. */
export const MAX_STAMP_CAPABILITIES = 5;

/** `stamps-<endorser>:<target>`: the capabilities stamped so far. */
export interface StampsState {
  capabilities: readonly string[];
}

export const stampsAggregate: Aggregate<StampsState, StampsStreamEvent> = {
  initialState: () => ({ capabilities: [] }),
  evolve(state, event) {
    switch (event.type) {
      case 'TrustStampGiven':
        return { capabilities: [...state.capabilities, event.data.capability] };
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
};

export type StampAgent = Command<
  'StampAgent',
  {
    agent_id: string;
    agent_name: string;
    target_agent_id: string;
    /** Normalised slug. */
    capability: string;
    target_exists: boolean;
  }
>;

/**
 * StampAgent (free): self 400, unknown target 404; a capability already stamped on this target
 * appends nothing (a repeat is not counted twice); a 6th distinct capability: 400.
 */
export function decideStampAgent(command: StampAgent, state: StampsState): TrustStampGiven[] {
  const { agent_id, agent_name, target_agent_id, capability, target_exists } = command.data;
  if (agent_id === target_agent_id) throw new DomainError(400, 'cannot_endorse_self', 'You cannot endorse yourself');
  if (!target_exists) throw notFound('Agent', 'agent_not_found');
  if (state.capabilities.includes(capability)) return [];
  if (state.capabilities.length >= MAX_STAMP_CAPABILITIES)
    throw new DomainError(
      400,
      'stamp_capability_limit',
      `You have already stamped ${MAX_STAMP_CAPABILITIES} capabilities on this agent; at most ${MAX_STAMP_CAPABILITIES} per endorser and target`,
      { limit: MAX_STAMP_CAPABILITIES },
    );
  return [{ type: 'TrustStampGiven', data: { agent_id, agent_name, target_agent_id, capability, stamped_at: command.metadata.now.toISOString() } }];
}

/** Stamps `capability` (normalised) on `targetId` from `agentId`. */
export async function stampAgent(bus: CommandBus, agentId: string, targetId: string, capability: string, ctx: CommandContext) {
  const [self, target] = await Promise.all([bus.load(agentStream(agentId), agentAggregate), bus.load(agentStream(targetId), agentAggregate)]);
  const command: StampAgent = {
    type: 'StampAgent',
    data: { agent_id: agentId, agent_name: self.state.name || agentId, target_agent_id: targetId, capability, target_exists: target.state.exists },
    metadata: { now: ctx.now },
  };
  return bus.handle<StampsState, StampsStreamEvent, TrustStampGiven[]>(
    stampsStream(agentId, targetId),
    stampsAggregate,
    (state) => decideStampAgent(command, state),
    ctx,
  );
}
