import { randomInt } from 'node:crypto';
import type { MailQueued, OtpAttemptFailed, OtpConsumed, OtpIssued, OtpPurpose } from '../../events/humans.ts';
import { otpStream } from '../../events/humans.ts';
import { DomainError } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Event } from '../../events/types.ts';
import type { SecretBox } from '../agents/secrets.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

/** DECISIONS.md: 6 digits, 10 minutes, 5 wrong tries kill the code, 5 codes per hour per address. */
export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_TRIES = 5;
export const OTP_PER_HOUR = 5;
const HOUR_MS = 3600_000;

export interface OtpState {
  /** Issue times in the last hour (the per-address limit). */
  issued: string[];
  current: { otp_id: string; code_hash: string; expires_at: string; attempts: number; consumed: boolean } | null;
}

export const otpAggregate: Aggregate<OtpState> = {
  initialState: () => ({ issued: [], current: null }),
  evolve(state, event: Event<string, unknown>) {
    switch (event.type) {
      case 'OtpIssued': {
        const d = event.data as OtpIssued['data'];
        const from = new Date(Date.parse(d.issued_at) - HOUR_MS).toISOString();
        return {
          issued: [...state.issued.filter((t) => t > from), d.issued_at],
          current: { otp_id: d.otp_id, code_hash: d.code_hash, expires_at: d.expires_at, attempts: 0, consumed: false },
        };
      }
      case 'OtpAttemptFailed': {
        const d = event.data as OtpAttemptFailed['data'];
        if (state.current?.otp_id !== d.otp_id) return state;
        return { ...state, current: { ...state.current, attempts: d.attempts } };
      }
      case 'OtpConsumed': {
        const d = event.data as OtpConsumed['data'];
        if (state.current?.otp_id !== d.otp_id) return state;
        return { ...state, current: { ...state.current, consumed: true } };
      }
      default:
        return state;
    }
  },
};

const codeHash = (secrets: SecretBox, otpId: string, code: string) => secrets.hash(`otp:${otpId}:${code}`);

/**
 * Issues a code (only the latest one of a stream is valid) and commits the mail that carries it in
 * the same append. The 6th code within an hour gets 429; the limit lives in the stream, so it holds
 * across processes and restarts. `mail` returns null when nothing may be sent (an unknown address),
 * so known and unknown addresses get the same answer.
 */
export async function issueOtp(
  bus: CommandBus,
  secrets: SecretBox,
  purpose: OtpPurpose,
  subjectHash: string,
  ctx: CommandContext,
  mail: (code: string) => MailQueued | null,
): Promise<{ position: number }> {
  const stream = otpStream(purpose, subjectHash);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const otpId = deriveId('otp', ctx.commandId, stream);
  const result = await bus.handle(
    stream,
    otpAggregate,
    (state) => {
      const nowIso = ctx.now.toISOString();
      const from = new Date(ctx.now.getTime() - HOUR_MS).toISOString();
      const recent = state.issued.filter((t) => t > from);
      if (state.current?.otp_id === otpId) return [];
      if (recent.length >= OTP_PER_HOUR) {
        const retryAfter = Math.max(1, Math.ceil((Date.parse(recent[0]) + HOUR_MS - ctx.now.getTime()) / 1000));
        throw new DomainError(429, 'otp_rate_limited', `At most ${OTP_PER_HOUR} codes per hour may be sent to one address; try again later`, {
          retry_after: retryAfter,
        });
      }
      const issued: OtpIssued = {
        type: 'OtpIssued',
        data: {
          otp_id: otpId,
          purpose,
          code_hash: codeHash(secrets, otpId, code),
          issued_at: nowIso,
          expires_at: new Date(ctx.now.getTime() + OTP_TTL_MS).toISOString(),
        },
      };
      const m = mail(code);
      return m ? [issued, m] : [issued];
    },
    ctx,
  );
  return { position: result.position };
}

export const invalidOtp = () => new DomainError(400, 'invalid_otp', 'The code is wrong, expired or already used; request a new one');

/**
 * Checks a code: a wrong one is recorded (the 5th kills the code), a right one is consumed, so it
 * works once. Throws 400 `invalid_otp` for every failure, without saying which.
 */
export async function consumeOtp(
  bus: CommandBus,
  secrets: SecretBox,
  purpose: OtpPurpose,
  subjectHash: string,
  code: string,
  ctx: CommandContext,
): Promise<{ position: number }> {
  const stream = otpStream(purpose, subjectHash);
  let ok = false;
  const result = await bus.handle(
    stream,
    otpAggregate,
    (state) => {
      ok = false;
      const c = state.current;
      if (!c || c.consumed || c.attempts >= OTP_MAX_TRIES || c.expires_at <= ctx.now.toISOString()) return [];
      if (/^\d{6}$/.test(code) && secrets.verify(`otp:${c.otp_id}:${code}`, c.code_hash)) {
        ok = true;
        return [{ type: 'OtpConsumed', data: { otp_id: c.otp_id, consumed_at: ctx.now.toISOString() } } satisfies OtpConsumed];
      }
      return [{ type: 'OtpAttemptFailed', data: { otp_id: c.otp_id, failed_at: ctx.now.toISOString(), attempts: c.attempts + 1 } } satisfies OtpAttemptFailed];
    },
    { ...ctx, commandId: `${ctx.commandId}:otp` },
  );
  if (!ok) throw invalidOtp();
  return { position: result.position };
}

export const OTP_MINUTES = OTP_TTL_MS / 60_000;
