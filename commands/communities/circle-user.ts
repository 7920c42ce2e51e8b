import type { CircleDigestProduced, CircleNotificationSettingsChanged, CircleNotificationsRead, CircleUserEvent } from '../../events/communities.ts';
import { circleUserStream } from '../../events/communities.ts';
import type { MailQueued } from '../../events/humans.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export interface NotificationSettings {
  mentions: boolean;
  replies: boolean;
  reactions: boolean;
  join_requests: boolean;
  digest: 'none' | 'daily' | 'weekly';
}
export const DEFAULT_SETTINGS: NotificationSettings = { mentions: true, replies: true, reactions: true, join_requests: true, digest: 'daily' };

/** The last digest mailed to a member: the start of its period and the last notification it covered. */
export interface LastDigest {
  period: string;
  through_position: number;
}

/** `circle-user-<user_id>`: the member's circle notification settings and last digest. */
export interface CircleUserState {
  settings: NotificationSettings;
  last_digest: LastDigest | null;
}

/** What the stream holds: the member's events and the digest mails queued with them. */
export type CircleUserStreamEvent = CircleUserEvent | MailQueued;

export const circleUserAggregate: Aggregate<CircleUserState, CircleUserStreamEvent> = {
  initialState: () => ({ settings: DEFAULT_SETTINGS, last_digest: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'CircleNotificationSettingsChanged': {
        const { user_id: _u, changed_at: _at, ...settings } = event.data;
        return { ...state, settings };
      }
      case 'CircleDigestProduced':
        return { ...state, last_digest: { period: event.data.period, through_position: event.data.through_position } };
      case 'CircleNotificationsRead':
      case 'MailQueued':
        return state;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

export type SetNotificationSettings = Command<'SetNotificationSettings', { user_id: string; settings: Partial<NotificationSettings> }>;
/** The settings given over the current ones; nothing when nothing changes. */
export function decideSetNotificationSettings(command: SetNotificationSettings, state: CircleUserState): CircleNotificationSettingsChanged[] {
  const next = { ...state.settings, ...command.data.settings };
  if (JSON.stringify(next) === JSON.stringify(state.settings)) return [];
  return [{ type: 'CircleNotificationSettingsChanged', data: { user_id: command.data.user_id, ...next, changed_at: command.metadata.now.toISOString() } }];
}

export type MarkCircleNotificationsRead = Command<'MarkCircleNotificationsRead', { user_id: string; notification_ids: string[] | null }>;
export function decideMarkCircleNotificationsRead(command: MarkCircleNotificationsRead): CircleNotificationsRead[] {
  if (command.data.notification_ids !== null && command.data.notification_ids.length === 0) return [];
  return [{ type: 'CircleNotificationsRead', data: { ...command.data, read_at: command.metadata.now.toISOString() } }];
}

/** Digests go out from this hour (UTC) of each day; weekly ones on Mondays. */
export const DIGEST_HOUR_UTC = 8;
export const WEEKLY_DIGEST_DAY = 1; // Monday (Date#getUTCDay)

/**
 * The period a digest sent at `now` belongs to, named by its start date (UTC): daily, the day of
 * the latest DIGEST_HOUR_UTC; weekly, the Monday of the latest Monday DIGEST_HOUR_UTC.
 */
export function digestPeriodOf(now: Date, frequency: 'daily' | 'weekly'): string {
  const day = new Date(now.getTime() - DIGEST_HOUR_UTC * 3600_000);
  if (frequency === 'daily') return day.toISOString().slice(0, 10);
  const back = (day.getUTCDay() - WEEKLY_DIGEST_DAY + 7) % 7;
  return new Date(day.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}

/** A digest lists at most this many notifications (the mail says how many more there are). */
export const DIGEST_ITEMS = 20;

/**
 * ProduceCircleDigest: the member's digest of the period starting `period`, over the unread
 * notifications the worker found after the last digest (newest first, at most DIGEST_ITEMS, with
 * the total). `mail` is the sealed MailQueued of the digest mail (sealing draws a random IV, so it
 * is built before deciding).
 */
export type ProduceCircleDigest = Command<
  'ProduceCircleDigest',
  {
    user_id: string;
    frequency: 'daily' | 'weekly';
    period: string;
    unread: { notification_ids: string[]; count: number; after_position: number; through_position: number };
    mail: MailQueued;
  }
>;

/**
 * Nothing when the member's setting is not this frequency any more (`none` included), when a
 * digest of this period or a later one was already produced (at most one per period, whatever
 * restarts or retries), or when nothing is unread since the last digest.
 */
export function decideProduceCircleDigest(command: ProduceCircleDigest, state: CircleUserState): [CircleDigestProduced, MailQueued] | [] {
  const d = command.data;
  if (state.settings.digest !== d.frequency) return [];
  if (state.last_digest && state.last_digest.period >= d.period) return [];
  const after = state.last_digest?.through_position ?? 0;
  if (d.unread.count === 0 || d.unread.notification_ids.length === 0 || d.unread.through_position <= after) return [];
  return [
    {
      type: 'CircleDigestProduced',
      data: {
        user_id: d.user_id,
        frequency: d.frequency,
        period: d.period,
        unread_count: d.unread.count,
        notification_ids: d.unread.notification_ids.slice(0, DIGEST_ITEMS),
        after_position: after,
        through_position: d.unread.through_position,
        mail_id: d.mail.data.mail_id,
        produced_at: command.metadata.now.toISOString(),
      },
    },
    d.mail,
  ];
}

const handle = <R extends CircleUserStreamEvent[]>(bus: CommandBus, userId: string, decide: (s: CircleUserState) => R, ctx: CommandContext) =>
  bus.handle<CircleUserState, CircleUserStreamEvent, R>(circleUserStream(userId), circleUserAggregate, decide, ctx);

export const setNotificationSettings = (bus: CommandBus, data: SetNotificationSettings['data'], ctx: CommandContext) =>
  handle(bus, data.user_id, (s) => decideSetNotificationSettings({ type: 'SetNotificationSettings', data, metadata: { now: ctx.now } }, s), ctx);
export const markCircleNotificationsRead = (bus: CommandBus, data: MarkCircleNotificationsRead['data'], ctx: CommandContext) =>
  handle(bus, data.user_id, () => decideMarkCircleNotificationsRead({ type: 'MarkCircleNotificationsRead', data, metadata: { now: ctx.now } }), ctx);
export const produceCircleDigest = (bus: CommandBus, data: ProduceCircleDigest['data'], ctx: CommandContext) =>
  handle(bus, data.user_id, (s) => decideProduceCircleDigest({ type: 'ProduceCircleDigest', data, metadata: { now: ctx.now } }, s), ctx);
/** The member's circle state (settings and last digest), folded from the stream. */
export const circleUserState = async (bus: CommandBus, userId: string) => (await bus.load(circleUserStream(userId), circleUserAggregate)).state;
export const notificationSettings = async (bus: CommandBus, userId: string) => (await bus.load(circleUserStream(userId), circleUserAggregate)).state.settings;
