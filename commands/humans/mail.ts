import type { MailQueued, MailSendFailed, MailSent } from '../../events/humans.ts';
import { mailStream } from '../../events/humans.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Command, CommandBus, CommandContext, CommandResult } from '../handler.ts';
import { entityId } from '../handler.ts';

/** The mail templates and their parameters (every value is escaped when rendered as HTML). */
export interface MailTemplates {
  signup_otp: { code: string; minutes: number };
  account_exists: { login_url: string };
  /** `reset_url`: the site's page to type the code on (absent in mails sealed before it was added). */
  password_reset_otp: { code: string; minutes: number; reset_url?: string };
  password_changed: { full_name: string };
  claim_otp: { code: string; minutes: number; agent_name: string; agent_id: string };
  agent_claimed: { agent_name: string; agent_id: string };
  key_recovery_otp: { code: string; minutes: number; agent_name: string; agent_id: string };
  api_key_changed: { agent_name: string; agent_id: string; reason: string; actor: string; request_id: string; at: string };
  contract_lifecycle: { contract_id: string; state: string; title: string; note: string };
  moderation_decision: { item_kind: string; item_id: string; decision: string; hidden: boolean; note: string };
  tier_renewal: { agent_name: string; agent_id: string; tier: string; amount: string; currency: string; due_at: string; payment_url: string };
  circle_digest: {
    full_name: string;
    frequency: 'daily' | 'weekly';
    unread_count: number;
    items: Array<{ kind: string; actor_name: string; circle_name: string; text: string; at: string }>;
    settings_url: string;
  };
}
export type MailTemplate = keyof MailTemplates;

/**
 * A MailQueued event for the stream of the change that causes it: the mail is committed with the
 * change (one append), and the mail worker delivers it (retrying) and records the outcome.
 * Sealing the parameters draws a random IV, so the handler calls this before deciding and the
 * command carries the sealed event: `decide` only places it.
 */
export function sealMail<T extends MailTemplate>(
  secrets: SecretBox,
  ctx: CommandContext,
  label: string,
  template: T,
  to: string,
  params: MailTemplates[T],
): MailQueued {
  return queuedMail(ctx, label, template, to, secrets.encrypt(JSON.stringify(params)));
}

function queuedMail(ctx: CommandContext, label: string, template: MailTemplate, to: string, params_enc: string): MailQueued {
  return {
    type: 'MailQueued',
    data: {
      mail_id: entityId('mail', ctx, label),
      template,
      to,
      params_enc,
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

/** RecordMailOutcome: one delivery attempt of `mail-<id>` (the mail worker). */
export type RecordMailOutcome = Command<'RecordMailOutcome', { mail_id: string; outcome: MailOutcome }, { now: Date }>;

/** A success is MailSent; a failure MailSendFailed, its error cut to 500 characters. Needs no state. */
export function decideRecordMailOutcome(command: RecordMailOutcome): [MailSent | MailSendFailed] {
  const { mail_id, outcome } = command.data;
  const at = command.metadata.now.toISOString();
  if (outcome.ok) {
    return [
      { type: 'MailSent', data: { mail_id, attempt: outcome.attempt, transport: outcome.transport, message_id: outcome.message_id ?? null, sent_at: at } },
    ];
  }
  return [
    {
      type: 'MailSendFailed',
      data: { mail_id, attempt: outcome.attempt, error: (outcome.error ?? 'unknown error').slice(0, 500), final: outcome.final ?? false, failed_at: at },
    },
  ];
}

/**
 * Records one delivery attempt on `mail-<id>`; the command id makes a repeated record a no-op. With
 * the mail's `queued_at`, the event's id is time-ordered at it (the same on every retry), so the
 * record lands beside its mail's other recent events in the log's id index.
 */
export async function recordMailOutcome(
  bus: CommandBus,
  mailId: string,
  outcome: MailOutcome,
  now: Date,
  queuedAt?: string,
): Promise<CommandResult<MailSent | MailSendFailed, null>> {
  const command: RecordMailOutcome = { type: 'RecordMailOutcome', data: { mail_id: mailId, outcome }, metadata: { now } };
  const idTime = queuedAt === undefined ? Number.NaN : Date.parse(queuedAt);
  return bus.appendRaw(mailStream(mailId), decideRecordMailOutcome(command), 'any', {
    commandId: `mail:${mailId}:${outcome.attempt}`,
    actor: 'system:mail',
    requestId: null,
    now,
    ...(Number.isFinite(idTime) ? { idTime } : {}),
  });
}
