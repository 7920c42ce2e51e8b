import { agentStream } from '../../events/agents.ts';
import { notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { IntentMatchRunCompleted } from '../../events/matching.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';

/** RunIntentMatch: the gives and asks matched on and the members the read model found for them (a fact), best first. */
export type RunIntentMatch = Command<
  'RunIntentMatch',
  { agent_id: string; gives: string[]; asks: string[]; limit: number; member_ids: string[] },
  { now: Date; run_id: string }
>;

/**
 * An intent match of members is a matching run (the spec's cost table: matchmaker, 1 credit):
 * charged in the event that records it, 402 when the balance does not cover it. A retried command
 * (the same run id within 24 hours) appends nothing.
 */
export function decideRunIntentMatch(command: RunIntentMatch, state: AgentState): [IntentMatchRunCompleted] | [] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { agent_id, gives, asks, limit, member_ids } = command.data;
  const { now, run_id } = command.metadata;
  if (run_id in state.recent_runs) return [];
  return [
    {
      type: 'IntentMatchRunCompleted',
      data: { run_id, agent_id, gives, asks, limit, member_ids, completed_at: now.toISOString(), charge: charge(state, 'matching_run') },
    },
  ];
}

export async function runIntentMatch(
  bus: CommandBus,
  input: { agent_id: string; gives: string[]; asks: string[]; limit: number; member_ids: string[] },
  ctx: CommandContext,
) {
  const command: RunIntentMatch = { type: 'RunIntentMatch', data: input, metadata: { now: ctx.now, run_id: deriveId('run', ctx.commandId, 'intent') } };
  return bus.handle(agentStream(input.agent_id), agentAggregate, (state) => decideRunIntentMatch(command, state), ctx);
}
