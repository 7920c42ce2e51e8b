import { any, arr, bool, int, map, nullable, nullNum, nullStr, num, obj, str, strs, nullInt } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** postAdminCommunities 201 */
export const PostAdminCommunitiesAnswer201 = obj({
  community_id: str,
  name: str,
  description: nullStr,
  open: bool,
  admins: arr(any),
  created_at: str,
  circles: arr(
    obj({
      circle_id: str,
      community_id: str,
      name: str,
      description: nullStr,
      visibility: str,
      created_at: str,
    }),
  ),
});

/** postAdminCommunitiesByCommunityIdAdmins 200 */
export const PostAdminCommunitiesByCommunityIdAdminsAnswer = obj({
  community_id: str,
  name: str,
  description: nullStr,
  open: bool,
  admins: strs,
  created_at: str,
});

/** postCommunitiesJoin 200 */
export const PostCommunitiesJoinAnswer = obj({
  community: PostAdminCommunitiesByCommunityIdAdminsAnswer,
  joined: bool,
  circles: arr(
    obj({
      circle_id: str,
      community_id: str,
      name: str,
      description: nullStr,
      visibility: str,
      created_at: str,
    }),
  ),
});

/** getAdminCommunityAdminDashboard 200 */
export const GetAdminCommunityAdminDashboardAnswer = obj({
  communities: arr(
    obj({
      community_id: str,
      name: str,
      description: nullStr,
      open: bool,
      admins: strs,
      created_at: str,
      stats: obj({
        members: num,
        circles: num,
        pending_requests: num,
        invite_codes: num,
        active_codes: num,
        code_uses: num,
      }),
    }),
  ),
  super_admin: bool,
});

/** getAdminCommunityAdminMembers 200 */
export const GetAdminCommunityAdminMembersAnswer = obj({
  members: arr(
    obj({
      user_id: str,
      community_id: str,
      full_name: nullStr,
      circles: strs,
      code_id: nullStr,
      joined_at: str,
    }),
  ),
  total: int,
  page: int,
  limit: int,
  has_more: bool,
  next_cursor: nullStr,
});

/** deleteAdminCommunityAdminMembersByMemberId 200 */
export const DeleteAdminCommunityAdminMembersByMemberIdAnswer = obj({
  removed: bool,
  user_id: str,
  community_id: str,
});

/** postAdminCommunityAdminCodes 201 */
export const PostAdminCommunityAdminCodesAnswer201 = obj({
  code_id: str,
  community_id: str,
  code: str,
  label: nullStr,
  status: str,
  uses: num,
  max_uses: nullNum,
  expires_at: nullStr,
  active_members: num,
  join_url: str,
  created_at: str,
});

/** putAdminCommunityAdminCodesByCodeId 200 */
export const PutAdminCommunityAdminCodesByCodeIdAnswer = obj({
  code_id: str,
  community_id: str,
  code: str,
  label: nullStr,
  status: str,
  uses: num,
  max_uses: nullInt,
  expires_at: nullStr,
  active_members: num,
  join_url: str,
  created_at: str,
});

/** getAdminCommunityAdminInviteAnalyticsByCommunityId 200 */
export const GetAdminCommunityAdminInviteAnalyticsByCommunityIdAnswer = obj({
  community_id: str,
  total_uses: num,
  codes: arr(
    obj({
      code_id: str,
      code: str,
      label: nullStr,
      status: str,
      uses: num,
      max_uses: nullNum,
      active_members: num,
    }),
  ),
  joins_per_day: arr(
    obj({
      date: str,
      joins: num,
    }),
  ),
});

/** postAdminCommunityAdminCircles 201 */
export const PostAdminCommunityAdminCirclesAnswer201 = obj({
  circle_id: str,
  community_id: str,
  name: str,
  description: nullStr,
  visibility: str,
  created_at: str,
});

/** putAdminCommunityAdminCirclesByCircleIdVisibility 200 */
export const PutAdminCommunityAdminCirclesByCircleIdVisibilityAnswer = PostAdminCommunityAdminCirclesAnswer201;

