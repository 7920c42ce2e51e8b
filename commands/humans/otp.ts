import { randomInt } from 'node:crypto';
import type { MailQueued, OtpAttemptFailed, OtpConsumed, OtpEvent, OtpIssued, OtpPurpose } from '../../events/humans.ts';
import { otpStream } from '../../events/humans.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Aggregate, Command, CommandBus, CommandContext, CommandResult } from '../handler.ts';
import { sameHash } from './hashes.ts';

/** DECISIONS.md: 6 digits, 10 minutes, 5 wrong tries kill the code, 5 codes per hour per address. */
export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_TRIES = 5;
export const OTP_PER_HOUR = 5;
export const OTP_MINUTES = OTP_TTL_MS / 60_000;
const HOUR_MS = 3600_000;

export interface OtpState {
  /** Issue times in the last hour (the per-address limit). */
  issued: string[];
  /** Times of the mails queued in the last hour (new codes and resends: what reached the mailbox). */
  mailed: string[];
  /** The id of the last mail queued (a retried resend appends nothing). */
  last_mail_id: string | null;
  current: {
    otp_id: string;
    code_hash: string;
    expires_at: string;
    attempts: number;
    consumed: boolean;
    /** The sealed mail that carried this code (its parameters stay encrypted): a resend queues it again. */
    mail: { template: string; to: string; params_enc: string } | null;
  } | null;
}

const lastHour = (times: string[], at: string) => {
  const from = new Date(Date.parse(at) - HOUR_MS).toISOString();
  return times.filter((t) => t > from);
};

