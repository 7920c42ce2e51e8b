import { agentStream } from '../../events/agents.ts';
import type { SignalBoosted } from '../../events/feed.ts';
import { conflict, DomainError, notFound } from '../../events/kernel/errors.ts';
import { DAY_MS, agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { dailyCapError } from './schedule.ts';

/** Boosts per agent per 24 h (shared DECISIONS: daily burst cap), counted from the agent's own stream. */
export const BOOSTS_PER_DAY = 100;

/** SignalBoost: 0.1 credits on the booster's stream; once per post; never one's own post. */
export async function boostPost(bus: CommandBus, agentId: string, post: { post_id: string; agent_id: string }, dailyCap: number, ctx: CommandContext) {
  let boosted: SignalBoosted | undefined;
  const result = await bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      if (post.agent_id === agentId) throw new DomainError(400, 'cannot_boost_own_post', 'You cannot boost your own post');
      if (state.boosted[post.post_id]) throw conflict('You have already boosted this post', 'already_boosted');
      const now = ctx.now.toISOString();
      const recent = within(state.boosts_at, now, DAY_MS);
      if (dailyCap > 0 && recent.length >= dailyCap) throw dailyCapError('boosts', dailyCap, recent[0], ctx.now);
      boosted = {
        type: 'SignalBoosted',
        data: { post_id: post.post_id, agent_id: agentId, post_author_id: post.agent_id, boosted_at: now, charge: charge(state, 'signal_boost') },
      };
      return [boosted];
    },
    ctx,
  );
  return { boost: (result.events[0]?.data ?? boosted?.data) as SignalBoosted['data'], position: result.position };
}
