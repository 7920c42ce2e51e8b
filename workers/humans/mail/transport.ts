import { appendFile, mkdir } from 'node:fs/promises';
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

/** The mail port: SMTP through nodemailer in production, an outbox file by default. */
export interface MailTransport {
  readonly name: string;
  send(mail: OutgoingMail): Promise<{ message_id: string | null }>;
  close(): void;
}

/** The outbox file's name inside MAIL_OUTBOX_DIR. */
export const OUTBOX_FILE = 'outbox.jsonl';

/**
 * The embedded mail port: every message is one line of JSON (from, to, subject, text, html,
 * created_at, under its mail_id) appended to `outbox.jsonl` in a private folder (0700; the file
 * 0600). The mails handed over while a write is under way go out together in the next one, so a
 * burst of mails costs one append, not one file each (creating a file cost 40 to 330 µs of kernel
 * time per mail on the benchmark machine; docs/PERFORMANCE.md). A line is written whole by one
 * append; a reader ignores a last line without its newline (a write under way). Delivery is at
 * least once: a mail re-sent after a crash appears again under the same mail_id.
 */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  private readonly file: string;
  /** Lines handed over and not yet written, with their senders. */
  private waiting: Array<{ line: string; resolve: () => void; reject: (err: Error) => void }> = [];
  private writing = false;
  constructor(private readonly dir: string) {
    this.file = join(dir, OUTBOX_FILE);
  }

  send(mail: OutgoingMail) {
    const line = `${JSON.stringify({ ...mail, created_at: new Date().toISOString() })}\n`;
    return new Promise<{ message_id: string | null }>((resolve, reject) => {
      this.waiting.push({ line, resolve: () => resolve({ message_id: mail.mail_id }), reject });
      if (!this.writing) void this.flush();
    });
  }

  /** Writes what is waiting in one append, then whatever arrived meanwhile, until nothing waits. */
  private async flush() {
    this.writing = true;
    try {
      while (this.waiting.length) {
        const batch = this.waiting;
        this.waiting = [];
        const data = batch.map((w) => w.line).join('');
        try {
          await this.append(data);
          for (const w of batch) w.resolve();
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err));
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async append(data: string) {
    try {
      await appendFile(this.file, data, { mode: 0o600 });
    } catch (err) {
      // The folder is made on first use, and again when someone removed it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await appendFile(this.file, data, { mode: 0o600 });
    }
  }

  close() {
    // Nothing is held open between writes.
  }
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
