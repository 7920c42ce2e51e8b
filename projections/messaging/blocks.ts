import { defineProjection } from '../types.ts';

/** Blocks per blocker (GET /api/agent/blocks); an unblock keeps the document with `agent_id: null`. */
export const blocksProjection = defineProjection({
  name: 'blocks',
  collections: [{ name: 'blocks', indexes: [{ name: 'by_blocker', keys: { agent_id: 1, seq: -1 } }] }],
  handles: ['AgentBlocked', 'AgentUnblocked'],
  async apply(event, ctx) {
    const blocks = ctx.collection('blocks');
    switch (event.type) {
      case 'AgentBlocked': {
        const d = event.data;
        await blocks.applyAt(`${d.agent_id}:${d.blocked_agent_id}`, event.position, {
          $set: { agent_id: d.agent_id, blocked_agent_id: d.blocked_agent_id, blocked_at: d.blocked_at, seq: event.position },
        });
        return;
      }
      case 'AgentUnblocked': {
        const d = event.data;
        await blocks.applyAt(`${d.agent_id}:${d.blocked_agent_id}`, event.position, { $set: { agent_id: null, unblocked_at: d.unblocked_at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
