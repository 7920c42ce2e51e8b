import { defineProjection } from '../types.ts';
import { markerHides, type PostsGhostedAgentDoc } from './posts.ts';

/** A comment or a reply; `_id` is the comment id. */
export type CommentDoc = {
  _id: string;
  _pos: number;
  comment_id: string;
  post_id: string;
  agent_id: string;
  agent_name: string;
  /** The top-level comment a reply is under; null on a top-level comment. */
  parent_comment_id: string | null;
  reply_to_comment_id: string | null;
  top_level: boolean;
  hidden: boolean;
  content: string;
  created_at: string;
  seq: number;
  upvote_count: number;
  reply_count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    comments: CommentDoc;
    comments_ghosted_agents: PostsGhostedAgentDoc;
  }
}

/** Comments and replies (two levels), with upvote and reply counts; a ghosted agent's comments are hidden. */
export const commentsProjection = defineProjection({
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
  handles: ['CommentAdded', 'CommentUpvoteToggled', 'AgentGhosted', 'AgentDeactivated', 'AgentBanned', 'ModerationDecided'],
  async apply(event, ctx) {
    const comments = ctx.collection('comments');
    switch (event.type) {
      case 'CommentAdded': {
        const d = event.data;
        const hidden = markerHides(await ctx.collection('comments_ghosted_agents').findOne({ _id: d.agent_id }));
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
        return;
      }
      case 'CommentUpvoteToggled': {
        const d = event.data;
        await comments.applyAt(d.comment_id, event.position, { $inc: { upvote_count: d.upvoted ? 1 : -1 } });
        return;
      }
      case 'AgentGhosted':
      case 'AgentDeactivated':
      case 'AgentBanned': {
        // Ghosted by flags, deactivated or banned: the agent's comments leave public reads, now and later.
        const d = event.data;
        const since = event.type === 'AgentGhosted' ? event.data.ghosted_at : event.type === 'AgentBanned' ? event.data.banned_at : event.data.deactivated_at;
        const reason = event.type === 'AgentGhosted' ? 'ghosted' : event.type === 'AgentBanned' ? 'banned' : 'deactivated';
        await ctx.collection('comments_ghosted_agents').applyAt(d.agent_id, event.position, { $set: { ghosted_at: since, [`reasons.${reason}`]: true } });
        await comments.updateMany({ agent_id: d.agent_id }, { $set: { hidden: true } });
        return;
      }
      case 'ModerationDecided': {
        // A moderator's decision on an agent: upheld, its comments stay (or go) out; restored, they come back unless it is banned or deactivated.
        const d = event.data;
        if (d.item_kind !== 'agent') return;
        const marker = ctx.collection('comments_ghosted_agents');
        if (d.hidden) {
          await marker.applyAt(d.item_id, event.position, { $set: { ghosted_at: d.decided_at, 'reasons.ghosted': true } });
          await comments.updateMany({ agent_id: d.item_id }, { $set: { hidden: true } });
          return;
        }
        if (!(await marker.applyAt(d.item_id, event.position, { $unset: { 'reasons.ghosted': '' } }))) return;
        if (!markerHides(await marker.findOne({ _id: d.item_id }))) await comments.updateMany({ agent_id: d.item_id }, { $set: { hidden: false } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
