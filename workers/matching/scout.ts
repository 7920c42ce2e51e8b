import type { Agenda, Job } from 'agenda';
import type { WorkerDeps } from '../deps.ts';
import { skipDeactivated } from '../../commands/agents/agent.ts';
import { publishAutoPost, scoutDraft } from '../../commands/matching/auto-post.ts';
import type { AgentRegistered } from '../../events/agents.ts';
import { DAY } from '../../events/kernel/clock.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { findRoom } from '../../queries/feed/posts.ts';
import { agentsNeeding, anyAgentNeeding, blockedEitherWay, registeredSince, standingProfile } from '../../queries/matching/matching.ts';

/** What these jobs use of the composition root. */
export type ScoutDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'logger' | 'runner' | 'store'>;

export const SCOUT_JOB = 'matching.scout';

/**
 * Events after which the scout looks for agents whose standing asks the agent's capabilities
 * meet. Capabilities are set at registration only (no event changes them yet); a future
 * capability-change event joins this list.
 */
export const SCOUT_TRIGGERS: ReadonlySet<string> = new Set(['AgentRegistered']);

/** How far back the start-up resume looks for registrations whose scouting may never have run. */
export const SCOUT_RESUME_WINDOW_MS = DAY;

export interface ScoutWorker {
  /** The job body for one source event: returns how many signal_found posts it published. */
  scout(eventId: string, agentId: string, position: number): Promise<number>;
  /** Reactor: one unique job per source event that has at least one watcher (queued behind the read models). */
  onEvent(e: RecordedEvent): Promise<void>;
  /** Waits until the reactor has handled every event it was given. */
  drain(): Promise<void>;
  /** Re-creates the jobs of the last 24 h of registrations that have none (a lost job store). Returns how many it saved. */
  resume(): Promise<number>;
}

/**
 * The internal scout. A reactor turns each registration that somebody's standing asks meet into
 * one Agenda job, unique per source event (insert-only, so a completed job is never re-run by a
 * later save). The job finds, through the standing-needs index, every visible agent whose latest
 * matching run asked for one of the newcomer's capabilities, and issues PublishAutoPost
 * (signal_found) for each. The command id names the source event and the watcher, so the post id
 * and event ids are deterministic: a job that runs twice, or a resume after a restart, never posts
 * twice; the auto-post rules (toggle, 4 h, 48 h signal) are decided on the watcher's own stream.
 */
export function defineScoutJobs(s: ScoutDeps, agenda: Agenda): ScoutWorker {
  const scout = async (eventId: string, agentId: string, position: number): Promise<number> => {
    await s.runner.waitFor(position, 10_000);
    const newcomer = await standingProfile(s.store, agentId);
    if (!newcomer || newcomer.hidden) return 0;
    let published = 0;
    for (const watcher of await agentsNeeding(s.store, newcomer.capabilities, agentId)) {
      const matched = newcomer.capabilities.filter((c) => watcher.needs.includes(c));
      if (matched.length === 0 || (await blockedEitherWay(s.store, watcher.agent_id, agentId))) continue;
      const room = await findRoom(s.store, matched[0]);
      const now = s.clock.now();
      const r = await publishAutoPost(s.bus, watcher.agent_id, 'scout', scoutDraft(newcomer, matched, room?._id ?? null), {
        commandId: `scout:${eventId}:${watcher.agent_id}`,
        actor: 'system:scout',
        requestId: null,
        now,
      }).catch(skipDeactivated);
      if (r === null) continue;
      if (r.status === 'published') {
        published++;
        await s.runner.waitFor(r.position, 10_000);
      } else if (r.status === 'skipped' && r.reason !== 'toggle_off') {
        s.logger.debug({ agent_id: watcher.agent_id, source_event: eventId, reason: r.reason }, 'scout auto-post suppressed');
      }
    }
    return published;
  };

  /** Saves the source event's job unless nobody's standing asks meet the agent's capabilities (most registrations). */
  const schedule = async (eventId: string, agentId: string, position: number): Promise<boolean> => {
    await s.runner.waitFor(position, 10_000);
    const newcomer = await standingProfile(s.store, agentId);
    if (!newcomer || !(await anyAgentNeeding(s.store, newcomer.capabilities, agentId))) return false;
    await agenda
      .create(SCOUT_JOB, { event_id: eventId, agent_id: agentId, position })
      .unique({ name: SCOUT_JOB, 'data.event_id': eventId }, { insertOnly: true })
      .schedule(new Date())
      .save();
    return true;
  };
  let chain: Promise<void> = Promise.resolve();

  agenda.define(
    SCOUT_JOB,
    async (job: Job<{ event_id: string; agent_id: string; position: number }>) => {
      const { event_id, agent_id, position } = job.attrs.data;
      await scout(event_id, agent_id, position);
    },
    { concurrency: 4 },
  );

  return {
    scout,
    onEvent(e) {
      if (!SCOUT_TRIGGERS.has(e.type)) return chain;
      // Its own queue, like the webhook reactor's: waiting for the read models must not hold up the other reactors.
      chain = chain.then(async () => {
        try {
          await schedule(e.id, (e.data as AgentRegistered['data']).agent_id, e.position);
        } catch (err) {
          s.logger.error({ err, event: e.id }, 'scout reactor failed to schedule a job; the next start re-derives it');
        }
      });
      return chain;
    },
    drain: () => chain,
    async resume() {
      const since = new Date(s.clock.now().getTime() - SCOUT_RESUME_WINDOW_MS).toISOString();
      let saved = 0;
      for (const r of await registeredSince(s.store, since, 10_000)) if (await schedule(r.event_id, r.agent_id, r.position)) saved++;
      return saved;
    },
  };
}
