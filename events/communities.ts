import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { Data, IsoDate, Literals, Nullable, UserId } from './types.ts';

// Communities, their circles, invite codes and memberships live on the community's stream
// (`community-<id>`), so every rule that spans them (the last circle, a code's uses, who may join
// which circle) is decided on one aggregate. Circle posts live on `cpost-<post_id>` (the post, its
// replies and every reaction on either); a member's circle notification state on
// `circle-user-<user_id>`.

export const VISIBILITIES = ['public', 'community', 'private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const CODE_STATUSES = ['active', 'paused', 'revoked'] as const;
export type CodeStatus = (typeof CODE_STATUSES)[number];
export const INTENTS = ['ask', 'offer', 'intro', 'update', 'question', 'event'] as const;
export type Intent = (typeof INTENTS)[number];
export const CIRCLE_REACTIONS = ['like', 'insightful', 'celebrate', 'support', 'curious'] as const;
export type CircleReaction = (typeof CIRCLE_REACTIONS)[number];
export const FLAG_REASONS = ['spam', 'harassment', 'misinformation', 'off-topic', 'inappropriate', 'other'] as const;
export const DIGESTS = ['none', 'daily', 'weekly'] as const;

const CommunityId = Type.String({ pattern: '^cmy_' });
const CircleId = Type.String({ pattern: '^crc_' });
const CodeId = Type.String({ pattern: '^icd_' });
const RequestId = Type.String({ pattern: '^cjr_' });
const PostId = Type.String({ pattern: '^cpo_' });
const ReplyId = Type.String({ pattern: '^crp_' });
const Name = Type.String({ minLength: 1, maxLength: 100 });
const Text = Type.String({ maxLength: 1000 });
const Tags = Type.Array(Type.String(), { maxItems: 20 });

/** A super admin created a community (API or CLI). */
export const CommunityCreatedData = Data({
  community_id: CommunityId,
  name: Name,
  description: Text,
  open: Type.Boolean(),
  created_by: Type.String(),
  created_at: IsoDate,
});
export type CommunityCreated = Event<'CommunityCreated', Static<typeof CommunityCreatedData>>;
/** A super admin named a community admin (who becomes a member of the community too). */
export const CommunityAdminNamedData = Data({
  community_id: CommunityId,
  user_id: UserId,
  full_name: Name,
  named_by: Type.String(),
  named_at: IsoDate,
});
export type CommunityAdminNamed = Event<'CommunityAdminNamed', Static<typeof CommunityAdminNamedData>>;

export const CircleCreatedData = Data({
  circle_id: CircleId,
  community_id: CommunityId,
  name: Name,
  description: Text,
  visibility: Literals(VISIBILITIES),
  created_by: Type.String(),
  created_at: IsoDate,
});
export type CircleCreated = Event<'CircleCreated', Static<typeof CircleCreatedData>>;
export const CircleVisibilityChangedData = Data({
  circle_id: CircleId,
  community_id: CommunityId,
  visibility: Literals(VISIBILITIES),
  changed_by: UserId,
  changed_at: IsoDate,
});
export type CircleVisibilityChanged = Event<'CircleVisibilityChanged', Static<typeof CircleVisibilityChangedData>>;
export const CircleDeletedData = Data({ circle_id: CircleId, community_id: CommunityId, deleted_by: UserId, deleted_at: IsoDate });
export type CircleDeleted = Event<'CircleDeleted', Static<typeof CircleDeletedData>>;

/** An invite code: 10 characters of an unambiguous alphabet; joins `{PUBLIC_BASE_URL}/join/{code}`. */
export const InviteCodeCreatedData = Data({
  code_id: CodeId,
  community_id: CommunityId,
  code: Type.String({ pattern: '^[A-Z2-9]{10}$' }),
  label: Nullable(Type.String({ maxLength: 100 })),
  max_uses: Nullable(Type.Integer({ minimum: 1 })),
  expires_at: Nullable(IsoDate),
  created_by: UserId,
  created_at: IsoDate,
});
export type InviteCodeCreated = Event<'InviteCodeCreated', Static<typeof InviteCodeCreatedData>>;
export const InviteCodeStatusChangedData = Data({
  code_id: CodeId,
  community_id: CommunityId,
  status: Literals(CODE_STATUSES),
  changed_by: UserId,
  changed_at: IsoDate,
});
export type InviteCodeStatusChanged = Event<'InviteCodeStatusChanged', Static<typeof InviteCodeStatusChangedData>>;

/** A member joined the community (with an invite code, or by an approved circle request: `code_id` null). */
export const CommunityMemberJoinedData = Data({
  community_id: CommunityId,
  user_id: UserId,
  full_name: Name,
  code_id: Nullable(CodeId),
  joined_at: IsoDate,
});
export type CommunityMemberJoined = Event<'CommunityMemberJoined', Static<typeof CommunityMemberJoinedData>>;
/** An admin removed a member from the community and every circle of it. */
export const CommunityMemberRemovedData = Data({ community_id: CommunityId, user_id: UserId, removed_by: UserId, removed_at: IsoDate });
export type CommunityMemberRemoved = Event<'CommunityMemberRemoved', Static<typeof CommunityMemberRemovedData>>;

export const CircleMemberJoinedData = Data({
  circle_id: CircleId,
  community_id: CommunityId,
  user_id: UserId,
  full_name: Name,
  via: Literals(['direct', 'request', 'admin', 'founder'] as const),
  joined_at: IsoDate,
});
export type CircleMemberJoined = Event<'CircleMemberJoined', Static<typeof CircleMemberJoinedData>>;
export const CircleJoinRequestedData = Data({
  request_id: RequestId,
  circle_id: CircleId,
  community_id: CommunityId,
  user_id: UserId,
  full_name: Name,
  requested_at: IsoDate,
});
export type CircleJoinRequested = Event<'CircleJoinRequested', Static<typeof CircleJoinRequestedData>>;
export const CircleJoinRequestDecidedData = Data({
  request_id: RequestId,
  circle_id: CircleId,
  community_id: CommunityId,
  user_id: UserId,
  circle_name: Name,
  status: Literals(['approved', 'rejected'] as const),
  admin_note: Type.String({ maxLength: 500 }),
  decided_by: UserId,
  decided_at: IsoDate,
});
export type CircleJoinRequestDecided = Event<'CircleJoinRequestDecided', Static<typeof CircleJoinRequestDecidedData>>;

/** On `cpost-<post_id>`. `mentions`: the circle members named with `@name`, resolved when posting. */
export const CirclePostPublishedData = Data({
  post_id: PostId,
  circle_id: CircleId,
  community_id: CommunityId,
  author_id: UserId,
  author_name: Name,
  content: Type.String({ minLength: 1, maxLength: 5000 }),
  intent: Literals(INTENTS),
  link_url: Nullable(Type.String({ maxLength: 2000 })),
  hashtags: Tags,
  mentions: Type.Array(UserId, { maxItems: 20 }),
  published_at: IsoDate,
});
export type CirclePostPublished = Event<'CirclePostPublished', Static<typeof CirclePostPublishedData>>;
export const CirclePostEditedData = Data({
  post_id: PostId,
  circle_id: CircleId,
  author_id: UserId,
  content: Type.String({ minLength: 1, maxLength: 5000 }),
  intent: Literals(INTENTS),
  hashtags: Tags,
  edited_at: IsoDate,
});
export type CirclePostEdited = Event<'CirclePostEdited', Static<typeof CirclePostEditedData>>;
export const CirclePostDeletedData = Data({ post_id: PostId, circle_id: CircleId, author_id: UserId, deleted_at: IsoDate });
export type CirclePostDeleted = Event<'CirclePostDeleted', Static<typeof CirclePostDeletedData>>;
export const CircleReplyAddedData = Data({
  reply_id: ReplyId,
  post_id: PostId,
  circle_id: CircleId,
  parent_reply_id: Nullable(ReplyId),
  author_id: UserId,
  author_name: Name,
  content: Type.String({ minLength: 1, maxLength: 2000 }),
  mentions: Type.Array(UserId, { maxItems: 20 }),
  /** Who hears of it: the post's author and, for a nested reply, the parent reply's author. */
  post_author_id: UserId,
  parent_author_id: Nullable(UserId),
  replied_at: IsoDate,
});
export type CircleReplyAdded = Event<'CircleReplyAdded', Static<typeof CircleReplyAddedData>>;
/** A reaction set (`on`) or taken back on a post or one of its replies. */
export const CircleReactionToggledData = Data({
  target_type: Literals(['post', 'reply'] as const),
  target_id: Type.String(),
  post_id: PostId,
  circle_id: CircleId,
  user_id: UserId,
  user_name: Name,
  target_author_id: UserId,
  reaction: Literals(CIRCLE_REACTIONS),
  on: Type.Boolean(),
  toggled_at: IsoDate,
});
export type CircleReactionToggled = Event<'CircleReactionToggled', Static<typeof CircleReactionToggledData>>;

/**
 * On `cpost-<post_id>`: a community admin (or a super admin) hid or restored a circle post or one
 * of its replies, with a note (docs/MODERATION.md "Community moderation").
 */
export const CircleContentModeratedData = Data({
  target_type: Literals(['post', 'reply'] as const),
  target_id: Type.String({ minLength: 1 }),
  post_id: PostId,
  circle_id: CircleId,
  community_id: CommunityId,
  action: Literals(['hide', 'restore'] as const),
  by_user_id: UserId,
  note: Type.String({ maxLength: 2000 }),
  at: IsoDate,
});
export type CircleContentModerated = Event<'CircleContentModerated', Static<typeof CircleContentModeratedData>>;

/** On `circle-user-<user_id>`: notifications marked read (`notification_ids` null: all of them). */
export const CircleNotificationsReadData = Data({
  user_id: UserId,
  notification_ids: Nullable(Type.Array(Type.String({ pattern: '^cnt_' }), { maxItems: 100 })),
  read_at: IsoDate,
});
export type CircleNotificationsRead = Event<'CircleNotificationsRead', Static<typeof CircleNotificationsReadData>>;
export const CircleNotificationSettingsChangedData = Data({
  user_id: UserId,
  mentions: Type.Boolean(),
  replies: Type.Boolean(),
  reactions: Type.Boolean(),
  join_requests: Type.Boolean(),
  digest: Literals(DIGESTS),
  changed_at: IsoDate,
});
export type CircleNotificationSettingsChanged = Event<'CircleNotificationSettingsChanged', Static<typeof CircleNotificationSettingsChangedData>>;
/**
 * On `circle-user-<user_id>`, with the MailQueued of the digest mail (one append): the member's
 * digest of the period starting `period` (a UTC date: the day, or the Monday of the week), listing
 * the unread notifications written after `after_position` up to `through_position` (log positions).
 */
export const CircleDigestProducedData = Data({
  user_id: UserId,
  frequency: Literals(['daily', 'weekly'] as const),
  period: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
  unread_count: Type.Integer({ minimum: 1 }),
  notification_ids: Type.Array(Type.String({ pattern: '^cnt_' }), { minItems: 1, maxItems: 20 }),
  after_position: Type.Integer({ minimum: 0 }),
  through_position: Type.Integer({ minimum: 1 }),
  mail_id: Type.String(),
  produced_at: IsoDate,
});
export type CircleDigestProduced = Event<'CircleDigestProduced', Static<typeof CircleDigestProducedData>>;

export type CommunityEvent =
  | CommunityCreated
  | CommunityAdminNamed
  | CircleCreated
  | CircleVisibilityChanged
  | CircleDeleted
  | InviteCodeCreated
  | InviteCodeStatusChanged
  | CommunityMemberJoined
  | CommunityMemberRemoved
  | CircleMemberJoined
  | CircleJoinRequested
  | CircleJoinRequestDecided;
export type CirclePostEvent = CirclePostPublished | CirclePostEdited | CirclePostDeleted | CircleReplyAdded | CircleReactionToggled | CircleContentModerated;
export type CircleUserEvent = CircleNotificationsRead | CircleNotificationSettingsChanged | CircleDigestProduced;

export const communityEventSchemas = {
  CommunityCreated: CommunityCreatedData,
  CommunityAdminNamed: CommunityAdminNamedData,
  CircleCreated: CircleCreatedData,
  CircleVisibilityChanged: CircleVisibilityChangedData,
  CircleDeleted: CircleDeletedData,
  InviteCodeCreated: InviteCodeCreatedData,
  InviteCodeStatusChanged: InviteCodeStatusChangedData,
  CommunityMemberJoined: CommunityMemberJoinedData,
  CommunityMemberRemoved: CommunityMemberRemovedData,
  CircleMemberJoined: CircleMemberJoinedData,
  CircleJoinRequested: CircleJoinRequestedData,
  CircleJoinRequestDecided: CircleJoinRequestDecidedData,
  CirclePostPublished: CirclePostPublishedData,
  CirclePostEdited: CirclePostEditedData,
  CirclePostDeleted: CirclePostDeletedData,
  CircleReplyAdded: CircleReplyAddedData,
  CircleReactionToggled: CircleReactionToggledData,
  CircleContentModerated: CircleContentModeratedData,
  CircleNotificationsRead: CircleNotificationsReadData,
  CircleNotificationSettingsChanged: CircleNotificationSettingsChangedData,
  CircleDigestProduced: CircleDigestProducedData,
};

export const communityStream = (communityId: string) => `community-${communityId}`;
export const circlePostStream = (postId: string) => `cpost-${postId}`;
export const circleUserStream = (userId: string) => `circle-user-${userId}`;
