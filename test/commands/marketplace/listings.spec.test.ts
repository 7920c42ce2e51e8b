import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { CloseListing, CreateListing, ListingFacts, ListingState, ListingStreamEvent, RespondToListing } from '../../../commands/marketplace/listings.ts';
import {
  decideCloseListing,
  decideCreateListing,
  decideDeleteListing,
  decideRespondToListing,
  listingAggregate,
} from '../../../commands/marketplace/listings.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { ALICE, BOB, LISTING, RESPONSE, NOW } = f;
const now = NOW.toISOString();
const alice = [f.agentRegistered(), f.monthlyCreditsGranted()];
const bob = [f.agentRegistered({ agent_id: BOB, name: 'Bob' }), f.monthlyCreditsGranted({ agent_id: BOB })];

describe('commands: marketplace listings', () => {
  describe('CreateListing (agent-<id>, 0.5 credits)', () => {
    const spec = DeciderSpecification.for<CreateListing, AgentState, AgentStreamEvent>({ decide: decideCreateListing, ...agentAggregate });
    const input = {
      title: 'Build a lead-gen pipeline',
      description: 'Scrape and qualify 500 leads',
      category: 'engineering' as const,
      price: 400,
      pricing_type: 'fixed' as const,
      budget_min: null,
      budget_max: null,
      delivery_window: '2 weeks',
    };
    const create = (over: Partial<CreateListing['data']> = {}): CreateListing => ({
      type: 'CreateListing',
      data: { ...input, ...over },
      metadata: { now: NOW, intent_id: LISTING },
    });

    it('creates the listing and charges 0.5 credits on it', () =>
      spec
        .given(alice)
        .when(create())
        .then([f.listingCreated({ created_at: now, charge: f.charge(500, 9_500, 'marketplace_post') })]));
    it('refuses when the balance does not cover 0.5 (402, nothing charged)', () =>
      spec
        .given([f.agentRegistered(), f.monthlyCreditsGranted({ amount_mc: 499, balance_after_mc: 499 })])
        .when(create())
        .thenThrows('insufficient_credits', 402));
    it('refuses a budget_min above budget_max (422)', () =>
      spec
        .given(alice)
        .when(create({ budget_min: 10, budget_max: 5 }))
        .thenThrows('validation_failed', 422));
  });

  describe('RespondToListing (responder agent-<id>, 0.25 credits)', () => {
    const spec = DeciderSpecification.for<RespondToListing, AgentState, AgentStreamEvent>({ decide: decideRespondToListing, ...agentAggregate });
    const open: ListingFacts = { intent_id: LISTING, owner_id: ALICE, status: 'open' };
    const respond = (over: Partial<RespondToListing['data']> = {}): RespondToListing => ({
      type: 'RespondToListing',
      data: { listing: open, message: 'I can do it', proposed_price: null, already_responded: false, ...over },
      metadata: { now: NOW, response_id: RESPONSE },
    });

    it('records the response and charges 0.25', () =>
      spec
        .given(bob)
        .when(respond())
        .then([f.listingResponded({ responded_at: now, charge: f.charge(250, 9_750, 'marketplace_respond') })]));
    it('refuses an unknown or deleted listing (404)', () => {
      spec
        .given(bob)
        .when(respond({ listing: null }))
        .thenThrows('listing_not_found', 404);
      spec
        .given(bob)
        .when(respond({ listing: { ...open, status: 'deleted' } }))
        .thenThrows('listing_not_found', 404);
    });
    it("refuses the owner's response to its own listing (400)", () => spec.given(alice).when(respond()).thenThrows('cannot_respond_own_listing', 400));
    it('refuses a closed listing (409)', () =>
      spec
        .given(bob)
        .when(respond({ listing: { ...open, status: 'closed' } }))
        .thenThrows('listing_closed', 409));
    it('refuses a second response by the same agent (409)', () =>
      spec
        .given(bob)
        .when(respond({ already_responded: true }))
        .thenThrows('already_responded', 409));
    it('refuses when the balance does not cover 0.25 (402)', () =>
      spec
        .given([f.agentRegistered({ agent_id: BOB }), f.monthlyCreditsGranted({ agent_id: BOB, amount_mc: 100, balance_after_mc: 100 })])
        .when(respond())
        .thenThrows('insufficient_credits', 402));
  });

  describe('CloseListing and DeleteListing (listing-<id>)', () => {
    const close = DeciderSpecification.for<CloseListing, ListingState, ListingStreamEvent>({ decide: decideCloseListing, ...listingAggregate });
    const del = DeciderSpecification.for<CloseListing, ListingState, ListingStreamEvent>({ decide: decideDeleteListing, ...listingAggregate });
    const facts: ListingFacts = { intent_id: LISTING, owner_id: ALICE, status: 'open' };
    const cmd = (agent_id = ALICE, listing: ListingFacts | null = facts): CloseListing => ({
      type: 'CloseListing',
      data: { agent_id, listing },
      metadata: { now: NOW },
    });

    it('closes an open listing, and closing it again changes nothing', () => {
      close
        .given([])
        .when(cmd())
        .then([f.listingClosed({ closed_at: now })]);
      close.given([f.listingClosed()]).when(cmd()).thenNothingHappened();
    });
    it('deletes a listing (closed or not)', () =>
      del
        .given([f.listingClosed()])
        .when(cmd())
        .then([f.listingDeleted({ deleted_at: now })]));
    it('refuses anyone but the owner (403)', () => {
      close.given([]).when(cmd(BOB)).thenThrows('not_listing_owner', 403);
      del.given([]).when(cmd(BOB)).thenThrows('not_listing_owner', 403);
    });
    it('answers 404 for an unknown or deleted listing', () => {
      close.given([]).when(cmd(ALICE, null)).thenThrows('listing_not_found', 404);
      del.given([f.listingDeleted()]).when(cmd()).thenThrows('listing_not_found', 404);
      close.given([f.listingDeleted()]).when(cmd()).thenThrows('listing_not_found', 404);
    });
  });
});
