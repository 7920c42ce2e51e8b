import type { Agenda, Job, JobNotification } from 'agenda';
import { InMemoryNotificationChannel } from 'agenda';
import type { WorkerDeps } from '../../deps.ts';
import type { MailTemplate, MailTemplates } from '../../../commands/humans/mail.ts';
import { recordMailOutcome } from '../../../commands/humans/mail.ts';
import type { MailQueued } from '../../../events/humans.ts';
import type { RecordedEvent } from '../../../events/store/port.ts';
import { mailById, pendingMails } from '../../../queries/humans/users.ts';
import { renderMail } from './templates.ts';
import type { MailTransport } from './transport.ts';
import { OutboxTransport, SmtpTransport } from './transport.ts';

/** What these jobs use of the composition root. */
export type MailDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'config' | 'logger' | 'runner' | 'secrets' | 'store'>;

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

/**
 * Delivers MailQueued events. The reactor turns each into an Agenda job; the job renders the
 * template (decrypting its parameters), sends it through the transport and records MailSent or
 * MailSendFailed. Agenda retries failures with back-off. At start every mail the read model still
 * shows as pending is scheduled again, so a lost job store loses no mail.
 */
export function defineMailJobs(s: MailDeps, agenda: Agenda, transport: MailTransport) {
  const from = mailFrom(s);

  agenda.define(
    MAIL_JOB,
    async (job: Job<{ mail_id: string; position: number }>) => {
      const { mail_id, position } = job.attrs.data;
      await s.runner.waitFor(position, 10_000);
      const mail = await mailById(s.store, mail_id);
      if (!mail || mail.status === 'sent' || mail.status === 'failed') return;
      const attempt = (job.attrs.failCount ?? 0) + 1;
      try {
        const params = JSON.parse(s.secrets.decrypt(String(mail.params_enc))) as MailTemplates[MailTemplate];
        const rendered = renderMail(mail.template as MailTemplate, params);
        const sent = await transport.send({ mail_id, from, to: String(mail.to), ...rendered });
        const r = await recordMailOutcome(s.bus, mail_id, { attempt, ok: true, transport: transport.name, message_id: sent.message_id }, s.clock.now());
        await s.runner.waitFor(r.position, 10_000);
      } catch (err) {
        const final = attempt > MAIL_RETRY_DELAYS_MS.length;
        const message = err instanceof Error ? err.message : String(err);
        s.logger.warn({ mail_id, attempt, final, err: message }, 'mail delivery failed');
        await recordMailOutcome(s.bus, mail_id, { attempt, ok: false, transport: transport.name, error: message, final }, s.clock.now());
        throw err;
      }
    },
    { backoff: (c) => MAIL_RETRY_DELAYS_MS[c.attempt - 1] ?? null, concurrency: 10, removeOnComplete: true },
  );

  const schedule = async (mailId: string, position: number) => {
    await agenda.create(MAIL_JOB, { mail_id: mailId, position }).unique({ name: MAIL_JOB, 'data.mail_id': mailId }).schedule(new Date()).save();
  };

  return {
    async onEvent(e: RecordedEvent) {
      if (e.type !== 'MailQueued') return;
      await schedule((e.data as MailQueued['data']).mail_id, e.position);
    },
    /** Re-schedules every mail that is neither sent nor given up (after a restart or a lost job store). */
    async resume() {
      for (const m of await pendingMails(s.store, 10_000)) await schedule(m._id, Number(m._pos ?? 0));
    },
  };
}
