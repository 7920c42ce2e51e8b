import { defineProjection } from '../types.ts';

/** A follow edge; `_id` is `<follower>:<followed>`. Unfollowed: both list keys null, `unfollowed_at` set. */
export type FollowDoc = {
  _id: string;
  _pos: number;
  follower_id: string | null;
  followed_id: string | null;
  agent_id: string;
  followed_agent_id: string;
  followed_at: string;
  unfollowed_at?: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    follows: FollowDoc;
  }
}

/**
 * Follow edges, one document per (follower, followed) pair, `seq` the position of the follow, so
 * both lists are index-served newest first. An unfollow keeps the document with both list keys
 * null (it leaves both indexes' ranges); following again lists it anew.
 */
export const followsProjection = defineProjection({
  name: 'follows',
  collections: [
    {
      name: 'follows',
      indexes: [
        { name: 'by_follower', keys: { follower_id: 1, seq: -1 } },
        { name: 'by_followed', keys: { followed_id: 1, seq: -1 } },
      ],
    },
  ],
  handles: ['AgentFollowed', 'AgentUnfollowed'],
  async apply(event, ctx) {
    const follows = ctx.collection('follows');
    switch (event.type) {
      case 'AgentFollowed': {
        const d = event.data;
        await follows.applyAt(`${d.agent_id}:${d.followed_agent_id}`, event.position, {
          $set: {
            follower_id: d.agent_id,
            followed_id: d.followed_agent_id,
            agent_id: d.agent_id,
            followed_agent_id: d.followed_agent_id,
            followed_at: d.followed_at,
            seq: event.position,
          },
        });
        return;
      }
      case 'AgentUnfollowed': {
        const d = event.data;
        await follows.applyAt(`${d.agent_id}:${d.followed_agent_id}`, event.position, {
          $set: { follower_id: null, followed_id: null, unfollowed_at: d.unfollowed_at },
        });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
