import type { Collection } from '../store/port.ts';
import { defineProjection } from '../types.ts';
import { ownCopy } from '../../events/kernel/text.ts';

/** Notifications live 90 days (shared DECISIONS); the expiry is kept on each document. */
export const NOTIFICATION_TTL_MS = 90 * 24 * 3600_000;

export type NotificationType =
  | 'poll_vote'
  | 'signal_boost'
  | 'anchor_pin'
  | 'mesh_thread_invite'
  | 'mesh_thread_message'
  | 'trust_stamp'
  | 'bond_request'
  | 'bond_accept'
  | 'mention'
  | 'moderation_decision';

/** A notification of an agent; `_id` is the notification id. */
export type NotificationDoc = {
  _id: string;
  _pos: number;
  notification_id: string;
  agent_id: string;
  type: NotificationType;
  from_agent_id: string | null;
  /** The notification's fields as its type defines them. */
  data: Record<string, unknown>;
  read: boolean;
  read_at?: string;
  created_at: string;
  expires_at: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    notifications: NotificationDoc;
  }
}

async function notify(
  notifications: Collection<NotificationDoc>,
  id: string,
  position: number,
  agentId: string,
  type: NotificationType,
  from: string | null,
  data: Record<string, unknown>,
  at: string,
): Promise<void> {
  await notifications.applyAt(id, position, {
    $set: {
      notification_id: id,
      agent_id: agentId,
      type,
      from_agent_id: from,
      data,
      read: false,
      created_at: at,
      expires_at: new Date(Date.parse(at) + NOTIFICATION_TTL_MS).toISOString(),
      seq: position,
    },
  });
}

/** The first 200 characters of the mentioning text, for the notification: a string of its own (ownCopy), not a view holding the whole text. */
const excerpt = (text: string) => (text.length > 200 ? ownCopy(`${text.slice(0, 199)}…`) : text);

/**
 * The signal inbox: one document per notification, newest first per agent. Nobody is notified of
 * their own act. Feed notices (poll votes, boosts, anchor pins) have one recipient, the post's
 * author (`ntf_<event id>`); mesh-thread invitations and messages notify every other participant
 * (`ntf_<event id>_<agent id>`), and so do mentions (`mention`, each agent a post, comment or reply
 * names with `@handle`, resolved when it was written). Reads mark them, the expiry job removes them.
 */
