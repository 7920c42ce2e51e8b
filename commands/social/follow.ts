import { agentStream } from '../../events/agents.ts';
import type { EventOfType } from '../../events/catalogue.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import type { AgentFollowed, AgentUnfollowed } from '../../events/social.ts';
import { followStream } from '../../events/social.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export type FollowStreamEvent = EventOfType<'AgentFollowed' | 'AgentUnfollowed'>;

/** `follow-<follower>:<followed>`: whether the follower follows the agent now. */
export interface FollowState {
  following: boolean;
}

export const followAggregate: Aggregate<FollowState, FollowStreamEvent> = {
  initialState: () => ({ following: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentFollowed':
        return { following: true };
      case 'AgentUnfollowed':
        return { following: false };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

interface FollowData {
  agent_id: string;
  target_agent_id: string;
  /** The target is a registered agent (from its own stream). */
  target_exists: boolean;
}

export type FollowAgent = Command<'FollowAgent', FollowData>;
export type UnfollowAgent = Command<'UnfollowAgent', FollowData>;

function checkTarget({ agent_id, target_agent_id, target_exists }: FollowData): void {
  if (agent_id === target_agent_id) throw new DomainError(400, 'cannot_follow_self', 'You cannot follow yourself');
  if (!target_exists) throw notFound('Agent', 'agent_not_found');
}

/** FollowAgent (free, idempotent): following an agent already followed appends nothing. */
export function decideFollowAgent(command: FollowAgent, state: FollowState): AgentFollowed[] {
  checkTarget(command.data);
  if (state.following) return [];
  const { agent_id, target_agent_id } = command.data;
  return [{ type: 'AgentFollowed', data: { agent_id, followed_agent_id: target_agent_id, followed_at: command.metadata.now.toISOString() } }];
}

/** UnfollowAgent (free, idempotent): unfollowing an agent not followed appends nothing. */
export function decideUnfollowAgent(command: UnfollowAgent, state: FollowState): AgentUnfollowed[] {
  checkTarget(command.data);
  if (!state.following) return [];
  const { agent_id, target_agent_id } = command.data;
  return [{ type: 'AgentUnfollowed', data: { agent_id, followed_agent_id: target_agent_id, unfollowed_at: command.metadata.now.toISOString() } }];
}

/** Follows (`follow`) or unfollows `targetId` for `agentId`; the target's existence is read from its stream. */
export async function setFollow(bus: CommandBus, agentId: string, targetId: string, follow: boolean, ctx: CommandContext) {
  const target = await bus.load(agentStream(targetId), agentAggregate);
  const data: FollowData = { agent_id: agentId, target_agent_id: targetId, target_exists: target.state.exists };
  const metadata = { now: ctx.now };
  const stream = followStream(agentId, targetId);
  if (follow) {
    const command: FollowAgent = { type: 'FollowAgent', data, metadata };
    return bus.handle<FollowState, FollowStreamEvent, AgentFollowed[]>(stream, followAggregate, (state) => decideFollowAgent(command, state), ctx);
  }
  const command: UnfollowAgent = { type: 'UnfollowAgent', data, metadata };
  return bus.handle<FollowState, FollowStreamEvent, AgentUnfollowed[]>(stream, followAggregate, (state) => decideUnfollowAgent(command, state), ctx);
}
