import type { DigestProduced, DigestRead, UserEmailReserved, UserEvent } from '../../events/humans.ts';
import { userEmailStream } from '../../events/humans.ts';
import type { EventLog } from '../../events/store/port.ts';
import type { Recorded } from '../../events/types.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { normaliseEmail } from '../agents/email.ts';
import type { Aggregate, Command } from '../handler.ts';

export interface Session {
  token_hash: string;
  expires_at: string;
  revoked: boolean;
}

export interface UserState {
  exists: boolean;
  user_id: string;
  email: string;
  full_name: string;
  password_hash: string;
  sessions: Readonly<Record<string, Session>>;
  /** Digest id -> read. */
  digests: Readonly<Record<string, boolean>>;
}

/** Every event a `user-<id>` stream holds. */
export type UserStreamEvent = UserEvent | DigestProduced | DigestRead;

/** Drops sessions that expired before `at` (they can never be refreshed again), so the state stays small. */
function live(sessions: Readonly<Record<string, Session>>, at: string): Record<string, Session> {
  const out: Record<string, Session> = {};
  for (const [id, s] of Object.entries(sessions)) if (s.expires_at > at) out[id] = s;
  return out;
}

export const userAggregate: Aggregate<UserState, UserStreamEvent> = {
  initialState: () => ({ exists: false, user_id: '', email: '', full_name: '', password_hash: '', sessions: {}, digests: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered': {
        const d = event.data;
        return { ...state, exists: true, user_id: d.user_id, email: d.email, full_name: d.full_name, password_hash: d.password_hash };
      }
      case 'PasswordChanged':
        return { ...state, password_hash: event.data.password_hash };
      case 'SessionStarted': {
        const d = event.data;
        return {
          ...state,
          sessions: { ...live(state.sessions, d.started_at), [d.session_id]: { token_hash: d.token_hash, expires_at: d.expires_at, revoked: false } },
        };
      }
      case 'SessionRefreshed': {
        const d = event.data;
        return {
          ...state,
          sessions: { ...live(state.sessions, d.refreshed_at), [d.session_id]: { token_hash: d.token_hash, expires_at: d.expires_at, revoked: false } },
        };
      }
      case 'SessionRevoked': {
        const s = state.sessions[event.data.session_id];
        return s ? { ...state, sessions: { ...state.sessions, [event.data.session_id]: { ...s, revoked: true } } } : state;
      }
      case 'DigestProduced':
        return { ...state, digests: { ...state.digests, [event.data.digest_id]: false } };
      case 'DigestRead':
        return { ...state, digests: { ...state.digests, [event.data.digest_id]: true } };
      case 'MailQueued':
        return state;
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** The keyed hash that names an address's reservation and OTP streams (the address is not readable from them). */
export const emailKey = (secrets: SecretBox, email: string) => secrets.hash(`user-email:${normaliseEmail(email)}`);

/** ReserveUserEmail: one account per address, appended to `user-email-<hash>` with "no stream" (the uniqueness is the append's). */
export type ReserveUserEmail = Command<'ReserveUserEmail', { email_hash: string; user_id: string }, { now: Date }>;

export function decideReserveUserEmail(command: ReserveUserEmail): [UserEmailReserved] {
  const { email_hash, user_id } = command.data;
  return [{ type: 'UserEmailReserved', data: { email_hash, user_id, reserved_at: command.metadata.now.toISOString() } }];
}

/** The user id holding an address, from its reservation stream (the write side's source of truth). */
export async function userIdForEmail(log: EventLog, emailHash: string): Promise<string | null> {
  // The stream's name fixes its one event type (only ReserveUserEmail appends to it).
  const last = (await log.readStream(userEmailStream(emailHash), { direction: 'backwards', maxCount: 1 }))[0] as Recorded<UserEmailReserved> | undefined;
  return last ? last.data.user_id : null;
}
