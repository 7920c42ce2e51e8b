import { DEFAULT_SETTINGS_VALUES } from './settings.ts';
import { defineProjection, type DataOf } from '../types.ts';
import { ownCopy } from '../../events/kernel/text.ts';

/** A circle notification of a user; `_id` is `cnt_<position>_<n>`. */
export type CircleNotificationDoc = NotificationFields & {
  _id: string;
  _pos: number;
  notification_id: string;
  user_id: string;
  kind: Kind;
  read: boolean;
  read_at: string | null;
  created_at: string;
  seq: number;
};

/** What a notification shows, by kind: the circle, what it is about and who acted. */
type NotificationFields = {
  circle_id: string;
  post_id?: string;
  reply_id?: string | null;
  request_id?: string;
  actor_id: string;
  actor_name?: string;
  admin_note?: string;
  text: string;
};

/** A user's notification settings; `_id` is the user id. Absent: DEFAULT_SETTINGS_VALUES. */
export type CircleNotificationSettingsDoc = Omit<DataOf<'CircleNotificationSettingsChanged'>, 'user_id'> & {
  _id: string;
  _pos: number;
};

/** A community's admins, for join-request notifications; `_id` is the community id. */
export type CircleCommunityAdminsDoc = {
  _id: string;
  _pos: number;
  admins: string[];
};

declare module '../store/port.ts' {
  interface ReadModels {
    circle_notifications: CircleNotificationDoc;
    circle_notification_settings: CircleNotificationSettingsDoc;
    circle_community_admins: CircleCommunityAdminsDoc;
  }
}

export type Kind = 'mention' | 'reply' | 'reaction' | 'join_request' | 'join_request_approved' | 'join_request_rejected';
/** Which setting lets each kind through. */
const SETTING: Record<Kind, 'mentions' | 'replies' | 'reactions' | 'join_requests'> = {
  mention: 'mentions',
  reply: 'replies',
  reaction: 'reactions',
  join_request: 'join_requests',
  join_request_approved: 'join_requests',
  join_request_rejected: 'join_requests',
};

/**
 * Circle notifications, per member, newest first, honouring each member's settings at the time of
 * the event (`circle_notification_settings`, kept here from the settings events). Ids derive from
 * the event's position, so a replay makes the same ones. Community admins (for join-request
 * notices) are followed in `circle_community_admins`.
 */
