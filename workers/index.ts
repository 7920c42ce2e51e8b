import type { Agenda, Job } from 'agenda';
import { grantDueCredits } from '../commands/credits/grant-due.ts';
import type { MonthlyCreditsGranted } from '../events/credits.ts';
import type { RecordedEvent, Subscription } from '../events/store/port.ts';
import type { Services } from '../api/services.ts';
import { agentsDueForGrant } from '../queries/agents.ts';
import { createAgenda, stopAgenda } from './agenda.ts';

export const JOBS = {
  monthlyGrant: 'credits.monthly-grant',
  grantSweep: 'credits.grant-sweep',
} as const;

export interface Workers {
  agenda: Agenda;
  /** Grants every allocation due at the clock's `now` (the sweep job's body). Returns agents granted. */
  sweepGrants(): Promise<number>;
  grantFor(agentId: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Agenda workers. A reactor turns each MonthlyCreditsGranted into a job at the agent's next
 * billing date; the job issues GrantDueCredits. A sweep every 5 minutes (and once at start)
 * re-derives due grants from the read model, so a lost job store loses nothing.
 */
export async function startWorkers(s: Services): Promise<Workers> {
  const agenda = await createAgenda({
    sqlitePath: s.config.mongodbUrl ? undefined : s.sqlitePath,
    mongodbUrl: s.config.mongodbUrl ?? undefined,
    processEvery: '5 seconds',
    // Jobs are re-derived from the log at start, so the job store need not fsync every save.
    sqliteSynchronous: 'NORMAL',
    name: `worker-${process.pid}`,
  });

  const grantFor = async (agentId: string) => {
    const now = s.clock.now();
    const result = await grantDueCredits(s.bus, agentId, { commandId: `grant:${agentId}:${now.toISOString()}`, actor: 'system:credits', requestId: null, now });
    if (result.events.length) await s.runner.waitFor(result.position);
  };

  const sweepGrants = async () => {
    let granted = 0;
    for (;;) {
      const due = await agentsDueForGrant(s.store, s.clock.now(), 500);
      if (due.length === 0) return granted;
      for (const agentId of due) await grantFor(agentId);
      granted += due.length;
      if (due.length < 500) return granted;
    }
  };

  agenda.on('error', (err: Error) => s.logger.error({ err }, 'agenda error'));
  agenda.on('fail', (err: Error, job: Job) => s.logger.warn({ err, job: job.attrs.name }, 'job failed'));
  agenda.define(JOBS.monthlyGrant, async (job: Job<{ agent_id: string }>) => {
    await grantFor(job.attrs.data.agent_id);
  });
  agenda.define(JOBS.grantSweep, async () => {
    await sweepGrants();
  });

  const schedule = async (e: RecordedEvent) => {
    if (e.type !== 'MonthlyCreditsGranted') return;
    const d = e.data as MonthlyCreditsGranted['data'];
    await agenda
      .create(JOBS.monthlyGrant, { agent_id: d.agent_id })
      .unique({ name: JOBS.monthlyGrant, 'data.agent_id': d.agent_id })
      .schedule(new Date(d.next_grant_at))
      .save();
  };

  await agenda.start();
  await agenda.every('5 minutes', JOBS.grantSweep);
  await sweepGrants();
  const reactor: Subscription = s.log.subscribeAll(await s.log.headPosition(), async (events) => {
    for (const e of events) {
      try {
        await schedule(e);
      } catch (err) {
        s.logger.error({ err, event: e.id }, 'reactor failed to schedule a job; the sweep will cover it');
      }
    }
  });

  return {
    agenda,
    sweepGrants,
    grantFor,
    async stop() {
      await reactor.close();
      await stopAgenda(agenda, { timeoutMs: s.config.shutdownTimeoutMs });
    },
  };
}
