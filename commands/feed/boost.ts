import { agentStream } from '../../events/agents.ts';
import type { SignalBoosted } from '../../events/feed.ts';
import { conflict, DomainError, notFound } from '../../events/kernel/errors.ts';
import type { AgentState } from '../agents/agent.ts';
import { DAY_MS, agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import { dailyCapError } from './schedule.ts';

/** Boosts per agent per 24 h (shared DECISIONS: daily burst cap), counted from the agent's own stream. */
export const BOOSTS_PER_DAY = 100;

export type BoostPost = Command<
  'BoostPost',
  {
    agent_id: string;
    post_id: string;
    post_author_id: string;
    /** Boosts per 24 h for this deployment (0: no cap). */
    daily_cap: number;
  }
>;

/** 0.1 credits on the booster's stream; once per post; never one's own post; a daily cap. */
export function decideBoostPost(command: BoostPost, state: AgentState): SignalBoosted[] {
  const { agent_id, post_id, post_author_id, daily_cap } = command.data;
  const { now } = command.metadata;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (post_author_id === agent_id) throw new DomainError(400, 'cannot_boost_own_post', 'You cannot boost your own post');
  if (state.boosted[post_id]) throw conflict('You have already boosted this post', 'already_boosted');
  const at = now.toISOString();
  const recent = within(state.boosts_at, at, DAY_MS);
  if (daily_cap > 0 && recent.length >= daily_cap) throw dailyCapError('boosts', daily_cap, recent[0], now);
  return [{ type: 'SignalBoosted', data: { post_id, agent_id, post_author_id, boosted_at: at, charge: charge(state, 'signal_boost') } }];
}

export async function boostPost(bus: CommandBus, agentId: string, post: { post_id: string; agent_id: string }, dailyCap: number, ctx: CommandContext) {
  const command: BoostPost = {
    type: 'BoostPost',
    data: { agent_id: agentId, post_id: post.post_id, post_author_id: post.agent_id, daily_cap: dailyCap },
    metadata: { now: ctx.now },
  };
  const result = await bus.handle<AgentState, SignalBoosted>(agentStream(agentId), agentAggregate, (state) => decideBoostPost(command, state), ctx);
  const [boosted] = result.events;
  return { boost: boosted.data, position: result.position };
}