export const circleNotificationsProjection = defineProjection({
  name: 'circle-notifications',
  collections: [
    {
      name: 'circle_notifications',
      indexes: [
        { name: 'by_user', keys: { user_id: 1, seq: -1 } },
        { name: 'unread', keys: { user_id: 1, read: 1 } },
        { name: 'unread_by_circle', keys: { user_id: 1, circle_id: 1, read: 1 } },
        // The digest worker: members with unread notifications (skip-scan), and each one's unread after a position.
        { name: 'unread_users', keys: { read: 1, user_id: 1, seq: 1 } },
      ],
    },
    { name: 'circle_notification_settings', indexes: [] },
    { name: 'circle_community_admins', indexes: [] },
  ],
  handles: [
    'CirclePostPublished',
    'CircleReplyAdded',
    'CircleReactionToggled',
    'CircleJoinRequested',
    'CircleJoinRequestDecided',
    'CircleNotificationsRead',
    'CircleNotificationSettingsChanged',
    'CommunityAdminNamed',
    'CommunityMemberRemoved',
  ],
  async apply(event, ctx) {
    // The commonest event here, a post that mentions nobody, notifies nobody.
    if (event.type === 'CirclePostPublished' && event.data.mentions.length === 0) return;
    const notifications = ctx.collection('circle_notifications');
    const settings = ctx.collection('circle_notification_settings');
    const admins = ctx.collection('circle_community_admins');
    let n = 0;
    // Events apply in log order, so a member's settings (or a community's admins) written at a
    // later position mean this event is a redelivery: what it notified was decided when it was
    // first applied, under the settings of that time. Deciding again under today's would add the
    // notices a member had turned off then.
    const changedSince = (doc: { _pos: number } | null) => typeof doc?._pos === 'number' && doc._pos > event.position;
    const notify = async (userId: string, kind: Kind, fields: NotificationFields, at: string) => {
      const id = `cnt_${event.position.toString(36)}_${n++}`;
      const current = await settings.findOne({ _id: userId });
      if (changedSince(current)) return;
      const s = current ?? DEFAULT_SETTINGS_VALUES;
      if (s[SETTING[kind]] === false) return;
      await notifications.applyAt(id, event.position, {
        $set: { notification_id: id, user_id: userId, kind, read: false, read_at: null, created_at: at, seq: event.position, ...fields },
      });
    };
    switch (event.type) {
      case 'CirclePostPublished': {
        const d = event.data;
        for (const u of d.mentions)
          await notify(
            u,
            'mention',
            { circle_id: d.circle_id, post_id: d.post_id, actor_id: d.author_id, actor_name: d.author_name, text: ownCopy(d.content.slice(0, 200)) },
            d.published_at,
          );
        return;
      }
      case 'CircleReplyAdded': {
        const d = event.data;
        const base = {
          circle_id: d.circle_id,
          post_id: d.post_id,
          reply_id: d.reply_id,
          actor_id: d.author_id,
          actor_name: d.author_name,
          text: ownCopy(d.content.slice(0, 200)),
        };
        const told = new Set<string>([d.author_id]);
        const tell = async (u: string | null, kind: Kind) => {
          if (!u || told.has(u)) return;
          told.add(u);
          await notify(u, kind, base, d.replied_at);
        };
        for (const u of d.mentions) await tell(u, 'mention');
        for (const u of [d.post_author_id, d.parent_author_id]) await tell(u, 'reply');
        return;
      }
      case 'CircleReactionToggled': {
        const d = event.data;
        if (!d.on || d.user_id === d.target_author_id) return;
        await notify(
          d.target_author_id,
          'reaction',
          {
            circle_id: d.circle_id,
            post_id: d.post_id,
            reply_id: d.target_type === 'reply' ? d.target_id : null,
            actor_id: d.user_id,
            actor_name: d.user_name,
            text: d.reaction,
          },
          d.toggled_at,
        );
        return;
      }
      case 'CircleJoinRequested': {
        const d = event.data;
        const doc = await admins.findOne({ _id: d.community_id });
        if (changedSince(doc)) return;
        for (const a of doc?.admins ?? [])
          await notify(
            a,
            'join_request',
            { circle_id: d.circle_id, request_id: d.request_id, actor_id: d.user_id, actor_name: d.full_name, text: `${d.full_name} asks to join` },
            d.requested_at,
          );
        return;
      }
      case 'CircleJoinRequestDecided': {
        const d = event.data;
        const kind = d.status === 'approved' ? 'join_request_approved' : 'join_request_rejected';
        const text = `Your request to join ${d.circle_name} was ${d.status}${d.admin_note ? `: ${d.admin_note}` : ''}`;
        await notify(
          d.user_id,
          kind,
          { circle_id: d.circle_id, request_id: d.request_id, actor_id: d.decided_by, admin_note: d.admin_note, text },
          d.decided_at,
        );
        return;
      }
      case 'CircleNotificationsRead': {
        const d = event.data;
        // Only notifications made before this event: a redelivered "mark all read" leaves later ones unread.
        const before = { $lt: event.position };
        const filter =
          d.notification_ids === null
            ? { user_id: d.user_id, read: false, seq: before }
            : { _id: { $in: d.notification_ids }, user_id: d.user_id, read: false, seq: before };
        await notifications.updateMany(filter, { $set: { read: true, read_at: d.read_at } });
        return;
      }
      case 'CircleNotificationSettingsChanged': {
        const { user_id, ...s } = event.data;
        await settings.applyAt(user_id, event.position, { $set: s });
        return;
      }
      case 'CommunityAdminNamed':
        await admins.applyAt(event.data.community_id, event.position, { $addToSet: { admins: event.data.user_id } });
        return;
      case 'CommunityMemberRemoved':
        await admins.applyAt(event.data.community_id, event.position, { $pull: { admins: event.data.user_id } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
