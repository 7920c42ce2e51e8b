import { defineProjection } from '../types.ts';

/** An API key; `_id` is its keyed hash. */
export type ApiKeyDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  created_at?: string;
  revoked?: boolean;
  revoked_at?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    api_keys: ApiKeyDoc;
  }
}

/** API keys by keyed hash: the authentication lookup. */
export const apiKeysProjection = defineProjection({
  name: 'api_keys',
  collections: [{ name: 'api_keys', indexes: [{ name: 'by_agent', keys: { agent_id: 1 } }] }],
  handles: ['AgentRegistered', 'ApiKeyReplaced', 'AgentDeactivated', 'AgentBanned'],
  async apply(event, ctx) {
    const keys = ctx.collection('api_keys');
    switch (event.type) {
      case 'AgentRegistered': {
        const d = event.data;
        await keys.applyAt(d.api_key_hash, event.position, { $set: { agent_id: d.agent_id, created_at: d.registered_at } });
        return;
      }
      case 'ApiKeyReplaced': {
        // Rotation and recovery: the old key fails as soon as this is applied (before the write is answered).
        const r = event.data;
        await keys.applyAt(r.old_key_hash, event.position, { $set: { agent_id: r.agent_id, revoked: true, revoked_at: r.replaced_at } });
        await keys.applyAt(r.new_key_hash, event.position, { $set: { agent_id: r.agent_id, created_at: r.replaced_at } });
        return;
      }
      case 'AgentDeactivated': {
        // The agent left: its key fails as soon as this is applied (before the request is answered).
        const d = event.data;
        await keys.applyAt(d.api_key_hash, event.position, { $set: { agent_id: d.agent_id, revoked: true, revoked_at: d.deactivated_at } });
        return;
      }
      case 'AgentBanned': {
        const d = event.data;
        await keys.applyAt(d.api_key_hash, event.position, { $set: { agent_id: d.agent_id, revoked: true, revoked_at: d.banned_at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
