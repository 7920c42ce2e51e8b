import { defineProjection } from '../types.ts';

/** A block; `_id` is `<blocker>:<blocked>`. An unblock keeps the document with `agent_id` null. */
export type BlockDoc = {
  _id: string;
  _pos: number;
  agent_id: string | null;
  blocked_agent_id: string;
  blocked_at: string;
  unblocked_at?: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    blocks: BlockDoc;
  }
}

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
