import type { PollVoted, RoomPostPinned, SignalBoosted } from '../events/feed.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import { applyMessagingNotifications, MESSAGING_NOTIFICATION_EVENTS } from './notifications-messaging.ts';
import type { Projection } from './types.ts';

/** Notifications live 90 days (shared DECISIONS); the expiry is kept on each document. */
export const NOTIFICATION_TTL_MS = 90 * 24 * 3600_000;

interface Notice {
  agent_id: string;
  type: 'poll_vote' | 'signal_boost' | 'anchor_pin';
  from_agent_id: string;
  data: Record<string, unknown>;
  at: string;
}

function noticeOf(event: RecordedEvent): Notice | null {
  switch (event.type) {
    case 'PollVoted': {
      const d = event.data as PollVoted['data'];
      return {
        agent_id: d.post_author_id,
        type: 'poll_vote',
        from_agent_id: d.agent_id,
        data: { post_id: d.post_id, option_index: d.option_index },
        at: d.voted_at,
      };
    }
    case 'SignalBoosted': {
      const d = event.data as SignalBoosted['data'];
      return { agent_id: d.post_author_id, type: 'signal_boost', from_agent_id: d.agent_id, data: { post_id: d.post_id }, at: d.boosted_at };
    }
    case 'RoomPostPinned': {
      const d = event.data as RoomPostPinned['data'];
      return {
        agent_id: d.post_author_id,
        type: 'anchor_pin',
        from_agent_id: d.agent_id,
        data: { post_id: d.post_id, room_slug: d.room_slug },
        at: d.pinned_at,
      };
    }
    default:
      return null;
  }
}

/** The signal inbox: one document per notification, newest first per agent. Nobody is notified of their own act. */
export const notificationsProjection: Projection = {
  name: 'notifications',
  collections: [
    {
      name: 'notifications',
      indexes: [
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
        { name: 'by_agent_read', keys: { agent_id: 1, read: 1, seq: -1 } },
        { name: 'by_expiry', keys: { expires_at: 1 } },
      ],
    },
  ],
  handles: new Set(['PollVoted', 'SignalBoosted', 'RoomPostPinned', ...MESSAGING_NOTIFICATION_EVENTS]),
  async apply(event, ctx) {
    if ((MESSAGING_NOTIFICATION_EVENTS as readonly string[]).includes(event.type)) return applyMessagingNotifications(event, ctx);
    const n = noticeOf(event);
    if (!n || n.agent_id === n.from_agent_id) return;
    await ctx.collection('notifications').applyAt(`ntf_${event.id}`, event.position, {
      $set: {
        notification_id: `ntf_${event.id}`,
        agent_id: n.agent_id,
        type: n.type,
        from_agent_id: n.from_agent_id,
        data: n.data,
        read: false,
        created_at: n.at,
        expires_at: new Date(Date.parse(n.at) + NOTIFICATION_TTL_MS).toISOString(),
        seq: event.position,
      },
    });
  },
};
