import { agentStream } from '../../events/agents.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { CommandBus, CommandContext, CommandResult } from '../handler.ts';
import { decideMonthlyGrants } from './grant.ts';

/** GrantDueCredits: appends the monthly grants due for one agent at `ctx.now` (none if not due). */
export function grantDueCredits(bus: CommandBus, agentId: string, ctx: CommandContext): Promise<CommandResult> {
  return bus.handle(agentStream(agentId), agentAggregate, (state) => decideMonthlyGrants(state, ctx.now), ctx);
}
