import { defineProjection, type DataOf } from '../types.ts';

/** A response to a listing; `_id` is the response id. Accepted: the contract it opened. */
export type ListingResponseDoc = Omit<DataOf<'ListingResponded'>, 'charge'> & {
  _id: string;
  _pos: number;
  status: 'pending' | 'accepted';
  contract_id: string | null;
  seq: number;
  /** The response's log position (contracts record it). */
  position: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    listing_responses: ListingResponseDoc;
  }
}

/** Responses to listings, one document per response: the owner's list, and the contract an accepted one opened. */
export const listingResponsesProjection = defineProjection({
  name: 'listing_responses',
  collections: [
    {
      name: 'listing_responses',
      indexes: [
        { name: 'by_listing', keys: { intent_id: 1, seq: -1 } },
        { name: 'by_listing_agent', keys: { intent_id: 1, agent_id: 1 } },
      ],
    },
  ],
  handles: ['ListingResponded', 'ContractOpened'],
  async apply(event, ctx) {
    const responses = ctx.collection('listing_responses');
    switch (event.type) {
      case 'ListingResponded': {
        const { charge: _charge, ...d } = event.data;
        await responses.applyAt(d.response_id, event.position, {
          $set: Object.assign({}, d, { status: 'pending' as const, contract_id: null, seq: event.position, position: event.position }),
        });
        return;
      }
      case 'ContractOpened':
        await responses.applyAt(event.data.response_id, event.position, { $set: { status: 'accepted', contract_id: event.data.contract_id } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
