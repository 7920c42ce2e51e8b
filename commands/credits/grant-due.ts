import { agentStream } from '../../events/agents.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import type { GrantMonthlyCredits } from './grant.ts';
import { decideGrantMonthlyCredits } from './grant.ts';

/** GrantDueCredits: appends the monthly grants due for one agent at `ctx.now` (none if not due). */
export function grantDueCredits(bus: CommandBus, agentId: string, ctx: CommandContext) {
  const command: GrantMonthlyCredits = { type: 'GrantMonthlyCredits', data: { agent_id: agentId }, metadata: { now: ctx.now } };
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideGrantMonthlyCredits(command, state), ctx);
}
