import type { AgentBlocked, AgentUnblocked, DirectMessageSent } from '../events/messaging.ts';
import type { Projection } from './types.ts';

/** Blocks per blocker (GET /api/agent/blocks). */
export const blocksProjection: Projection = {
  name: 'blocks',
  collections: [{ name: 'blocks', indexes: [{ name: 'by_blocker', keys: { agent_id: 1, seq: -1 } }] }],
  handles: new Set(['AgentBlocked', 'AgentUnblocked']),
  async apply(event, ctx) {
    const d = event.data as AgentBlocked['data'] | AgentUnblocked['data'];
    const id = `${d.agent_id}:${d.blocked_agent_id}`;
    if (event.type === 'AgentUnblocked') {
      await ctx.collection('blocks').applyAt(id, event.position, { $set: { agent_id: null, unblocked_at: (d as AgentUnblocked['data']).unblocked_at } });
      return;
    }
    await ctx.collection('blocks').applyAt(id, event.position, {
      $set: { agent_id: d.agent_id, blocked_agent_id: d.blocked_agent_id, blocked_at: (d as AgentBlocked['data']).blocked_at, seq: event.position },
    });
  },
};

/**
 * DMs addressed to a member (human) by user id or by e-mail address, whether or not the address
 * belongs to a member yet (`inbound`), and the owners' replies sent as their linked agents
 * (`outbound`). The owner inbox reads them by the signed-in user's id and normalised address, so
 * a DM sent to an address before its owner joins is there when they do.
 */
export const memberDmsProjection: Projection = {
  name: 'member_dms',
  collections: [
    {
      name: 'member_dms',
      indexes: [
        { name: 'by_email', keys: { to_email: 1, seq: -1 } },
        { name: 'by_user', keys: { to_user_id: 1, seq: -1 } },
        { name: 'by_owner', keys: { owner_user_id: 1, seq: -1 } },
      ],
    },
  ],
  handles: new Set(['DirectMessageSent']),
  async apply(event, ctx) {
    const d = event.data as DirectMessageSent['data'];
    if (d.to_agent_id && !d.owner_user_id) return;
    await ctx.collection('member_dms').applyAt(d.dm_id, event.position, {
      $set: {
        dm_id: d.dm_id,
        direction: d.owner_user_id ? 'outbound' : 'inbound',
        owner_user_id: d.owner_user_id ?? null,
        to_agent_id: d.to_agent_id,
        from_agent_id: d.from_agent_id,
        from_agent_name: d.from_agent_name,
        to_user_id: d.to_user_id,
        to_email: d.to_email,
        message: d.message,
        created_at: d.sent_at,
        seq: event.position,
      },
    });
  },
};
