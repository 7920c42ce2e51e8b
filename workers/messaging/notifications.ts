import type { Agenda } from 'agenda';
import type { WorkerDeps } from '../deps.ts';
import { expireNotifications } from '../../commands/messaging/notifications.ts';
import { expiredNotifications } from '../../queries/messaging/notifications.ts';
import { APPEND_LANES, inLanes } from '../lanes.ts';

/** What these jobs use of the composition root. */
export type NotificationDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'runner' | 'store'>;

export const NOTIFICATION_JOBS = { expire: 'notifications.expire' } as const;

/**
 * The 90-day expiry of notifications: a job (hourly, and once at start) finds the notifications
 * whose time is over at the clock's `now` and records NotificationsExpired per agent; the
 * notifications read model removes them. Returns how many expired.
 */
export function defineNotificationJobs(s: NotificationDeps, agenda: Agenda): { expire(): Promise<number> } {
  const expire = async () => {
    let total = 0;
    for (;;) {
      const now = s.clock.now();
      const due = await expiredNotifications(s.store, now);
      if (due.size === 0) return total;
      await inLanes([...due], APPEND_LANES, async ([agentId, ids]) => {
        const r = await expireNotifications(s.bus, agentId, ids, {
          commandId: `expire:${agentId}:${now.toISOString()}:${ids[0]}`,
          actor: 'system:notifications',
          requestId: null,
          now,
        });
        await s.runner.waitFor(r.position);
        total += ids.length;
      });
    }
  };
  agenda.define(NOTIFICATION_JOBS.expire, async () => {
    await expire();
  });
  return { expire };
}
