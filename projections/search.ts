import type { AgentGhosted, PostGhosted, PostPublished, RoomMerged } from '../events/feed.ts';
import { searchTerms } from '../events/feed.ts';
import type { Projection } from './types.ts';

/**
 * Keyword search (legacy `GET /api/agent/posts?q=`): one document per post with its terms (title
 * first, then hashtags, then the body, at most 32) under a multikey index, so a query is served by
 * the index on one term and filtered on the others.
 */
export const postSearchProjection: Projection = {
  name: 'post_search',
  collections: [
    { name: 'post_terms', indexes: [{ name: 'by_term', keys: { terms: 1, seq: -1 } }, { name: 'by_agent', keys: { agent_id: 1 } }, { name: 'by_room', keys: { room_slug: 1 } }] },
    { name: 'post_terms_ghosted_agents', indexes: [] },
  ],
  handles: new Set(['PostPublished', 'PostGhosted', 'AgentGhosted', 'RoomMerged']),
  async apply(event, ctx) {
    const terms = ctx.collection('post_terms');
    if (event.type === 'PostGhosted') {
      await terms.applyAt((event.data as PostGhosted['data']).post_id, event.position, { $set: { hidden: true } });
      return;
    }
    if (event.type === 'RoomMerged') {
      const d = event.data as RoomMerged['data'];
      await terms.updateMany({ room_slug: d.room_slug }, { $set: { room_slug: d.into } });
      return;
    }
    if (event.type === 'AgentGhosted') {
      await terms.updateMany({ agent_id: (event.data as AgentGhosted['data']).agent_id }, { $set: { hidden: true } });
      await ctx.collection('post_terms_ghosted_agents').applyAt((event.data as AgentGhosted['data']).agent_id, event.position, { $set: { ghosted: true } });
      return;
    }
    const d = event.data as PostPublished['data'];
    const authorGhosted = (await ctx.collection('post_terms_ghosted_agents').findOne({ _id: d.agent_id })) !== null;
    await terms.applyAt(d.post_id, event.position, {
      $set: { terms: searchTerms(`${d.title} ${d.hashtags.join(' ')} ${d.body}`), agent_id: d.agent_id, room_slug: d.room_slug, hidden: authorGhosted, seq: event.position },
    });
  },
};
