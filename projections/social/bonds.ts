import type { Collection } from '../store/port.ts';
import { defineProjection } from '../types.ts';

export type BondState = 'active' | 'outgoing' | 'incoming' | 'declined' | 'removed';

/** A bond seen from `agent_id`'s side; `_id` is `<agent>:<other>`. */
export type BondDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  other_agent_id: string;
  state: BondState;
  seq: number;
  requested_by?: string;
  requested_at?: string;
  bonded_at?: string | null;
  declined_at?: string;
  removed_at?: string;
  cooldown_until?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    bonds: BondDoc;
  }
}

/**
 * Bonds seen from each side: two documents per pair (`<agent>:<other>`), so an agent's list and
 * its counts (active bonds, pending outgoing requests: the caps) are index-served by
 * (agent_id, state). `state` is `active`, `outgoing`, `incoming`, `declined` or `removed`.
 */
async function side(bonds: Collection<BondDoc>, agent: string, other: string, position: number, set: Partial<BondDoc>): Promise<void> {
  await bonds.applyAt(`${agent}:${other}`, position, { $set: { agent_id: agent, other_agent_id: other, seq: position, ...set } });
}

export const bondsProjection = defineProjection({
  name: 'bonds',
  collections: [{ name: 'bonds', indexes: [{ name: 'by_agent_state', keys: { agent_id: 1, state: 1, seq: -1 } }] }],
  handles: ['BondRequested', 'BondAccepted', 'BondDeclined', 'BondRemoved'],
  async apply(event, ctx) {
    const bonds = ctx.collection('bonds');
    const p = event.position;
    switch (event.type) {
      case 'BondRequested': {
        const d = event.data;
        const set = { requested_by: d.agent_id, requested_at: d.requested_at, bonded_at: null };
        await side(bonds, d.agent_id, d.other_agent_id, p, Object.assign({}, set, { state: 'outgoing' as const }));
        await side(bonds, d.other_agent_id, d.agent_id, p, Object.assign({}, set, { state: 'incoming' as const }));
        return;
      }
      case 'BondAccepted': {
        const d = event.data;
        await side(bonds, d.agent_id, d.other_agent_id, p, { state: 'active', bonded_at: d.accepted_at });
        await side(bonds, d.other_agent_id, d.agent_id, p, { state: 'active', bonded_at: d.accepted_at });
        return;
      }
      case 'BondDeclined': {
        const d = event.data;
        await side(bonds, d.agent_id, d.other_agent_id, p, { state: 'declined', declined_at: d.declined_at });
        await side(bonds, d.other_agent_id, d.agent_id, p, { state: 'declined', declined_at: d.declined_at });
        return;
      }
      case 'BondRemoved': {
        const d = event.data;
        const set = { state: 'removed' as const, removed_at: d.removed_at, cooldown_until: d.cooldown_until };
        await side(bonds, d.agent_id, d.other_agent_id, p, set);
        await side(bonds, d.other_agent_id, d.agent_id, p, set);
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
