import type { Agenda, Job } from 'agenda';
import { grantDueCredits } from '../commands/credits/grant-due.ts';
import type { MonthlyCreditsGranted } from '../events/credits.ts';
import type { RecordedEvent, Subscription } from '../events/store/port.ts';
import type { WorkerDeps } from './deps.ts';
import { agentsDueForGrant } from '../queries/agents/agents.ts';
import { createAgenda, stopAgenda } from './agenda.ts';
import { defineImageJobs, IMAGE_JOBS } from './feed/images.ts';
import { defineScheduledPostJobs } from './feed/scheduled-posts.ts';
import { defineMailJobs, MailNotificationChannel, openTransport } from './humans/mail/worker.ts';
import { DIGEST_JOB, produceDigests } from './humans/digests.ts';
import { CIRCLE_DIGEST_JOB, circleDigestJob } from './communities/digests.ts';
import type { WebhookWorker } from './webhooks/deliveries.ts';
import { createWebhookWorker, WEBHOOK_JOBS } from './webhooks/deliveries.ts';
import { defineNotificationJobs, NOTIFICATION_JOBS } from './messaging/notifications.ts';
import type { ScoutWorker } from './matching/scout.ts';
import { defineScoutJobs, SCOUT_JOB } from './matching/scout.ts';
import { APPEND_LANES, inLanes } from './lanes.ts';
import { defineRenewalJobs, RENEWAL_JOBS } from './credits/renewals.ts';
import { defineContractMails } from './marketplace/contract-mails.ts';
import type { TrustRun } from './marketplace/trust.ts';
import { runNightlyTrust, TRUST_JOB } from './marketplace/trust.ts';

export const JOBS = {
  monthlyGrant: 'credits.monthly-grant',
  grantSweep: 'credits.grant-sweep',
} as const;

