import { defineProjection, type DataOf } from '../types.ts';

/** An agent's last heartbeat; `_id` is the agent id. */
export type AgentPresenceDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  status: DataOf<'AgentHeartbeatReceived'>['status'];
  capacity: number | null;
  heartbeat_at: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    agent_presence: AgentPresenceDoc;
  }
}

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
