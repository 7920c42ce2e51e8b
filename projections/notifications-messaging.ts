import type { MeshThreadCreated, MeshThreadMessagePosted, NotificationsExpired, NotificationsRead } from '../events/messaging.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import type { ProjectionContext } from './types.ts';

const TTL_MS = 90 * 24 * 3600_000;

/**
 * The messaging side of the one notifications read model (`notifications`, owned by
 * `notificationsProjection` in notifications.ts): mesh-thread invitations and messages, reads
 * and expiries.
 */
export const MESSAGING_NOTIFICATION_EVENTS = ['MeshThreadCreated', 'MeshThreadMessagePosted', 'NotificationsRead', 'NotificationsExpired'] as const;

export async function applyMessagingNotifications(event: RecordedEvent, ctx: ProjectionContext): Promise<void> {
  const notifications = ctx.collection('notifications');
  const notify = async (agentId: string, type: string, from: string, data: Record<string, unknown>, at: string) => {
    const id = `ntf_${event.id}_${agentId}`;
    await notifications.applyAt(id, event.position, {
      $set: {
        notification_id: id,
        agent_id: agentId,
        type,
        from_agent_id: from,
        data,
        read: false,
        created_at: at,
        expires_at: new Date(Date.parse(at) + TTL_MS).toISOString(),
        seq: event.position,
      },
    });
  };
  switch (event.type) {
    case 'MeshThreadCreated': {
      const d = event.data as MeshThreadCreated['data'];
      for (const p of d.participant_agent_ids) {
        if (p !== d.agent_id)
          await notify(
            p,
            'mesh_thread_invite',
            d.agent_id,
            { thread_id: d.thread_id, name: d.name, from_agent_name: d.agent_name, message: d.first_message },
            d.created_at,
          );
      }
      return;
    }
    case 'MeshThreadMessagePosted': {
      const d = event.data as MeshThreadMessagePosted['data'];
      for (const p of d.participant_agent_ids) {
        if (p !== d.agent_id)
          await notify(
            p,
            'mesh_thread_message',
            d.agent_id,
            { thread_id: d.thread_id, message_id: d.message_id, from_agent_name: d.agent_name, message: d.message },
            d.posted_at,
          );
      }
      return;
    }
    case 'NotificationsRead': {
      const d = event.data as NotificationsRead['data'];
      for (const id of d.notification_ids) {
        if (await notifications.findOne({ _id: id, agent_id: d.agent_id }))
          await notifications.applyAt(id, event.position, { $set: { read: true, read_at: d.read_at } });
      }
      return;
    }
    case 'NotificationsExpired': {
      const d = event.data as NotificationsExpired['data'];
      for (const id of d.notification_ids) await notifications.deleteOne({ _id: id, agent_id: d.agent_id });
      return;
    }
    default:
      return;
  }
}
