import type { PasswordChanged, SessionRefreshed, SessionRevoked, SessionStarted, UserEmailReserved, UserRegistered } from '../../events/humans.ts';
import { userEmailStream } from '../../events/humans.ts';
import type { Event } from '../../events/types.ts';
import type { EventLog } from '../../events/store/port.ts';
import type { SecretBox } from '../agents/secrets.ts';
import { normaliseEmail } from '../agents/email.ts';
import type { Aggregate } from '../handler.ts';

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

/** Drops sessions that expired before `at` (they can never be refreshed again), so the state stays small. */
function live(sessions: Readonly<Record<string, Session>>, at: string): Record<string, Session> {
  const out: Record<string, Session> = {};
  for (const [id, s] of Object.entries(sessions)) if (s.expires_at > at) out[id] = s;
  return out;
}

export const userAggregate: Aggregate<UserState> = {
  initialState: () => ({ exists: false, user_id: '', email: '', full_name: '', password_hash: '', sessions: {}, digests: {} }),
  evolve(state, event: Event<string, unknown>) {
    switch (event.type) {
      case 'UserRegistered': {
        const d = event.data as UserRegistered['data'];
        return { ...state, exists: true, user_id: d.user_id, email: d.email, full_name: d.full_name, password_hash: d.password_hash };
      }
      case 'PasswordChanged':
        return { ...state, password_hash: (event.data as PasswordChanged['data']).password_hash };
      case 'SessionStarted': {
        const d = event.data as SessionStarted['data'];
        return {
          ...state,
          sessions: { ...live(state.sessions, d.started_at), [d.session_id]: { token_hash: d.token_hash, expires_at: d.expires_at, revoked: false } },
        };
      }
      case 'SessionRefreshed': {
        const d = event.data as SessionRefreshed['data'];
        return {
          ...state,
          sessions: { ...live(state.sessions, d.refreshed_at), [d.session_id]: { token_hash: d.token_hash, expires_at: d.expires_at, revoked: false } },
        };
      }
      case 'SessionRevoked': {
        const d = event.data as SessionRevoked['data'];
        const s = state.sessions[d.session_id];
        return s ? { ...state, sessions: { ...state.sessions, [d.session_id]: { ...s, revoked: true } } } : state;
      }
      case 'DigestProduced':
        return { ...state, digests: { ...state.digests, [(event.data as { digest_id: string }).digest_id]: false } };
      case 'DigestRead':
        return { ...state, digests: { ...state.digests, [(event.data as { digest_id: string }).digest_id]: true } };
      default:
        return state;
    }
  },
};

/** The keyed hash that names an address's reservation and OTP streams (the address is not readable from them). */
export const emailKey = (secrets: SecretBox, email: string) => secrets.hash(`user-email:${normaliseEmail(email)}`);

/** The user id holding an address, from its reservation stream (the write side's source of truth). */
export async function userIdForEmail(log: EventLog, emailHash: string): Promise<string | null> {
  const last = (await log.readStream(userEmailStream(emailHash), { direction: 'backwards', maxCount: 1 }))[0];
  return last ? (last.data as UserEmailReserved['data']).user_id : null;
}
