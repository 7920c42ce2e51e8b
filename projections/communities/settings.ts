/** A member's circle notification settings before they change any (shared DECISIONS: booleans true, digest daily). */
export const DEFAULT_SETTINGS_VALUES: Readonly<Record<string, unknown>> = {
  mentions: true,
  replies: true,
  reactions: true,
  join_requests: true,
  digest: 'daily',
};
