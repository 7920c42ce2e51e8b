import type { WorkerDeps } from '../deps.ts';
import { recordDigest } from '../../commands/humans/owner.ts';
import type { DigestItem } from '../../events/humans.ts';
import { agentsWithCapabilities, latestDigest, usersWithAgents } from '../../queries/humans/users.ts';
import { getAgent } from '../../queries/agents/agents.ts';

/** What these jobs use of the composition root. */
export type DigestDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'runner' | 'store'>;

export const DIGEST_JOB = 'humans.digests';
const FIRST_WINDOW_MS = 7 * 24 * 3600_000;
const MAX_ITEMS = 10;

/**
 * Passive match digests: for each user with a linked agent, the agents that joined since the
 * user's last digest (the last 7 days for the first one) and share a capability with it. One
 * digest per user per UTC day at most (the command id names the day). Returns digests produced.
 */
export async function produceDigests(s: DigestDeps): Promise<number> {
  const now = s.clock.now();
  let produced = 0;
  for (const user of await usersWithAgents(s.store, 100_000)) {
    const agent = await getAgent(s.store, String(user.agent_id));
    if (!agent) continue;
    const last = await latestDigest(s.store, user._id);
    const since = typeof last?.produced_at === 'string' ? last.produced_at : new Date(now.getTime() - FIRST_WINDOW_MS).toISOString();
    const own = new Set((user.agent_ids as string[] | undefined) ?? []);
    const capabilities = (agent.capabilities as string[] | undefined) ?? [];
    const items: DigestItem[] = [];
    for (const other of await agentsWithCapabilities(s.store, capabilities, 500)) {
      if (own.has(other._id) || String(other.created_at) <= since) continue;
      const shared = ((other.capabilities as string[] | undefined) ?? []).filter((c) => capabilities.includes(c));
      items.push({
        agent_id: other._id,
        name: String(other.name),
        shared_capabilities: shared,
        reason: `Shares ${shared.join(', ')} with ${String(agent.name)}`,
      });
      if (items.length >= MAX_ITEMS) break;
    }
    if (items.length === 0) continue;
    const r = await recordDigest(s.bus, user._id, String(agent._id), items, since, {
      commandId: `digest:${user._id}:${now.toISOString().slice(0, 10)}`,
      actor: 'system:digests',
      requestId: null,
      now,
    });
    if (r.events.length) {
      produced++;
      await s.runner.waitFor(r.position, 10_000);
    }
  }
  return produced;
}
