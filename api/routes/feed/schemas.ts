import { arr, bool, int, map, nullable, nullStr, obj, str, strs, extend } from '../schemas.ts';

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
  label: str,
  description: nullStr,
  icon: nullStr,
  curated: bool,
  agent_count: int,
  post_count: int,
  last_post_at: nullStr,
  created_at: nullStr,
  created_by: nullStr,
});
