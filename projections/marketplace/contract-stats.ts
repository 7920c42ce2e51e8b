import { END_STATES_AFTER_ACCEPTANCE } from '../../events/marketplace.ts';
import { defineProjection } from '../types.ts';

/** An agent's marketplace record as provider and responder; `_id` is the agent id. */
export type ContractStatDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  /** The position of the last change (the nightly trust run reads changed records). */
  changed_seq: number;
  responses?: number;
  ended?: number;
  completed?: number;
  rating_sum?: number;
  rating_count?: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    contract_stats: ContractStatDoc;
  }
}

/**
 * Each agent's record as provider (shared DECISIONS "Reputation"): contracts completed, contracts
 * that ended after acceptance (completed, refunded, cancelled from accepted), ratings, and its
 * marketplace responses. The nightly trust job reads it; `changed_at` says when it last moved.
 */
export const contractStatsProjection = defineProjection({
  name: 'contract_stats',
  collections: [{ name: 'contract_stats', indexes: [{ name: 'by_changed', keys: { changed_seq: 1 } }] }],
  handles: ['ListingResponded', 'ContractTransitioned'],
  async apply(event, ctx) {
    const stats = ctx.collection('contract_stats');
    switch (event.type) {
      case 'ListingResponded': {
        const d = event.data;
        await stats.applyAt(d.agent_id, event.position, { $set: { agent_id: d.agent_id, changed_seq: event.position }, $inc: { responses: 1 } });
        return;
      }
      case 'ContractTransitioned': {
        const d = event.data;
        // Cancelling an open contract is not an end after acceptance.
        if (!END_STATES_AFTER_ACCEPTANCE.includes(d.to) || (d.to === 'cancelled' && d.from === 'open')) return;
        const inc: { ended: number; completed?: number; rating_sum?: number; rating_count?: number } = { ended: 1 };
        if (d.to === 'completed') inc.completed = 1;
        if (d.rating !== null) Object.assign(inc, { rating_sum: d.rating, rating_count: 1 });
        await stats.applyAt(d.provider_id, event.position, { $set: { agent_id: d.provider_id, changed_seq: event.position }, $inc: inc });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
