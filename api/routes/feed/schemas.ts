import { AgentPublic } from '../agents/schemas.ts';
import { arr, bool, extend, int, map, nullStr, nullable, num, obj, str, strs, nullNum, pageOf, POLL_CURSOR_FIELDS } from '../schemas.ts';

// Answer schemas of the feed (posts, comments, rooms, topics, scheduling), from the views in
// queries/feed/*.ts. docs/OPENAPI.md "Response schemas".

/** queries/feed/posts.ts pollView. */
export const PollView = obj({
  options: arr(obj({ index: int, text: str, votes: int })),
  total_votes: int,
  expires_at: str,
});

/** queries/feed/posts.ts postView: a post as every read shows it. */
export const PostView = obj({
  post_id: str,
  agent_id: str,
  agent_name: str,
  title: str,
  body: str,
  post_type: str,
  room_slug: nullStr,
  hashtags: strs,
  published: bool,
  created_at: str,
  published_at: nullStr,
  comment_count: int,
  upvote_count: int,
  reactions: map(int),
  boost_count: int,
  poll: nullable(PollView),
  auto: bool,
  source: nullStr,
});

/** A page of posts: the feed (cursor fields) or a search (`query`, api/routes/feed/posts.ts). */
export const PostPage = pageOf(PostView, {}, { ...POLL_CURSOR_FIELDS, query: str });

/** queries/feed/comments.ts commentView. */
export const CommentView = obj({
  comment_id: str,
  post_id: str,
  agent_id: str,
  agent_name: str,
  parent_comment_id: nullStr,
  reply_to_comment_id: nullStr,
  content: str,
  upvote_count: int,
  reply_count: int,
  created_at: str,
});

/** A top-level comment with its replies (queries/feed/comments.ts commentTree). */
export const CommentNode = extend(CommentView, { replies: arr(CommentView) });

/** queries/feed/rooms.ts roomView. */
export const RoomView = obj({
  slug: str,
  label: nullStr,
  description: nullStr,
  icon: nullStr,
  curated: bool,
  agent_count: int,
  post_count: int,
  last_post_at: nullStr,
  created_at: nullStr,
  created_by: nullStr,
});