export interface Workers {
  agenda: Agenda;
  /** Grants every allocation due at the clock's `now` (the sweep job's body). Returns agents granted. */
  sweepGrants(): Promise<number>;
  /** Webhook delivery (workers/webhooks/deliveries.ts): reactor, deliver and sweep job bodies. */
  webhooks: WebhookWorker;
  /** Removes notifications past their 90 days (the expiry job's body); returns how many. */
  expireNotifications(): Promise<number>;
  grantFor(agentId: string): Promise<void>;
  /** The renewals worker (workers/credits/renewals.ts): the sweep's body and one agent's renewal order at the clock's now. */
  renewals: { sweep(): Promise<number>; orderFor(agentId: string): Promise<string | null> };
  /** Publishes every scheduled post due at the clock's `now` (the scheduler sweep's body). Returns posts published. */
  publishDueScheduledPosts(): Promise<number>;
  /** The scheduled-post job's body for one post. */
  publishScheduledPost(postId: string): Promise<boolean>;
  /** Expires every image unreferenced a day after upload at the clock's `now` (the image job's body). Returns how many. */
  expireImages(): Promise<number>;
  /** The internal scout (workers/matching/scout.ts): reactor, job body and resume. */
  scout: ScoutWorker;
  /** The circle digest job's body (workers/communities/digests.ts): the run of the clock's day unless this process already made it; the digests produced, or null. */
  runCircleDigests(): Promise<number | null>;
  /** The nightly trust job's body: the night of the clock's `now`, unless it already ran (workers/marketplace/trust.ts). */
  runNightlyTrust(): Promise<TrustRun | null>;
  /** The contract lifecycle mails' reactor (workers/marketplace/contract-mails.ts): its resume and drain. */
  contractMails: ReturnType<typeof defineContractMails>;
  /** In-process work handed over and not yet done, by worker (the `worker_backlog` gauge). */
  backlog(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * Agenda workers. A reactor turns each MonthlyCreditsGranted into a job at the agent's next
 * billing date; the job issues GrantDueCredits. A sweep every 5 minutes (and once at start)
 * re-derives due grants from the read model, so a lost job store loses nothing.
 */
export async function startWorkers(s: WorkerDeps): Promise<Workers> {
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
      // Agents' grants are independent appends: a few at a time share the log's group commits,
      // so a start after a long pause (thousands of agents due) is not held up by one fsync each.
      await inLanes(due, APPEND_LANES, grantFor);
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

  // A scout job (or a mail retry) saved in this process is picked up at once instead of at the next poll.
  if (!agenda.hasNotificationChannel()) agenda.notifyVia(new MailNotificationChannel([SCOUT_JOB]));
  const mailTransport = openTransport(s);
  const mail = defineMailJobs(s, agenda, mailTransport);
  const contractMails = defineContractMails(s);
  agenda.define(DIGEST_JOB, async () => {
    await produceDigests(s);
  });

  const renewals = defineRenewalJobs(s, agenda);
  const webhooks = createWebhookWorker(s, agenda);
  const notifications = defineNotificationJobs(s, agenda);

  const scheduledPosts = defineScheduledPostJobs(s, agenda);
  const scout = defineScoutJobs(s, agenda);
  const images = defineImageJobs(s, agenda);

  const circleDigests = circleDigestJob(s);
  agenda.define(CIRCLE_DIGEST_JOB, async () => {
    await circleDigests();
  });

  agenda.define(TRUST_JOB, async () => {
    await runNightlyTrust(s);
  });

  await agenda.start();
  await agenda.every('30 seconds', WEBHOOK_JOBS.sweep);
  await webhooks.resume();
  await webhooks.sweep();
  await agenda.every('1 hour', NOTIFICATION_JOBS.expire);
  await notifications.expire();
  await agenda.every('5 minutes', JOBS.grantSweep);
  await sweepGrants();
  await agenda.every('5 minutes', RENEWAL_JOBS.sweep);
  await renewals.sweep();
  await scheduledPosts.resume();
  await contractMails.resume();
  await mail.resume();
  await scout.resume();
  await agenda.every('1 day', DIGEST_JOB);
  await agenda.every('1 hour', IMAGE_JOBS.expire);
  await images.expire();
  // The night's run is due from 02:00 UTC; checked every 5 minutes (not at once: a start is followed by a check within 5 minutes).
  await agenda.every('5 minutes', TRUST_JOB, {}, { skipImmediate: true });
  // Circle digests are due from 08:00 UTC each day (weekly ones on Mondays); checked every 5 minutes.
  await agenda.every('5 minutes', CIRCLE_DIGEST_JOB, {}, { skipImmediate: true });
  const reactor: Subscription = s.log.subscribeAll(await s.log.headPosition(), async (events) => {
    for (const e of events) {
      try {
        await schedule(e);
        await renewals.onEvent(e);
        await scheduledPosts.onEvent(e);
        void webhooks.onEvents([e]);
        mail.onEvent(e);
        contractMails.onEvent(e);
        void scout.onEvent(e);
      } catch (err) {
        s.logger.error({ err, event: e.id }, 'reactor failed to schedule a job; the sweep will cover it');
      }
    }
  });

  return {
    agenda,
    webhooks,
    expireNotifications: notifications.expire,
    sweepGrants,
    grantFor,
    renewals: { sweep: renewals.sweep, orderFor: renewals.orderFor },
    publishDueScheduledPosts: () => scheduledPosts.publishDue(),
    publishScheduledPost: (postId: string) => scheduledPosts.publish(postId),
    expireImages: images.expire,
    scout,
    runNightlyTrust: () => runNightlyTrust(s),
    runCircleDigests: circleDigests,
    contractMails,
    backlog: () => ({ contract_mails: contractMails.backlog(), mail: mail.backlog() }),
    async stop() {
      await reactor.close();
      await webhooks.drain();
      await contractMails.drain();
      await mail.drain();
      await scout.drain();
      await stopAgenda(agenda, { timeoutMs: s.config.shutdownTimeoutMs });
      mailTransport.close();
    },
  };
}