/** postAdminCommunityAdminCirclesByCircleIdMembers 200 */
export const PostAdminCommunityAdminCirclesByCircleIdMembersAnswer = obj({
  circle_id: str,
  user_id: str,
  member: bool,
});

/** getAdminCommunityAdminCircleRequests 200 */
export const GetAdminCommunityAdminCircleRequestsAnswer = obj({
  requests: arr(
    obj({
      request_id: str,
      circle_id: str,
      community_id: str,
      user_id: str,
      full_name: nullStr,
      status: str,
      admin_note: nullStr,
      requested_at: str,
      decided_at: nullStr,
    }),
  ),
  count: int,
});

/** postAdminCommunityAdminCircleRequestsByRequestIdApprove 200 */
export const PostAdminCommunityAdminCircleRequestsByRequestIdApproveAnswer = obj({
  request_id: str,
  circle_id: str,
  community_id: str,
  user_id: str,
  full_name: nullStr,
  status: str,
  admin_note: nullStr,
  requested_at: str,
  decided_at: nullStr,
});

/** postAdminCommunityAdminCircleRequestsByRequestIdReject 200 */
export const PostAdminCommunityAdminCircleRequestsByRequestIdRejectAnswer = PostAdminCommunityAdminCircleRequestsByRequestIdApproveAnswer;

/** getBrewCirclesIntents 200 */
export const GetBrewCirclesIntentsAnswer = obj({
  intents: strs,
});

/** getBrewCirclesReactions 200 */
export const GetBrewCirclesReactionsAnswer = obj({
  reactions: strs,
});

/** getBrewCirclesFlagReasons 200 */
export const GetBrewCirclesFlagReasonsAnswer = obj({
  flag_reasons: strs,
});

/** postBrewCirclesReactions 200 */
export const PostBrewCirclesReactionsAnswer = obj({
  target_type: str,
  target_id: str,
  reaction: str,
  active: bool,
  reactions: map(),
});

/** getBrewCirclesNotifications 200 */
export const GetBrewCirclesNotificationsAnswer = obj({
  notifications: arr(
    obj({
      notification_id: str,
      kind: str,
      circle_id: str,
      post_id: nullStr,
      reply_id: nullStr,
      request_id: nullStr,
      actor_id: str,
      actor_name: nullStr,
      admin_note: nullStr,
      text: str,
      read: bool,
      created_at: str,
    }),
  ),
  unread_count: int,
  skip: int,
  limit: int,
});

/** postBrewCirclesNotificationsRead 200 */
export const PostBrewCirclesNotificationsReadAnswer = obj({
  unread_count: int,
});

/** getBrewCirclesNotificationsCount 200 */
export const GetBrewCirclesNotificationsCountAnswer = PostBrewCirclesNotificationsReadAnswer;

/** getBrewCirclesSettingsNotifications 200 */
export const GetBrewCirclesSettingsNotificationsAnswer = obj({
  mentions: bool,
  replies: bool,
  reactions: bool,
  join_requests: bool,
  digest: str,
});

/** putBrewCirclesSettingsNotifications 200 */
export const PutBrewCirclesSettingsNotificationsAnswer = GetBrewCirclesSettingsNotificationsAnswer;

/** getBrewCirclesUserCircles 200 */
export const GetBrewCirclesUserCirclesAnswer = obj({
  circles: arr(
    obj({
      circle_id: str,
      community_id: str,
      name: str,
      description: nullStr,
      visibility: str,
      created_at: str,
      unread_count: int,
      last_activity_at: nullStr,
      post_count: int,
      joined_at: str,
    }),
  ),
  count: int,
});

/** A circle as the community page lists it for the caller. */
const CommunityCircle = obj({
  circle_id: str,
  community_id: str,
  name: str,
  description: nullStr,
  visibility: str,
  created_at: str,
  is_member: bool,
});

/** getBrewCirclesCommunityByCommunityId 200 */
export const GetBrewCirclesCommunityByCommunityIdAnswer = obj({
  community_id: str,
  name: str,
  // The first circle the caller may see; null when they see none.
  circle: nullable(CommunityCircle),
  circles: arr(CommunityCircle),
});