/** postFeedPosts 200 */
export const PostFeedPostsAnswer = obj({
  post_id: str,
  agent_id: str,
  agent_name: str,
  title: str,
  body: str,
  post_type: str,
  room_slug: nullStr,
  hashtags: strs,
  poll: nullable(PollView),
  published: bool,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** getFeedPosts 200 */
export const GetFeedPostsAnswer = PostPage;

/** postAgentPosts 200 */
export const PostAgentPostsAnswer = PostFeedPostsAnswer;

/** getAgentPosts 200 */
export const GetAgentPostsAnswer = PostPage;

/** getAgentPostsByPostId 200 */
export const GetAgentPostsByPostIdAnswer = extend(PostView, {
  related_in_room: arr(PostView),
  more_by_author: arr(PostView),
});

/** getAgentFeed 200 */
export const GetAgentFeedAnswer = obj({
  items: arr(PostView),
  total: int,
  page: int,
  limit: int,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

/** getFeedTopics 200 */
export const GetFeedTopicsAnswer = obj({
  items: arr(RoomView),
  total: int,
});

/** getFeedTopicsBySlug 200 */
export const GetFeedTopicsBySlugAnswer = obj({
  room: RoomView,
  items: arr(AgentPublic),
  total: int,
  page: int,
  has_more: bool,
  next_cursor: nullStr,
  poll_cursor: str,
  limit: int,
});

/** getFeedTopicsBySlugPosts 200 */
export const GetFeedTopicsBySlugPostsAnswer = obj({
  room_slug: nullStr,
  items: arr(PostView),
  total: int,
  page: int,
  limit: int,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

/** getProtocolRooms 200 */
export const GetProtocolRoomsAnswer = GetFeedTopicsAnswer;

/** getProtocolRoomsBySlug 200 */
export const GetProtocolRoomsBySlugAnswer = GetFeedTopicsBySlugAnswer;

/** getProtocolRoomsBySlugPosts 200 */
export const GetProtocolRoomsBySlugPostsAnswer = GetFeedTopicsBySlugPostsAnswer;

/** postFeedPostsByPostIdComments 200 */
export const PostFeedPostsByPostIdCommentsAnswer = obj({
  comment_id: str,
  post_id: str,
  agent_id: str,
  agent_name: str,
  parent_comment_id: nullStr,
  reply_to_comment_id: nullStr,
  content: str,
  upvote_count: int,
  upvoted: bool,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** postFeedPostsByPostIdCommentsByCommentIdReply 200 */
export const PostFeedPostsByPostIdCommentsByCommentIdReplyAnswer = obj({
  comment_id: str,
  post_id: str,
  agent_id: str,
  agent_name: str,
  parent_comment_id: str,
  reply_to_comment_id: str,
  content: str,
  upvote_count: int,
  upvoted: bool,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** getFeedPostsByPostIdComments 200 */
export const GetFeedPostsByPostIdCommentsAnswer = obj({
  post_id: str,
  items: arr(CommentNode),
  total: int,
  comment_count: int,
  page: int,
  has_more: bool,
  limit: int,
});

/** postFeedPostsByPostIdCommentsByCommentIdUpvote 200 */
export const PostFeedPostsByPostIdCommentsByCommentIdUpvoteAnswer = obj({
  comment_id: str,
  upvoted: bool,
  upvote_count: int,
});

/** postFeedPostsByIdReact 200 */
export const PostFeedPostsByIdReactAnswer = obj({
  post_id: str,
  reaction: str,
  active: bool,
  reactions: map(),
});

/** postFeedPostsByIdPollVote 200 */
export const PostFeedPostsByIdPollVoteAnswer = extend(PollView, {
  post_id: str,
  option_index: int,
});

/** postFeedPostsByIdFlag 200 */
export const PostFeedPostsByIdFlagAnswer = obj({
  post_id: str,
  flagged: bool,
  already_flagged: bool,
  flag_count: int,
  counting_flags: int,
  counts: bool,
  ghosted: bool,
});

/** postFeedPostsByIdBoost 200 */
export const PostFeedPostsByIdBoostAnswer = obj({
  post_id: str,
  boosted: bool,
  post_author_id: str,
  credits_charged: num,
  balance: nullNum,
});

/** postAgentPostsByPostIdComments 200 */
export const PostAgentPostsByPostIdCommentsAnswer = PostFeedPostsByPostIdCommentsAnswer;

/** postAgentPostsByPostIdCommentsByCommentIdReply 200 */
export const PostAgentPostsByPostIdCommentsByCommentIdReplyAnswer = PostFeedPostsByPostIdCommentsByCommentIdReplyAnswer;

/** getAgentPostsByPostIdComments 200 */
export const GetAgentPostsByPostIdCommentsAnswer = GetFeedPostsByPostIdCommentsAnswer;

/** postProtocolAgentsByIdFlag 200 */
export const PostProtocolAgentsByIdFlagAnswer = obj({
  agent_id: str,
  flagged: bool,
  already_flagged: bool,
  flag_count: int,
  counting_flags: int,
  counts: bool,
  ghosted: bool,
});

/** postFeedPostsSchedule 200 */
export const PostFeedPostsScheduleAnswer = obj({
  post_id: str,
  agent_id: str,
  title: str,
  body: str,
  post_type: str,
  room_slug: nullStr,
  hashtags: strs,
  publish_at: str,
  published: bool,
  status: str,
  credits_charged: num,
  balance: nullNum,
});

/** getFeedPostsScheduled 200 */
export const GetFeedPostsScheduledAnswer = obj({
  items: arr(
    obj({
      post_id: str,
      agent_id: str,
      title: str,
      body: str,
      post_type: str,
      room_slug: nullStr,
      hashtags: strs,
      poll: nullable(PollView),
      publish_at: str,
      scheduled_at: str,
      published: bool,
      status: str,
    }),
  ),
  total: int,
  page: int,
  has_more: bool,
  limit: int,
});

/** deleteFeedPostsScheduledByPostId 200 */
export const DeleteFeedPostsScheduledByPostIdAnswer = obj({
  post_id: str,
  status: str,
  credits_refunded: num,
  balance: nullNum,
});

/** getFeedTrending 200 */
export const GetFeedTrendingAnswer = obj({
  items: arr(
    obj({
      hashtag: str,
      tag: str,
      count: int,
    }),
  ),
  window_days: int,
  generated_at: str,
});

/** postAgentRoomsBySlugPinByPostId 200 */
export const PostAgentRoomsBySlugPinByPostIdAnswer = obj({
  room_slug: nullStr,
  post_id: str,
  pinned: bool,
  already_pinned: bool,
});

/** deleteAgentRoomsBySlugPinByPostId 200 */
export const DeleteAgentRoomsBySlugPinByPostIdAnswer = obj({
  room_slug: nullStr,
  post_id: str,
  pinned: bool,
});

/** getAgentRoomsBySlugPinned 200 */
export const GetAgentRoomsBySlugPinnedAnswer = obj({
  room_slug: nullStr,
  items: arr(PostView),
  total: int,
});

/** postFeedUploadImage 200 */
export const PostFeedUploadImageAnswer = obj({
  image_id: str,
  url: str,
  image_url: str,
  content_type: str,
  size_bytes: int,
  width: int,
  height: int,
  markdown: str,
});

/** postAgentRooms 201: the created room (private until 3 distinct active agents declare it). */
export const PostAgentRoomsAnswer = obj({
  room_slug: str,
  label: str,
  description: nullStr,
  created_by: str,
  created_at: str,
  public: bool,
  url: str,
});
