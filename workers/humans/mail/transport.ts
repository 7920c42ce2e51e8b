import { closeSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';

export interface OutgoingMail {
  mail_id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** The mail port: SMTP through nodemailer in production, an outbox folder by default. */
export interface MailTransport {
  readonly name: string;
  send(mail: OutgoingMail): Promise<{ message_id: string | null }>;
  close(): void;
}

/**
 * One JSON file per message, written atomically (temp file, then rename), named by the mail id.
 * The writes are synchronous: a mail file is a few kilobytes into the page cache (no fsync), about
 * 35 µs of the event loop, where the same write through fs/promises (open, write, close and rename,
 * each a round trip through libuv's thread pool) measured about 100 µs of CPU and, under load, as
 * much of the event loop again in its promise and thread-pool hand-offs (docs/PERFORMANCE.md,
 * 2026-11-28). Production sends through SMTP (SmtpTransport), which stays asynchronous.
 */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  /** Whether the folder is known to exist (made again after a failed write: someone may have removed it). */
  private made = false;
  constructor(private readonly dir: string) {}
  send(mail: OutgoingMail): Promise<{ message_id: string | null }> {
    try {
      if (!this.made) {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        this.made = true;
      }
      const file = join(this.dir, `${mail.mail_id}.json`);
      const tmp = `${file}.tmp`;
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeFileSync(fd, `${JSON.stringify({ ...mail, created_at: new Date().toISOString() }, null, 2)}\n`);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
      return Promise.resolve({ message_id: mail.mail_id });
    } catch (err) {
      this.made = false;
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
  close() {}
}

export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly transporter: Transporter;
  constructor(url: string) {
    this.transporter = nodemailer.createTransport(url);
  }
  async send(mail: OutgoingMail) {
    const info = await this.transporter.sendMail({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      headers: { 'X-Mail-Id': mail.mail_id },
    });
    return { message_id: typeof info.messageId === 'string' ? info.messageId : null };
  }
  close() {
    this.transporter.close();
  }
}
