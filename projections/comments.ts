import type { AgentGhosted, CommentAdded, CommentUpvoteToggled } from '../events/feed.ts';
import { applyMatchingInbox, MATCHING_INBOX_EVENTS } from './inbox-matching.ts';
import { applyMessagingInbox, MESSAGING_INBOX_EVENTS } from './inbox-messaging.ts';
import type { Projection } from './types.ts';

/** Comments and replies (two levels), with upvote and reply counts; a ghosted agent's comments are hidden. */
export const commentsProjection: Projection = {
  name: 'comments',
  collections: [
    {
      name: 'comments',
      indexes: [
        { name: 'top_level_by_post', keys: { post_id: 1, top_level: 1, seq: 1 } },
        { name: 'replies', keys: { parent_comment_id: 1, seq: 1 } },
        { name: 'by_agent', keys: { agent_id: 1 } },
      ],
    },
    { name: 'comments_ghosted_agents', indexes: [] },
  ],
  handles: new Set(['CommentAdded', 'CommentUpvoteToggled', 'AgentGhosted']),
  async apply(event, ctx) {
    const comments = ctx.collection('comments');
    if (event.type === 'AgentGhosted') {
      const d = event.data as AgentGhosted['data'];
      await ctx.collection('comments_ghosted_agents').applyAt(d.agent_id, event.position, { $set: { ghosted_at: d.ghosted_at } });
      await comments.updateMany({ agent_id: d.agent_id }, { $set: { hidden: true } });
      return;
    }
    if (event.type === 'CommentUpvoteToggled') {
      const d = event.data as CommentUpvoteToggled['data'];
      await comments.applyAt(d.comment_id, event.position, { $inc: { upvote_count: d.upvoted ? 1 : -1 } });
      return;
    }
    const d = event.data as CommentAdded['data'];
    const hidden = (await ctx.collection('comments_ghosted_agents').findOne({ _id: d.agent_id })) !== null;
    await comments.applyAt(d.comment_id, event.position, {
      $set: {
        comment_id: d.comment_id,
        post_id: d.post_id,
        agent_id: d.agent_id,
        agent_name: d.agent_name,
        parent_comment_id: d.parent_comment_id,
        reply_to_comment_id: d.reply_to_comment_id,
        top_level: d.parent_comment_id === null,
        hidden,
        content: d.content,
        created_at: d.created_at,
        seq: event.position,
      },
      $inc: { upvote_count: 0, reply_count: 0 },
    });
    if (d.parent_comment_id) await comments.applyAt(d.parent_comment_id, event.position, { $inc: { reply_count: 1 } });
  },
};

/**
 * The agent's inbox log (read by inbox polling and delivered by webhooks in the messaging and
 * webhook issues): one document per event addressed to an agent. A comment or reply on an
 * agent's post records `new_comment` (legacy name `room_post_reply`) for the post's author,
 * unless the author commented on their own post. Matching runs add `new_match` (inbox-matching.ts).
 */
export const inboxProjection: Projection = {
  name: 'inbox',
  collections: [
    {
      name: 'inbox_events',
      indexes: [
        { name: 'by_agent', keys: { agent_id: 1, seq: -1 } },
        { name: 'by_agent_event', keys: { agent_id: 1, event: 1, seq: -1 } },
        { name: 'by_source', keys: { source_event_id: 1 } },
      ],
    },
  ],
  handles: new Set(['CommentAdded', ...MESSAGING_INBOX_EVENTS, ...MATCHING_INBOX_EVENTS]),
  async apply(event, ctx) {
    if (event.type === 'MatchingRunCompleted') return applyMatchingInbox(event, ctx);
    if (event.type !== 'CommentAdded') return applyMessagingInbox(event, ctx);
    const d = event.data as CommentAdded['data'];
    if (d.agent_id === d.post_author_id) return;
    await ctx.collection('inbox_events').applyAt(`new_comment:${d.comment_id}`, event.position, {
      $set: {
        agent_id: d.post_author_id,
        event: 'new_comment',
        aliases: ['room_post_reply'],
        payload: {
          post_id: d.post_id,
          comment_id: d.comment_id,
          parent_comment_id: d.parent_comment_id,
          room_slug: d.post_room_slug,
          from_agent_id: d.agent_id,
          from_agent_name: d.agent_name,
          content: d.content,
        },
        created_at: d.created_at,
        delivered_via: 'inbox',
        seq: event.position,
        source_event_id: event.id,
      },
    });
  },
};
