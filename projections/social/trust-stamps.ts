import { defineProjection } from '../types.ts';

/** A trust stamp; `_id` is `<endorser>:<target>:<capability>`. */
export type TrustStampDoc = {
  _id: string;
  _pos: number;
  target_agent_id: string;
  capability: string;
  agent_id: string;
  agent_name: string;
  stamped_at: string;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    trust_stamps: TrustStampDoc;
  }
}

/** Trust stamps, one document per (endorser, target, capability), read per target (index-served), grouped by capability. */
export const trustStampsProjection = defineProjection({
  name: 'trust_stamps',
  collections: [{ name: 'trust_stamps', indexes: [{ name: 'by_target', keys: { target_agent_id: 1, capability: 1, seq: 1 } }] }],
  handles: ['TrustStampGiven'],
  async apply(event, ctx) {
    const stamps = ctx.collection('trust_stamps');
    switch (event.type) {
      case 'TrustStampGiven': {
        const d = event.data;
        await stamps.applyAt(`${d.agent_id}:${d.target_agent_id}:${d.capability}`, event.position, {
          $set: {
            target_agent_id: d.target_agent_id,
            capability: d.capability,
            agent_id: d.agent_id,
            agent_name: d.agent_name,
            stamped_at: d.stamped_at,
            seq: event.position,
          },
        });
        return;
      }
      default: {
        const _exhaustive: never = event.type;
        return _exhaustive;
      }
    }
  },
});
