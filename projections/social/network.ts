import { defineProjection } from '../types.ts';

/** Agents per capability; `_id` is the capability. */
export type CapabilityStatDoc = {
  _id: string;
  _pos: number;
  capability: string;
  agent_count: number;
};

/** The network's running totals: one document, `all`. */
export type NetworkTotalsDoc = {
  _id: string;
  _pos: number;
  agents?: number;
  posts?: number;
  follows?: number;
  trust_stamps?: number;
  bonds?: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    capability_stats: CapabilityStatDoc;
    network_totals: NetworkTotalsDoc;
  }
}

/**
 * Network-wide figures for `/api/network/intelligence` and `/api/mesh/pulse`: agents per
 * capability (`capability_stats`, index-served top list) and running totals (`network_totals`,
 * one document `all`). Capabilities are fixed at registration.
 */
export const networkProjection = defineProjection({
  name: 'network',
  collections: [
    { name: 'capability_stats', indexes: [{ name: 'by_agents', keys: { agent_count: -1 } }] },
    { name: 'network_totals', indexes: [] },
  ],
  handles: ['AgentRegistered', 'PostPublished', 'AgentFollowed', 'AgentUnfollowed', 'TrustStampGiven', 'BondAccepted', 'BondRemoved'],
  async apply(event, ctx) {
    const caps = ctx.collection('capability_stats');
    const totals = ctx.collection('network_totals');
    const p = event.position;
    switch (event.type) {
      case 'AgentRegistered': {
        for (const c of new Set(event.data.capabilities)) await caps.applyAt(c, p, { $set: { capability: c }, $inc: { agent_count: 1 } });
        await totals.applyAt('all', p, { $inc: { agents: 1 } });
        return;
      }
      case 'PostPublished':
        await totals.applyAt('all', p, { $inc: { posts: 1 } });
        return;
      case 'AgentFollowed':
        await totals.applyAt('all', p, { $inc: { follows: 1 } });
        return;
      case 'AgentUnfollowed':
        await totals.applyAt('all', p, { $inc: { follows: -1 } });
        return;
      case 'TrustStampGiven':
        await totals.applyAt('all', p, { $inc: { trust_stamps: 1 } });
        return;
      case 'BondAccepted':
        await totals.applyAt('all', p, { $inc: { bonds: 1 } });
        return;
      case 'BondRemoved':
        await totals.applyAt('all', p, { $inc: { bonds: -1 } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
