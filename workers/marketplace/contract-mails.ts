import type { WorkerDeps } from '../deps.ts';
import { yieldingLanes } from '../lanes.ts';
import type { CommittedTransition, QueueContractMails } from '../../commands/marketplace/contract-mails.ts';
import { decideContractMails, mailedStep, queueContractMails } from '../../commands/marketplace/contract-mails.ts';
import { contractAggregate } from '../../commands/marketplace/contract.ts';
import { contractStream } from '../../events/marketplace.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import { getAgent } from '../../queries/agents/agents.ts';
import { mailById } from '../../queries/humans/users.ts';
import { recentlyUpdatedContracts } from '../../queries/marketplace/marketplace.ts';

/** What the reactor uses of the composition root. */
export type ContractMailDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'foreground' | 'log' | 'logger' | 'runner' | 'secrets' | 'store'>;

/** How far back the resume at start looks for mailed transitions whose mails were never queued. */
export const CONTRACT_MAIL_RESUME_WINDOW_MS = 24 * 3600_000;
const RESUME_PAGE = 1000;

/**
 * Transitions whose mails are queued at once (each two appends that share the log's group
 * commits): 16, or 1 while requests are in flight in this process and fewer than
 * CONTRACT_MAIL_BACKLOG_BOUND transitions wait.
 */
export const CONTRACT_MAIL_LANES = 16;
export const CONTRACT_MAIL_BACKLOG_BOUND = 20_000;

/**
 * The contract lifecycle mails, queued after the transition is committed instead of in its append:
 * the transition answers without them, and this reactor appends each party's `MailQueued` on its
 * `mail-<id>` stream (commands/marketplace/contract-mails.ts), which the mail worker then sends.
 * At least once: a transition whose mails were not queued (the process stopped first, or ran
 * without workers) is queued by `resume()` at the next start, over the last 24 hours; a repeat is
 * answered by the log as a duplicate.
 */
export function defineContractMails(s: ContractMailDeps) {
  const limit = yieldingLanes(s.foreground, { idle: CONTRACT_MAIL_LANES, busy: 1, backlogBound: CONTRACT_MAIL_BACKLOG_BOUND });
  const pending = new Set<Promise<unknown>>();

  const ownerEmail = async (agentId: string) => {
    const agent = await getAgent(s.store, agentId);
    return typeof agent?.owner_email === 'string' && agent.owner_email ? agent.owner_email : null;
  };

  /** The command for a transition's mails: the contract's title and each party's owner address. */
  const commandFor = async (transition: CommittedTransition, title: string): Promise<QueueContractMails> => ({
    type: 'QueueContractMails',
    data: { transition, title, to: { requester: await ownerEmail(transition.data.requester_id), provider: await ownerEmail(transition.data.provider_id) } },
    metadata: { now: s.clock.now() },
  });

  /** Queues a transition's mails: how many were queued anew, and the log position of the last. */
  const queue = async (command: QueueContractMails) => {
    const queued = await queueContractMails(s.bus, s.secrets, command, { actor: 'system:contract-mails', requestId: null, now: command.metadata.now });
    return { count: queued.filter((q) => !q.duplicate).length, position: Math.max(0, ...queued.map((q) => q.position)) };
  };

  const dispatch = (transition: CommittedTransition) => {
    const p = limit(async () => {
      const { state } = await s.bus.load(contractStream(transition.data.contract_id), contractAggregate);
      return queue(await commandFor(transition, state.title));
    }).catch((err: unknown) =>
      s.logger.error({ err, event: transition.event_id }, 'contract-mail reactor failed to queue a lifecycle mail; the resume at the next start covers it'),
    );
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  return {
    /** Reactor: a committed mailed transition gets its mails queued (in the background; `drain` waits). */
    onEvent(e: RecordedEvent): void {
      const step = mailedStep(e);
      if (step) dispatch(step);
    },

    /**
     * Queues the mails of the last 24 hours' mailed transitions that lack any (run at start): the
     * contracts updated in the window (their title from the read model), each stream read from the
     * log, a transition queued when a mail it decides is not in the `mails` read model. Returns how
     * many mails, once the read models show them (so the mail worker's own resume finds them).
     */
    async resume(): Promise<number> {
      const floor = new Date(s.clock.now().getTime() - CONTRACT_MAIL_RESUME_WINDOW_MS).toISOString();
      let queued = 0;
      let last = 0;
      for (let skip = 0; ; skip += RESUME_PAGE) {
        const page = await recentlyUpdatedContracts(s.store, floor, skip, RESUME_PAGE);
        for (const contract of page) {
          for (const e of await s.log.readStream(contractStream(String(contract._id)))) {
            const step = mailedStep(e);
            if (!step || step.data.at < floor) continue;
            const command = await commandFor(step, String(contract.title));
            const known = await Promise.all(decideContractMails(command).map((m) => mailById(s.store, m.mail_id)));
            if (known.every(Boolean)) continue;
            const r = await queue(command);
            queued += r.count;
            last = Math.max(last, r.position);
          }
        }
        if (page.length < RESUME_PAGE) break;
      }
      if (last > 0) await s.runner.waitFor(last);
      return queued;
    },

    /** Transitions whose mails are still being queued (the `worker_backlog` gauge). */
    backlog: () => pending.size,

    /** Waits until every transition handed to the reactor has its mails queued (at stop). */
    async drain(): Promise<void> {
      while (pending.size) await Promise.all([...pending]);
    },
  };
}
