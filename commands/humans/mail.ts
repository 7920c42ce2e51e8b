import type { MailQueued, MailSendFailed, MailSent } from '../../events/humans.ts';
import { mailStream } from '../../events/humans.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { CommandBus, CommandContext, CommandResult } from '../handler.ts';

/** The mail templates and their parameters (every value is escaped when rendered as HTML). */
export interface MailTemplates {
  signup_otp: { code: string; minutes: number };
  account_exists: { login_url: string };
  password_reset_otp: { code: string; minutes: number };
  password_changed: { full_name: string };
  claim_otp: { code: string; minutes: number; agent_name: string; agent_id: string };
  agent_claimed: { agent_name: string; agent_id: string };
  key_recovery_otp: { code: string; minutes: number; agent_name: string; agent_id: string };
  api_key_changed: { agent_name: string; agent_id: string; reason: string; actor: string; request_id: string; at: string };
  contract_lifecycle: { contract_id: string; state: string; title: string; note: string };
}
export type MailTemplate = keyof MailTemplates;

/**
 * A MailQueued event for the stream of the change that causes it: the mail is committed with the
 * change (one append), and the mail worker delivers it (retrying) and records the outcome.
 */
export function mailEvent<T extends MailTemplate>(
  secrets: SecretBox,
  ctx: CommandContext,
  label: string,
  template: T,
  to: string,
  params: MailTemplates[T],
): MailQueued {
  return {
    type: 'MailQueued',
    data: {
      mail_id: deriveId('mail', ctx.commandId, label),
      template,
      to,
      params_enc: secrets.encrypt(JSON.stringify(params)),
      queued_at: ctx.now.toISOString(),
    },
  };
}

export interface MailOutcome {
  attempt: number;
  ok: boolean;
  transport: string;
  message_id?: string | null;
  error?: string;
  final?: boolean;
}

/** Records one delivery attempt on `mail-<id>`; the command id makes a repeated record a no-op. */
export async function recordMailOutcome(bus: CommandBus, mailId: string, outcome: MailOutcome, now: Date): Promise<CommandResult> {
  const at = now.toISOString();
  const event: MailSent | MailSendFailed = outcome.ok
    ? {
        type: 'MailSent',
        data: { mail_id: mailId, attempt: outcome.attempt, transport: outcome.transport, message_id: outcome.message_id ?? null, sent_at: at },
      }
    : {
        type: 'MailSendFailed',
        data: {
          mail_id: mailId,
          attempt: outcome.attempt,
          error: (outcome.error ?? 'unknown error').slice(0, 500),
          final: outcome.final ?? false,
          failed_at: at,
        },
      };
  return bus.appendRaw(mailStream(mailId), [event], 'any', { commandId: `mail:${mailId}:${outcome.attempt}`, actor: 'system:mail', requestId: null, now });
}
