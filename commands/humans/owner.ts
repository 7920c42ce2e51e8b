import { agentStream } from '../../events/agents.ts';
import type { AutoPostPrefsChanged, DigestItem, DigestProduced, DigestRead } from '../../events/humans.ts';
import { userStream } from '../../events/humans.ts';
import { DomainError, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { CommandBus, CommandContext } from '../handler.ts';
import { userAggregate } from './user.ts';

export interface AutoPostPrefs {
  auto_post_on_scout?: boolean;
  auto_post_on_mixer?: boolean;
}

/** The owner's toggles; only the user the agent is linked to may change them. */
export function setAutoPostPrefs(bus: CommandBus, userId: string, agentId: string, prefs: AutoPostPrefs, ctx: CommandContext) {
  return bus.handle(
    agentStream(agentId),
    agentAggregate,
    (state) => {
      if (!state.exists) throw notFound('Agent', 'agent_not_found');
      if (state.owner_user_id !== userId) throw new DomainError(403, 'not_owner', 'Only the owner of this agent may do this');
      const data: AutoPostPrefsChanged['data'] = { agent_id: agentId, changed_at: ctx.now.toISOString() };
      if (prefs.auto_post_on_scout !== undefined) data.auto_post_on_scout = prefs.auto_post_on_scout;
      if (prefs.auto_post_on_mixer !== undefined) data.auto_post_on_mixer = prefs.auto_post_on_mixer;
      if (Object.keys(data).length === 2) return [];
      return [{ type: 'AutoPostPrefsChanged', data } satisfies AutoPostPrefsChanged];
    },
    ctx,
  );
}

/**
 * Records a digest the digest worker computed. The command id names the user and the period, so a
 * job that runs twice for the same period appends one digest.
 */
export function recordDigest(bus: CommandBus, userId: string, agentId: string, items: DigestItem[], since: string, ctx: CommandContext) {
  const digestId = deriveId('dig', ctx.commandId);
  return bus.handle(
    userStream(userId),
    userAggregate,
    (state) => {
      if (!state.exists || items.length === 0 || digestId in state.digests) return [];
      return [
        {
          type: 'DigestProduced',
          data: { digest_id: digestId, user_id: userId, agent_id: agentId, items, since, produced_at: ctx.now.toISOString() },
        } satisfies DigestProduced,
      ];
    },
    ctx,
  );
}

/** Marks one of the user's own digests read (404 for anyone else's: its existence is not disclosed). */
export function markDigestRead(bus: CommandBus, userId: string, digestId: string, ctx: CommandContext) {
  return bus.handle(
    userStream(userId),
    userAggregate,
    (state) => {
      if (!(digestId in state.digests)) throw notFound('Digest', 'digest_not_found');
      if (state.digests[digestId]) return [];
      return [{ type: 'DigestRead', data: { digest_id: digestId, user_id: userId, read_at: ctx.now.toISOString() } } satisfies DigestRead];
    },
    ctx,
  );
}
