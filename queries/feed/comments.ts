import type { ReadModel, ReadStore } from '../../projections/store/port.ts';

export function commentView(d: ReadModel<'comments'>) {
  return {
    comment_id: d._id,
    post_id: d.post_id,
    agent_id: d.agent_id,
    agent_name: d.agent_name,
    parent_comment_id: d.parent_comment_id ?? null,
    reply_to_comment_id: d.reply_to_comment_id ?? null,
    content: d.content,
    upvote_count: d.upvote_count ?? 0,
    reply_count: d.reply_count ?? 0,
    created_at: d.created_at,
  };
}

export function getComment(store: ReadStore, commentId: string) {
  return store.collection('comments').findOne({ _id: commentId });
}

/**
 * The nested comment tree of a post: a page of top-level comments, oldest first, each with all its
 * replies (threads are two levels deep). Index-served: one range per level.
 */
export async function commentTree(store: ReadStore, postId: string, opts: { skip: number; limit: number }) {
  const comments = store.collection('comments');
  const filter = { post_id: postId, top_level: true, hidden: false };
  const [top, total] = await Promise.all([comments.find(filter, { sort: { seq: 1 }, skip: opts.skip, limit: opts.limit }), comments.count(filter)]);
  const replies = top.length ? await comments.find({ parent_comment_id: { $in: top.map((c) => c._id) }, hidden: false }, { sort: { seq: 1 } }) : [];
  const byParent = new Map<string, Array<ReadModel<'comments'>>>();
  for (const r of replies) {
    const parent = r.parent_comment_id;
    if (parent === null) continue;
    const list = byParent.get(parent) ?? [];
    list.push(r);
    byParent.set(parent, list);
  }
  return { items: top.map((c) => ({ ...commentView(c), replies: (byParent.get(c._id) ?? []).map(commentView) })), total };
}