/** `otp-<purpose>-<subject>`: only the latest code of a stream is valid. */
export const otpAggregate: Aggregate<OtpState, OtpEvent> = {
  initialState: () => ({ issued: [], mailed: [], last_mail_id: null, current: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'OtpIssued': {
        const d = event.data;
        return {
          ...state,
          issued: [...lastHour(state.issued, d.issued_at), d.issued_at],
          current: { otp_id: d.otp_id, code_hash: d.code_hash, expires_at: d.expires_at, attempts: 0, consumed: false, mail: null },
        };
      }
      case 'OtpAttemptFailed':
        if (state.current?.otp_id !== event.data.otp_id) return state;
        return { ...state, current: { ...state.current, attempts: event.data.attempts } };
      case 'OtpConsumed':
        if (state.current?.otp_id !== event.data.otp_id) return state;
        return { ...state, current: { ...state.current, consumed: true } };
      case 'MailQueued': {
        const d = event.data;
        // The first mail after a code carries it; later ones for the same code are resends of it.
        const current =
          state.current && state.current.mail === null
            ? { ...state.current, mail: { template: d.template, to: d.to, params_enc: d.params_enc } }
            : state.current;
        return { ...state, mailed: [...lastHour(state.mailed, d.queued_at), d.queued_at], last_mail_id: d.mail_id, current };
      }
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** What issuing a code draws before deciding: the code itself goes only into the mail; the stream keeps its id and keyed hash. */
export interface OtpDraw {
  code: string;
  otp_id: string;
  code_hash: string;
}

const codeHash = (secrets: SecretBox, otpId: string, code: string) => secrets.hash(`otp:${otpId}:${code}`);

/** A fresh random 6-digit code for `otp-<purpose>-<subject>`; its id derives from the command id (a retry reuses it). */
export function drawOtp(secrets: SecretBox, purpose: OtpPurpose, subjectHash: string, ctx: CommandContext): OtpDraw {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const otp_id = deriveId('otp', ctx.commandId, otpStream(purpose, subjectHash));
  return { code, otp_id, code_hash: codeHash(secrets, otp_id, code) };
}

/** IssueOtp: the code's id and keyed hash (random) in the metadata; the sealed mail that carries it (or none) in the data. */
export type IssueOtp = Command<'IssueOtp', { purpose: OtpPurpose; mail: MailQueued | null }, IssueOtpMetadata>;
export interface IssueOtpMetadata {
  now: Date;
  otp_id: string;
  code_hash: string;
}

/**
 * The new code replaces the previous one, and its mail is committed in the same append. The 6th
 * code within an hour is refused with 429 (the limit lives in the stream, so it holds across
 * processes and restarts). A retried command (same code id) appends nothing.
 */
export function decideIssueOtp(command: IssueOtp, state: OtpState): Array<OtpIssued | MailQueued> {
  const { now, otp_id, code_hash } = command.metadata;
  if (state.current?.otp_id === otp_id) return [];
  const from = new Date(now.getTime() - HOUR_MS).toISOString();
  const recent = state.issued.filter((t) => t > from);
  if (recent.length >= OTP_PER_HOUR) {
    const retryAfter = Math.max(1, Math.ceil((Date.parse(recent[0]) + HOUR_MS - now.getTime()) / 1000));
    throw new DomainError(429, 'otp_rate_limited', `At most ${OTP_PER_HOUR} codes per hour may be sent to one address; try again later`, {
      retry_after: retryAfter,
      limit: OTP_PER_HOUR,
    });
  }
  const issued: OtpIssued = {
    type: 'OtpIssued',
    data: {
      otp_id,
      purpose: command.data.purpose,
      code_hash,
      issued_at: now.toISOString(),
      expires_at: new Date(now.getTime() + OTP_TTL_MS).toISOString(),
    },
  };
  return command.data.mail ? [issued, command.data.mail] : [issued];
}

/** The IssueOtp command for a drawn code and its sealed mail. */
export function issueOtpCommand(purpose: OtpPurpose, draw: OtpDraw, mail: MailQueued | null, now: Date): IssueOtp {
  return { type: 'IssueOtp', data: { purpose, mail }, metadata: { now, otp_id: draw.otp_id, code_hash: draw.code_hash } };
}

/**
 * Issues a code and commits the mail that carries it in the same append. `mail` returns null when
 * nothing may be sent (an unknown address), so known and unknown addresses get the same answer;
 * it runs before deciding (sealing the mail draws a random IV).
 */
export async function issueOtp(
  bus: CommandBus,
  secrets: SecretBox,
  purpose: OtpPurpose,
  subjectHash: string,
  ctx: CommandContext,
  mail: (code: string) => MailQueued | null,
): Promise<{ position: number }> {
  const draw = drawOtp(secrets, purpose, subjectHash, ctx);
  const command = issueOtpCommand(purpose, draw, mail(draw.code), ctx.now);
  const result = await bus.handle(otpStream(purpose, subjectHash), otpAggregate, (state) => decideIssueOtp(command, state), ctx);
  return { position: result.position };
}

export const invalidOtp = () => new DomainError(400, 'invalid_otp', 'The code is wrong, expired or already used; request a new one');

/**
 * ConsumeOtp: `presented` is the keyed hash of the presented code under the id of the code it was
 * checked against (null when the code is not 6 digits or no code was current when it was read).
 */
export type ConsumeOtp = Command<'ConsumeOtp', { presented: { otp_id: string; code_hash: string } | null }, { now: Date }>;

/**
 * A right code is consumed, so it works once; a wrong one is recorded (the 5th kills the code).
 * With no live code (none, used, dead or expired) nothing is recorded. The caller answers every
 * failure with the same 400 (`invalid_otp`), without saying which.
 */
export function decideConsumeOtp(command: ConsumeOtp, state: OtpState): Array<OtpConsumed | OtpAttemptFailed> {
  const at = command.metadata.now.toISOString();
  const c = state.current;
  if (!c || c.consumed || c.attempts >= OTP_MAX_TRIES || c.expires_at <= at) return [];
  const p = command.data.presented;
  if (p && p.otp_id === c.otp_id && sameHash(p.code_hash, c.code_hash)) return [{ type: 'OtpConsumed', data: { otp_id: c.otp_id, consumed_at: at } }];
  return [{ type: 'OtpAttemptFailed', data: { otp_id: c.otp_id, failed_at: at, attempts: c.attempts + 1 } }];
}

/** The ConsumeOtp command for a presented code: its keyed hash under the current code's id (read before deciding). */
export async function consumeOtpCommand(bus: CommandBus, secrets: SecretBox, stream: string, code: string, now: Date): Promise<ConsumeOtp> {
  const { state } = await bus.load(stream, otpAggregate);
  const current = state.current;
  const presented = current && /^\d{6}$/.test(code) ? { otp_id: current.otp_id, code_hash: codeHash(secrets, current.otp_id, code) } : null;
  return { type: 'ConsumeOtp', data: { presented }, metadata: { now } };
}

/** The context of a code check: its own command id, so it never collides with the change it unlocks. */
export const otpContext = (ctx: CommandContext): CommandContext => ({ ...ctx, commandId: `${ctx.commandId}:otp` });

/** Throws 400 `invalid_otp` unless the check consumed the code. */
export function assertConsumed(result: CommandResult<OtpConsumed | OtpAttemptFailed, unknown>): { position: number } {
  if (!result.events.some((e) => e.type === 'OtpConsumed')) throw invalidOtp();
  return { position: result.position };
}

/** Checks a code (see decideConsumeOtp); throws 400 `invalid_otp` for every failure. */
export async function consumeOtp(
  bus: CommandBus,
  secrets: SecretBox,
  purpose: OtpPurpose,
  subjectHash: string,
  code: string,
  ctx: CommandContext,
): Promise<{ position: number }> {
  const stream = otpStream(purpose, subjectHash);
  const command = await consumeOtpCommand(bus, secrets, stream, code, ctx.now);
  return assertConsumed(
    await bus.handle<OtpState, OtpConsumed | OtpAttemptFailed>(stream, otpAggregate, (state) => decideConsumeOtp(command, state), otpContext(ctx)),
  );
}
