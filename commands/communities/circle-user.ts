import type { CircleNotificationSettingsChanged, CircleNotificationsRead, CircleUserEvent } from '../../events/communities.ts';
import { circleUserStream } from '../../events/communities.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export interface NotificationSettings {
  mentions: boolean;
  replies: boolean;
  reactions: boolean;
  join_requests: boolean;
  digest: 'none' | 'daily' | 'weekly';
}
export const DEFAULT_SETTINGS: NotificationSettings = { mentions: true, replies: true, reactions: true, join_requests: true, digest: 'daily' };

/** `circle-user-<user_id>`: the member's circle notification settings. */
export interface CircleUserState {
  settings: NotificationSettings;
}

export const circleUserAggregate: Aggregate<CircleUserState, CircleUserEvent> = {
  initialState: () => ({ settings: DEFAULT_SETTINGS }),
  evolve(state, event) {
    switch (event.type) {
      case 'CircleNotificationSettingsChanged': {
        const { user_id: _u, changed_at: _at, ...settings } = event.data;
        return { settings };
      }
      case 'CircleNotificationsRead':
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

const handle = <R extends CircleUserEvent[]>(bus: CommandBus, userId: string, decide: (s: CircleUserState) => R, ctx: CommandContext) =>
  bus.handle<CircleUserState, CircleUserEvent, R>(circleUserStream(userId), circleUserAggregate, decide, ctx);

export const setNotificationSettings = (bus: CommandBus, data: SetNotificationSettings['data'], ctx: CommandContext) =>
  handle(bus, data.user_id, (s) => decideSetNotificationSettings({ type: 'SetNotificationSettings', data, metadata: { now: ctx.now } }, s), ctx);
export const markCircleNotificationsRead = (bus: CommandBus, data: MarkCircleNotificationsRead['data'], ctx: CommandContext) =>
  handle(bus, data.user_id, () => decideMarkCircleNotificationsRead({ type: 'MarkCircleNotificationsRead', data, metadata: { now: ctx.now } }), ctx);
export const notificationSettings = async (bus: CommandBus, userId: string) => (await bus.load(circleUserStream(userId), circleUserAggregate)).state.settings;
