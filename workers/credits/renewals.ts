import type { Agenda, Job } from 'agenda';
import { skipDeactivated } from '../../commands/agents/agent.ts';
import { RENEWAL_NOTICE_MS } from '../../commands/credits/billing.ts';
import type { RenewalDeps } from '../../commands/credits/renewals.ts';
import { orderRenewal } from '../../commands/credits/renewals.ts';
import { eliteAgentOf } from '../../commands/humans/ownership.ts';
import type { AgentTierRenewed, AgentTierUpgraded } from '../../events/credits.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { agentsDueForRenewal, getAgent } from '../../queries/agents/agents.ts';
import type { WorkerDeps } from '../deps.ts';
import { APPEND_LANES, inLanes } from '../lanes.ts';

export const RENEWAL_JOBS = {
  /** One agent's renewal order, scheduled at its paid month's end less the notice. */
  one: 'credits.renewal',
  /** Every renewal due (every 5 minutes and at start): a lost job store loses nothing. */
  sweep: 'credits.renewal-sweep',
} as const;

export type RenewalWorkerDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'config' | 'logger' | 'payments' | 'runner' | 'secrets' | 'store'>;

/**
 * The renewals worker: a paid tier's renewal order (and the mail to its owner) RENEWAL_NOTICE_MS
 * before its billing day. A reactor schedules the agent's job when a paid month starts (an
 * upgrade, a renewal); the sweep re-derives every due renewal from the read model. The lapse of an
 * unpaid month is the grants worker's (commands/credits/grant.ts), on the billing day itself.
 */
export function defineRenewalJobs(s: RenewalWorkerDeps, agenda: Agenda) {
  const deps: RenewalDeps = {
    billing: {
      bus: s.bus,
      provider: s.payments,
      prices: s.config.tierPrices,
      baseUrl: s.config.publicBaseUrl,
      inAppAgentOf: (userId) => eliteAgentOf(s.bus, userId),
    },
    secrets: s.secrets,
    ownerEmail: async (agentId) => {
      const agent = await getAgent(s.store, agentId);
      return typeof agent?.owner_email === 'string' && agent.owner_email ? agent.owner_email : null;
    },
  };

  /** Orders one agent's renewal if it is due at the clock's now; returns the order id (null: nothing due). */
  const orderFor = async (agentId: string): Promise<string | null> => {
    try {
      const r = await orderRenewal(deps, agentId, { actor: 'system:renewals', requestId: null, now: s.clock.now() });
      if (r.position) await s.runner.waitFor(r.position);
      return r.order_id;
    } catch (err) {
      return skipDeactivated(err);
    }
  };

  /** Every renewal due at the clock's now (one pass: an agent whose order fails is tried again at the next sweep). Returns how many were looked at. */
  const sweep = async (): Promise<number> => {
    if (!s.payments) return 0;
    const due = await agentsDueForRenewal(s.store, s.clock.now(), 1000);
    await inLanes(due, APPEND_LANES, async (agentId) => {
      try {
        await orderFor(agentId);
      } catch (err) {
        s.logger.warn({ err, agent_id: agentId }, 'renewal order failed; the next sweep tries again');
      }
    });
    return due.length;
  };

  agenda.define(RENEWAL_JOBS.one, async (job: Job<{ agent_id: string }>) => {
    await orderFor(job.attrs.data.agent_id);
  });
  agenda.define(RENEWAL_JOBS.sweep, async () => {
    await sweep();
  });

  return {
    orderFor,
    sweep,
    /** Reactor: a paid month that starts (an upgrade, a renewal) schedules its renewal order. */
    async onEvent(e: RecordedEvent): Promise<void> {
      if (e.type !== 'AgentTierUpgraded' && e.type !== 'AgentTierRenewed') return;
      const d = e.data as AgentTierUpgraded['data'] | AgentTierRenewed['data'];
      const paidUntil = 'paid_until' in d ? d.paid_until : d.next_grant_at;
      await agenda
        .create(RENEWAL_JOBS.one, { agent_id: d.agent_id })
        .unique({ name: RENEWAL_JOBS.one, 'data.agent_id': d.agent_id })
        .schedule(new Date(Date.parse(paidUntil) - RENEWAL_NOTICE_MS))
        .save();
    },
  };
}
