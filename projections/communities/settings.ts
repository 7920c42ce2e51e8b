import type { DataOf } from '../types.ts';

/** A member's circle notification settings before they change any (shared DECISIONS: booleans true, digest daily). */
export const DEFAULT_SETTINGS_VALUES: Readonly<Omit<DataOf<'CircleNotificationSettingsChanged'>, 'user_id' | 'changed_at'>> = {
  mentions: true,
  replies: true,
  reactions: true,
  join_requests: true,
  digest: 'daily',
};
