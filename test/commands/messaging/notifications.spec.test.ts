import type { ExpireNotifications, MarkNotificationsRead, RecordHeartbeat } from '../../../commands/messaging/notifications.ts';
import { appendOnly, decideExpireNotifications, decideMarkNotificationsRead, decideRecordHeartbeat } from '../../../commands/messaging/notifications.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { NOW, SENDER, agentHeartbeatReceived, notificationsExpired, notificationsRead } from './fixtures.ts';

describe('commands: notifications and presence (notifications-<agent_id>, presence-<agent_id>)', () => {
  describe('MarkNotificationsRead', () => {
    const spec = DeciderSpecification.for({ decide: decideMarkNotificationsRead, ...appendOnly });
    const mark = (ids: string[]): MarkNotificationsRead => ({
      type: 'MarkNotificationsRead',
      data: { agent_id: SENDER, notification_ids: ids },
      metadata: { now: NOW },
    });

    it('records the notifications a fetch returned as read', () => {
      spec
        .given([])
        .when(mark(['ntf_1', 'ntf_2']))
        .then([notificationsRead()]);
    });

    it('records nothing when the fetch returned no unread notification', () => {
      spec.given([]).when(mark([])).thenNothingHappened();
    });
  });

  describe('ExpireNotifications', () => {
    const spec = DeciderSpecification.for({ decide: decideExpireNotifications, ...appendOnly });

    it('records the notifications that reached 90 days as expired', () => {
      const expire: ExpireNotifications = { type: 'ExpireNotifications', data: { agent_id: SENDER, notification_ids: ['ntf_1'] }, metadata: { now: NOW } };
      spec.given([]).when(expire).then([notificationsExpired()]);
    });
  });

  describe('RecordHeartbeat', () => {
    const spec = DeciderSpecification.for({ decide: decideRecordHeartbeat, ...appendOnly });

    it('records the status and capacity the agent reported, free of charge', () => {
      const beat: RecordHeartbeat = { type: 'RecordHeartbeat', data: { agent_id: SENDER, status: 'online', capacity: 80 }, metadata: { now: NOW } };
      spec.given([]).when(beat).then([agentHeartbeatReceived()]);
      spec
        .given([agentHeartbeatReceived({ status: 'offline' })])
        .when({ ...beat, data: { ...beat.data, status: 'degraded', capacity: null } })
        .then([agentHeartbeatReceived({ status: 'degraded', capacity: null })]);
    });
  });
});
