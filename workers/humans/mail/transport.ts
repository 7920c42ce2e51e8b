import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
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

/** One JSON file per message, written atomically (temp file, then rename), named by the mail id. */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  constructor(private readonly dir: string) {}
  async send(mail: OutgoingMail) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = join(this.dir, `${mail.mail_id}.json`);
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...mail, created_at: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
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
