import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startTsThread } from '../../../events/store/ts-thread.ts';
import type { OutboxWrite, OutboxWritten } from './outbox-writer.thread.ts';
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
 * The files are written by a writer thread of their own (outbox-writer.thread.ts, started on the
 * first mail): the event loop only hands each file over and hears back, so a burst of mails costs
 * requests little.
 */
export class OutboxTransport implements MailTransport {
  readonly name = 'outbox';
  /** The writer thread and the files it has been handed, not yet written. */
  private thread: { worker: Worker; waiting: Map<number, { resolve: () => void; reject: (err: Error) => void }> } | null = null;
  private next = 1;
  constructor(private readonly dir: string) {}

  private writer() {
    if (this.thread) return this.thread;
    const worker = startTsThread(new URL('./outbox-writer.thread.ts', import.meta.url), null);
    const thread = { worker, waiting: new Map<number, { resolve: () => void; reject: (err: Error) => void }>() };
    worker.on('message', (m: OutboxWritten) => {
      const w = thread.waiting.get(m.id);
      thread.waiting.delete(m.id);
      if (m.error === undefined) w?.resolve();
      else w?.reject(new Error(m.error));
    });
    const fail = (err: Error) => {
      if (this.thread === thread) this.thread = null;
      for (const w of thread.waiting.values()) w.reject(err);
      thread.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the outbox writer thread stopped (exit ${code})`)));
    // Idle, it keeps no process alive; while a file is under way it does (see send).
    worker.unref();
    this.thread = thread;
    return thread;
  }

  async send(mail: OutgoingMail) {
    const { worker, waiting } = this.writer();
    const id = this.next++;
    const data = `${JSON.stringify({ ...mail, created_at: new Date().toISOString() }, null, 2)}\n`;
    const written = new Promise<void>((resolve, reject) => waiting.set(id, { resolve, reject }));
    if (waiting.size === 1) worker.ref();
    worker.postMessage({ id, dir: this.dir, file: join(this.dir, `${mail.mail_id}.json`), data } satisfies OutboxWrite);
    try {
      await written;
    } finally {
      if (waiting.size === 0) worker.unref();
    }
    return { message_id: mail.mail_id };
  }

  close() {
    const thread = this.thread;
    this.thread = null;
    void thread?.worker.terminate();
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
