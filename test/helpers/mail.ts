import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTBOX_FILE } from '../../workers/humans/mail/transport.ts';

export interface OutboxMail {
  mail_id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The mails in an outbox folder's `outbox.jsonl`, in the order they were written: whole lines only
 * (a last line still being written is left out), each mail once (a re-sent mail keeps its first line).
 */
export function readOutbox(dir: string): OutboxMail[] {
  const file = join(dir, OUTBOX_FILE);
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const seen = new Set<string>();
  const mails: OutboxMail[] = [];
  for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) {
    if (!line) continue;
    const mail = JSON.parse(line) as OutboxMail;
    if (seen.has(mail.mail_id)) continue;
    seen.add(mail.mail_id);
    mails.push(mail);
  }
  return mails;
}

/** Waits (real time: the mail worker is an Agenda job) until `count` mails to `to` are in the outbox. */
export async function waitForMails(dir: string, to: string, count = 1, timeoutMs = 120_000): Promise<OutboxMail[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const mails = readOutbox(dir).filter((m) => m.to === to);
    if (mails.length >= count) return mails;
    if (Date.now() > until) throw new Error(`expected ${count} mail(s) to ${to}, found ${mails.length}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function codeIn(mail: { text: string }): string {
  const m = / is: (\d{6})$/m.exec(mail.text);
  if (!m) throw new Error(`no code in mail: ${mail.text}`);
  return m[1];
}
