import { closeSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
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
 * 0600). The mails handed over in one turn of the event loop go out together in one write to the
 * file, kept open between writes (reopened when it was removed), so a burst of mails costs one
 * system call, not a file each (creating a file cost 40 to 330 µs of kernel time per mail on the
 * benchmark machine; docs/PERFORMANCE.md). A line is written whole by one append; a reader ignores
 * a last line without its newline (a write under way). Delivery is at least once: a mail re-sent
 * after a crash appears again under the same mail_id.
 */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  private readonly file: string;
  /** The open file, and the identity it had when opened (a removed file is opened again). */
  private fd: { fd: number; ino: number; dev: number } | null = null;
  /** Lines handed over in this turn, with their senders. */
  private waiting: Array<{ line: string; resolve: () => void; reject: (err: Error) => void }> = [];
  constructor(private readonly dir: string) {
    this.file = join(dir, OUTBOX_FILE);
  }

  send(mail: OutgoingMail) {
    const line = `${JSON.stringify({ ...mail, created_at: new Date().toISOString() })}\n`;
    return new Promise<{ message_id: string | null }>((resolve, reject) => {
      this.waiting.push({ line, resolve: () => resolve({ message_id: mail.mail_id }), reject });
      if (this.waiting.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Writes what waits in one append. */
  private flush() {
    const batch = this.waiting;
    this.waiting = [];
    try {
      this.append(batch.map((w) => w.line).join(''));
      for (const w of batch) w.resolve();
    } catch (err) {
      this.close();
      const e = err instanceof Error ? err : new Error(String(err));
      for (const w of batch) w.reject(e);
    }
  }

  private append(data: string) {
    writeSync(this.open(), data);
  }

  /** The file's descriptor: opened (and the folder made) on first use and again when the file was removed or replaced. */
  private open(): number {
    if (this.fd) {
      const now = statSync(this.file, { throwIfNoEntry: false });
      if (now && now.ino === this.fd.ino && now.dev === this.fd.dev) return this.fd.fd;
      this.close();
    }
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fd = openSync(this.file, 'a', 0o600);
    const st = fstatSync(fd);
    this.fd = { fd, ino: st.ino, dev: st.dev };
    return fd;
  }

  close() {
    if (this.fd) closeSync(this.fd.fd);
    this.fd = null;
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