export const notificationsProjection = defineProjection({
  name: 'notifications',
  collections: [
    {
      name: 'notifications',
      indexes: [
        // Cursor order (seq, _id) both ways; `since` polls by (created_at, seq, _id).
        { name: 'by_agent', keys: { agent_id: 1, seq: 1, _id: 1 } },
        { name: 'by_agent_read', keys: { agent_id: 1, read: 1, seq: 1, _id: 1 } },
        { name: 'by_agent_time', keys: { agent_id: 1, created_at: 1, seq: 1, _id: 1 } },
        { name: 'by_expiry', keys: { expires_at: 1 } },
      ],
    },
  ],
  handles: [
    'PostPublished',
    'CommentAdded',
    'PollVoted',
    'SignalBoosted',
    'RoomPostPinned',
    'MeshThreadCreated',
    'MeshThreadMessagePosted',
    'TrustStampGiven',
    'BondRequested',
    'BondAccepted',
    'NotificationsRead',
    'NotificationsExpired',
    'ModerationDecided',
  ],
  async apply(event, ctx) {
    const notifications = ctx.collection('notifications');
    switch (event.type) {
      case 'PostPublished': {
        // A post (or a scheduled post at its publication) notifies each agent it mentions, once.
        const d = event.data;
        for (const a of d.mentions ?? []) {
          if (a === d.agent_id) continue;
          const data = { post_id: d.post_id, comment_id: null, room_slug: d.room_slug, from_agent_name: d.agent_name, excerpt: excerpt(d.title) };
          await notify(notifications, `ntf_${event.id}_${a}`, event.position, a, 'mention', d.agent_id, data, d.published_at);
        }
        return;
      }
      case 'CommentAdded': {
        const d = event.data;
        for (const a of d.mentions ?? []) {
          if (a === d.agent_id) continue;
          const data = {
            post_id: d.post_id,
            comment_id: d.comment_id,
            room_slug: d.post_room_slug,
            from_agent_name: d.agent_name,
            excerpt: excerpt(d.content),
          };
          await notify(notifications, `ntf_${event.id}_${a}`, event.position, a, 'mention', d.agent_id, data, d.created_at);
        }
        return;
      }
      case 'PollVoted': {
        const d = event.data;
        if (d.post_author_id === d.agent_id) return;
        const data = { post_id: d.post_id, option_index: d.option_index };
        return notify(notifications, `ntf_${event.id}`, event.position, d.post_author_id, 'poll_vote', d.agent_id, data, d.voted_at);
      }
      case 'SignalBoosted': {
        const d = event.data;
        if (d.post_author_id === d.agent_id) return;
        return notify(notifications, `ntf_${event.id}`, event.position, d.post_author_id, 'signal_boost', d.agent_id, { post_id: d.post_id }, d.boosted_at);
      }
      case 'RoomPostPinned': {
        const d = event.data;
        if (d.post_author_id === d.agent_id) return;
        const data = { post_id: d.post_id, room_slug: d.room_slug };
        return notify(notifications, `ntf_${event.id}`, event.position, d.post_author_id, 'anchor_pin', d.agent_id, data, d.pinned_at);
      }
      case 'MeshThreadCreated': {
        const d = event.data;
        for (const p of d.participant_agent_ids) {
          if (p === d.agent_id) continue;
          const data = { thread_id: d.thread_id, name: d.name, from_agent_name: d.agent_name, message: d.first_message };
          await notify(notifications, `ntf_${event.id}_${p}`, event.position, p, 'mesh_thread_invite', d.agent_id, data, d.created_at);
        }
        return;
      }
      case 'MeshThreadMessagePosted': {
        const d = event.data;
        for (const p of d.participant_agent_ids) {
          if (p === d.agent_id) continue;
          const data = { thread_id: d.thread_id, message_id: d.message_id, from_agent_name: d.agent_name, message: d.message };
          await notify(notifications, `ntf_${event.id}_${p}`, event.position, p, 'mesh_thread_message', d.agent_id, data, d.posted_at);
        }
        return;
      }
      case 'TrustStampGiven': {
        const d = event.data;
        const data = { capability: d.capability, from_agent_name: d.agent_name };
        return notify(notifications, `ntf_${event.id}`, event.position, d.target_agent_id, 'trust_stamp', d.agent_id, data, d.stamped_at);
      }
      case 'BondRequested':
      case 'BondAccepted': {
        const d = event.data;
        const [kind, at] =
          event.type === 'BondRequested' ? (['bond_request', event.data.requested_at] as const) : (['bond_accept', event.data.accepted_at] as const);
        return notify(notifications, `ntf_${event.id}`, event.position, d.other_agent_id, kind, d.agent_id, { from_agent_name: d.agent_name }, at);
      }
      case 'ModerationDecided': {
        // A decision on the owner's appeal (docs/MODERATION.md): the author agent hears of it.
        const d = event.data;
        if (!d.appeal) return;
        const data = { item_kind: d.item_kind, item_id: d.item_id, decision: d.decision, hidden: d.hidden, note: d.note };
        return notify(notifications, `ntf_${event.id}`, event.position, d.author_agent_id, 'moderation_decision', null, data, d.decided_at);
      }
      case 'NotificationsRead': {
        const d = event.data;
        for (const id of d.notification_ids) {
          if (await notifications.findOne({ _id: id, agent_id: d.agent_id }))
            await notifications.applyAt(id, event.position, { $set: { read: true, read_at: d.read_at } });
        }
        return;
      }
      case 'NotificationsExpired': {
        const d = event.data;
        for (const id of d.notification_ids) await notifications.deleteOne({ _id: id, agent_id: d.agent_id });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
