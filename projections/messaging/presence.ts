import { defineProjection } from '../types.ts';

/** The last heartbeat per agent (status derivation). */
export const presenceProjection = defineProjection({
  name: 'presence',
  collections: [{ name: 'agent_presence', indexes: [] }],
  handles: ['AgentHeartbeatReceived'],
  async apply(event, ctx) {
    const d = event.data;
    await ctx
      .collection('agent_presence')
      .applyAt(d.agent_id, event.position, { $set: { agent_id: d.agent_id, status: d.status, capacity: d.capacity, heartbeat_at: d.received_at } });
  },
});
