import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OutboxMail {
  mail_id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export function readOutbox(dir: string): OutboxMail[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as OutboxMail & { created_at: string })
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
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
