import { mkdir, rename, writeFile } from 'node:fs/promises';
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
 * The writes are asynchronous (libuv's thread pool), so a burst of mails does not hold up requests.
 */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  /** The folder, made once (again after a failed attempt: someone may have removed it). */
  private made: Promise<unknown> | null = null;
  constructor(private readonly dir: string) {}
  async send(mail: OutgoingMail) {
    this.made ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.made.catch(() => (this.made = null));
    const file = join(this.dir, `${mail.mail_id}.json`);
    const tmp = `${file}.tmp`;
    try {
      await writeFile(tmp, `${JSON.stringify({ ...mail, created_at: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600 });
      await rename(tmp, file);
    } catch (err) {
      this.made = null;
      throw err;
    }
    return { message_id: mail.mail_id };
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
