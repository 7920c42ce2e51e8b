import type { Agenda, Job, JobNotification } from 'agenda';
import { InMemoryNotificationChannel } from 'agenda';
import type { WorkerDeps } from '../../deps.ts';
import { yieldingLanes } from '../../lanes.ts';
import type { MailTemplate, MailTemplates } from '../../../commands/humans/mail.ts';
import { recordMailOutcome } from '../../../commands/humans/mail.ts';
import type { MailQueued } from '../../../events/humans.ts';
import type { RecordedEvent } from '../../../events/store/port.ts';
import { mailById, pendingMails } from '../../../queries/humans/users.ts';
import { renderMail } from './templates.ts';
import type { MailTransport } from './transport.ts';
import { OutboxTransport, SmtpTransport } from './transport.ts';

/** What these jobs use of the composition root. */
export type MailDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'config' | 'foreground' | 'logger' | 'runner' | 'secrets' | 'store'>;

export const MAIL_JOB = 'mail.send';
/** Retry delays after the 1st, 2nd, ... failed attempt; after the last one the mail is given up (and recorded so). */
export const MAIL_RETRY_DELAYS_MS = [2_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

/**
 * Agenda's in-process notification channel, limited to mail jobs (and the other job names given):
 * a queued mail starts at once instead of at the next poll, while every other job keeps Agenda's
 * polling behaviour.
 */
export class MailNotificationChannel extends InMemoryNotificationChannel {
  private readonly immediate: ReadonlySet<string>;
  constructor(alsoImmediate: string[] = []) {
    super();
    this.immediate = new Set([MAIL_JOB, ...alsoImmediate]);
  }
  override async publish(notification: JobNotification): Promise<void> {
    if (this.immediate.has(notification.jobName)) await super.publish(notification);
  }
}

export function openTransport(s: MailDeps): MailTransport {
  return s.config.smtpUrl ? new SmtpTransport(s.config.smtpUrl) : new OutboxTransport(s.config.mailOutboxDir);
}

export function mailFrom(s: MailDeps): string {
  const host = new URL(s.config.publicBaseUrl).hostname;
  return `Agent Network <no-reply@${host.includes('.') ? host : `${host}.localdomain`}>`;
}

/** A recorded failed attempt (its number, whether it was the last, the MailSendFailed position). */
class MailAttemptFailed extends Error {
  constructor(
    readonly attempt: number,
    readonly final: boolean,
    readonly position: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * First attempts of this process's mails under way at once (each an outbox line or an SMTP
 * exchange): 10, or 1 while requests are in flight in this process and fewer than
 * MAIL_BACKLOG_BOUND mails wait (workers/lanes.ts).
 */
export const MAIL_CONCURRENCY = 10;
export const MAIL_BACKLOG_BOUND = 20_000;

/**
 * Delivers MailQueued events. The reactor hands each queued mail to a first attempt in this
 * process (at most MAIL_CONCURRENCY at once): it renders the template (decrypting its parameters),
 * sends it through the transport and records MailSent or MailSendFailed. Only a failed attempt
 * becomes an Agenda job, due after the next retry delay, so the common case costs no job-store
 * writes. The attempt number comes from the mail's read model (the MailSendFailed events), so a
 * retry after a restart counts on. At start every mail the read model still shows as pending is
 * attempted again, so neither a crash before the first attempt nor a lost job store loses a mail.
 */
export function defineMailJobs(s: MailDeps, agenda: Agenda, transport: MailTransport) {
  const from = mailFrom(s);
  const limit = yieldingLanes(s.foreground, { idle: MAIL_CONCURRENCY, busy: 1, backlogBound: MAIL_BACKLOG_BOUND });
  /** Mails with an attempt under way in this process (a resumed mail and its retry job do not both send). */
  const inflight = new Set<string>();
  const pending = new Set<Promise<void>>();

  /** The retry job of a mail whose attempt number `after` failed, due after that attempt's delay. */
  const retryLater = async (mailId: string, position: number, after: number) => {
    await agenda
      .create(MAIL_JOB, { mail_id: mailId, position, after })
      .unique({ name: MAIL_JOB, 'data.mail_id': mailId })
      .schedule(new Date(Date.now() + (MAIL_RETRY_DELAYS_MS[after - 1] ?? 0)))
      .save();
  };

  /**
   * One delivery attempt of a mail, unless it is sent, given up or under way here already: the
   * number of the attempt that sent it, or 0 when none was made. A failure is recorded
   * (MailSendFailed, `final` after the last retry) and thrown.
   */
  const attempt = async (mailId: string, position: number): Promise<number> => {
    if (inflight.has(mailId)) return 0;
    inflight.add(mailId);
    try {
      await s.runner.waitFor(position, 10_000);
      const mail = await mailById(s.store, mailId);
      if (!mail || mail.status === 'sent' || mail.status === 'failed') return 0;
      const n = Number(mail.attempts ?? 0) + 1;
      const queuedAt = typeof mail.queued_at === 'string' ? mail.queued_at : undefined;
      try {
        const params = JSON.parse(s.secrets.decrypt(String(mail.params_enc))) as MailTemplates[MailTemplate];
        const rendered = renderMail(mail.template as MailTemplate, params);
        const sent = await transport.send({ mail_id: mailId, from, to: String(mail.to), ...rendered });
        const r = await recordMailOutcome(
          s.bus,
          mailId,
          { attempt: n, ok: true, transport: transport.name, message_id: sent.message_id },
          s.clock.now(),
          queuedAt,
        );
        await s.runner.waitFor(r.position, 10_000);
        return n;
      } catch (err) {
        const final = n > MAIL_RETRY_DELAYS_MS.length;
        const message = err instanceof Error ? err.message : String(err);
        s.logger.warn({ mail_id: mailId, attempt: n, final, err: message }, 'mail delivery failed');
        const r = await recordMailOutcome(s.bus, mailId, { attempt: n, ok: false, transport: transport.name, error: message, final }, s.clock.now(), queuedAt);
        await s.runner.waitFor(r.position, 10_000);
        throw new MailAttemptFailed(n, final, r.position, message);
      }
    } finally {
      inflight.delete(mailId);
    }
  };

  /** A first attempt in this process, in the background (stop() waits for it); a failure becomes the retry job. */
  const dispatch = (mailId: string, position: number) => {
    const p = limit(async () => {
      try {
        // A mail sent after a failure (resumed at start) no longer needs its retry job.
        if ((await attempt(mailId, position)) > 1) await agenda.cancel({ name: MAIL_JOB, data: { mail_id: mailId } });
      } catch (err) {
        if (err instanceof MailAttemptFailed && !err.final) await retryLater(mailId, err.position, err.attempt);
        else if (!(err instanceof MailAttemptFailed)) throw err;
      }
    }).catch((err: unknown) => s.logger.error({ err, mail_id: mailId }, 'mail attempt failed'));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  // The retry job: one attempt per run; a failure is retried by Agenda after the next delay. Its
  // `after` is the attempt that failed before the job was made, so run k follows attempt after + k - 1.
  agenda.define(
    MAIL_JOB,
    async (job: Job<{ mail_id: string; position: number; after?: number }>) => {
      await attempt(job.attrs.data.mail_id, job.attrs.data.position);
    },
    {
      backoff: (c) => MAIL_RETRY_DELAYS_MS[Number((c.jobData as { after?: number }).after ?? 0) + c.attempt - 1] ?? null,
      concurrency: MAIL_CONCURRENCY,
      removeOnComplete: true,
    },
  );

  return {
    onEvent(e: RecordedEvent) {
      if (e.type === 'MailQueued') dispatch((e.data as MailQueued['data']).mail_id, e.position);
    },
    /** Attempts every mail that is neither sent nor given up (after a restart or a lost job store). */
    async resume() {
      for (const m of await pendingMails(s.store, 10_000)) dispatch(m._id, Number(m._pos ?? 0));
    },
    /** First attempts handed over and not finished yet (the `worker_backlog` gauge). */
    backlog: () => pending.size,
    /** Waits for this process's attempts under way (at stop). */
    async drain() {
      while (pending.size) await Promise.all([...pending]);
    },
  };
}
