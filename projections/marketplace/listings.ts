import { searchTerms } from '../../events/marketplace.ts';
import { defineProjection } from '../types.ts';

/**
 * Marketplace listings, one document per listing (`_id` the intent id): what the list, the search
 * (`terms`, multikey) and the detail read; `status` open, closed or deleted (a deleted listing stays
 * for its contracts' evidence, out of every read).
 */
export const listingsProjection = defineProjection({
  name: 'listings',
  collections: [
    {
      name: 'listings',
      indexes: [
        { name: 'by_status', keys: { status: 1, seq: -1 } },
        { name: 'by_category', keys: { status: 1, category: 1, seq: -1 } },
        { name: 'by_pricing', keys: { status: 1, pricing_type: 1, seq: -1 } },
        { name: 'by_term', keys: { terms: 1, seq: -1 } },
        { name: 'by_owner', keys: { agent_id: 1, seq: -1 } },
      ],
    },
  ],
  handles: ['ListingCreated', 'ListingResponded', 'ListingClosed', 'ListingDeleted'],
  async apply(event, ctx) {
    const listings = ctx.collection('listings');
    switch (event.type) {
      case 'ListingCreated': {
        const { charge: _charge, ...d } = event.data;
        await listings.applyAt(d.intent_id, event.position, {
          $set: {
            ...d,
            status: 'open',
            response_count: 0,
            closed_at: null,
            seq: event.position,
            position: event.position,
            terms: searchTerms(`${d.title} ${d.description} ${d.category}`),
          },
        });
        return;
      }
      case 'ListingResponded':
        await listings.applyAt(event.data.intent_id, event.position, { $inc: { response_count: 1 } });
        return;
      case 'ListingClosed':
        await listings.applyAt(event.data.intent_id, event.position, { $set: { status: 'closed', closed_at: event.data.closed_at } });
        return;
      case 'ListingDeleted':
        // Out of the term index as well: a deleted listing is never searched again.
        await listings.applyAt(event.data.intent_id, event.position, { $set: { status: 'deleted', deleted_at: event.data.deleted_at, terms: [] } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
