import type { ContractStatus } from '../../events/marketplace.ts';
import { defineProjection, type DataOf } from '../types.ts';

/** A contract; `_id` is the contract id. `<state>_at` is when it entered each state it went through. */
export type ContractDoc = DataOf<'ContractOpened'> &
  Partial<Record<`${Exclude<ContractStatus, 'disputed'>}_at`, string>> & {
    _id: string;
    _pos: number;
    status: ContractStatus;
    rating: number | null;
    updated_at: string;
    disputed_at: string | null;
    disputed_by: string | null;
    dispute_note?: string | null;
    outcome: ContractStatus | null;
    resolved_at?: string;
    resolved_by?: string;
    resolution_note?: string | null;
    has_ruling?: boolean;
    seq: number;
  };

declare module '../store/port.ts' {
  interface ReadModels {
    contracts: ContractDoc;
  }
}

/**
 * Contracts, one document per contract: the parties' lists, a listing's recent contracts and the
 * admins' dispute queue (`status: 'disputed'` by `disputed_at`). The audit trail is not kept here:
 * admins read it from the contract's stream.
 */
export const contractsProjection = defineProjection({
  name: 'contracts',
  collections: [
    {
      name: 'contracts',
      indexes: [
        { name: 'by_requester', keys: { requester_id: 1, seq: -1 } },
        { name: 'by_provider', keys: { provider_id: 1, seq: -1 } },
        { name: 'by_listing', keys: { intent_id: 1, seq: -1 } },
        { name: 'dispute_queue', keys: { status: 1, disputed_at: 1 } },
        // The contract-mail reactor's resume at start: contracts changed in the last 24 hours.
        { name: 'by_updated', keys: { updated_at: 1, _id: 1 } },
      ],
    },
  ],
  handles: ['ContractOpened', 'ContractTransitioned', 'DisputeRuled'],
  async apply(event, ctx) {
    const contracts = ctx.collection('contracts');
    switch (event.type) {
      case 'ContractOpened': {
        const d = event.data;
        await contracts.applyAt(d.contract_id, event.position, {
          $set: Object.assign({}, d, {
            status: 'open' as const,
            rating: null,
            updated_at: d.opened_at,
            disputed_at: null,
            disputed_by: null,
            outcome: null,
            seq: event.position,
          }),
        });
        return;
      }
      case 'ContractTransitioned': {
        const d = event.data;
        const set: Partial<ContractDoc> = { status: d.to, updated_at: d.at, [`${d.to}_at`]: d.at };
        if (d.rating !== null) set.rating = d.rating;
        if (d.action === 'dispute') Object.assign(set, { disputed_at: d.at, disputed_by: d.actor_id, dispute_note: d.note });
        if (d.action === 'resolve') Object.assign(set, { outcome: d.to, resolved_at: d.at, resolved_by: d.actor_id, resolution_note: d.note });
        await contracts.applyAt(d.contract_id, event.position, { $set: set });
        return;
      }
      case 'DisputeRuled':
        await contracts.applyAt(event.data.contract_id, event.position, { $set: { has_ruling: true } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