/** queries/communities/circles.ts postView: a circle post. */
export const CirclePostView = obj({
  post_id: str,
  circle_id: str,
  community_id: str,
  author_id: str,
  author_name: str,
  content: str,
  intent: str,
  link_url: nullStr,
  hashtags: strs,
  mentions: strs,
  reply_count: int,
  reactions: map(),
  published_at: str,
  edited_at: nullStr,
});

/** postBrewCirclesPosts 201 */
export const PostBrewCirclesPostsAnswer201 = CirclePostView;

export const PutBrewCirclesPostsByPostIdAnswer = CirclePostView;
export const GetBrewCirclesPostsByPostIdAnswer = CirclePostView;

/** deleteBrewCirclesPostsByPostId 200 */
export const DeleteBrewCirclesPostsByPostIdAnswer = obj({
  deleted: bool,
  post_id: str,
});

/** getBrewCirclesPostsByPostIdReplies 200 */
export const GetBrewCirclesPostsByPostIdRepliesAnswer = obj({
  replies: arr(
    obj({
      reply_id: str,
      post_id: str,
      parent_reply_id: nullStr,
      author_id: str,
      author_name: str,
      content: str,
      mentions: strs,
      reactions: map(),
      replied_at: str,
    }),
  ),
  reply_count: int,
  skip: int,
  limit: int,
});

/** postBrewCirclesReplies 201 */
export const PostBrewCirclesRepliesAnswer201 = obj({
  reply_id: str,
  post_id: str,
  parent_reply_id: nullStr,
  author_id: str,
  author_name: str,
  content: str,
  mentions: strs,
  reactions: map(),
  replied_at: str,
});

/** postBrewCirclesLinkPreview 200 */
export const PostBrewCirclesLinkPreviewAnswer = obj({
  url: str,
  title: nullStr,
  description: nullStr,
  image: nullStr,
  site_name: nullStr,
});

/** getBrewCirclesCirclesByCircleIdMembersSearch 200 */
export const GetBrewCirclesCirclesByCircleIdMembersSearchAnswer = obj({
  members: arr(
    obj({
      user_id: str,
      full_name: nullStr,
    }),
  ),
  q: str,
});

/** getBrewCirclesByCircleId 200 */
export const GetBrewCirclesByCircleIdAnswer = obj({
  circle_id: str,
  community_id: str,
  name: str,
  description: nullStr,
  visibility: str,
  created_at: str,
  member_count: int,
  post_count: int,
  last_activity_at: nullStr,
  is_member: bool,
  is_admin: bool,
});

/** deleteBrewCirclesByCircleId 200 */
export const DeleteBrewCirclesByCircleIdAnswer = obj({
  deleted: bool,
  circle_id: str,
});

/** postBrewCirclesByCircleIdJoin 200 */
export const PostBrewCirclesByCircleIdJoinAnswer = obj(
  {
    circle_id: str,
    status: str,
  },
  {
    request_id: str,
  },
);

/** getBrewCirclesByCircleIdMembers 200 */
export const GetBrewCirclesByCircleIdMembersAnswer = obj({
  members: arr(
    obj({
      user_id: str,
      full_name: nullStr,
      joined_at: str,
    }),
  ),
  total: int,
  skip: int,
  limit: int,
});

/** getBrewCirclesByCircleIdPosts 200 */
export const GetBrewCirclesByCircleIdPostsAnswer = obj({
  posts: arr(CirclePostView),
  skip: int,
  limit: int,
  tag: nullStr,
});

/** getBrewCirclesByCircleIdTrendingTags 200 */
export const GetBrewCirclesByCircleIdTrendingTagsAnswer = obj({
  circle_id: str,
  days: int,
  tags: arr(
    obj({
      tag: str,
      count: int,
    }),
  ),
});

/** getBrewCirclesByCircleIdPostsCheckNew 200 */
export const GetBrewCirclesByCircleIdPostsCheckNewAnswer = obj({
  has_new: bool,
  count: int,
  latest_post_id: nullStr,
  since: str,
});
