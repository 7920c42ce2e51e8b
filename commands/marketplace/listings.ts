import type { EventOfType } from '../../events/catalogue.ts';
import { agentStream } from '../../events/agents.ts';
import { DomainError, forbidden, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { ListingCategory, ListingClosed, ListingCreated, ListingDeleted, ListingResponded, PricingType } from '../../events/marketplace.ts';
import { listingStream } from '../../events/marketplace.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export interface ListingInput {
  title: string;
  description: string;
  category: ListingCategory;
  price: number;
  pricing_type: PricingType;
  budget_min: number | null;
  budget_max: number | null;
  delivery_window: string | null;
}

export type CreateListing = Command<'CreateListing', ListingInput, { now: Date; intent_id: string }>;

/** CreateListing (0.5 credits) on the owner's stream: budget_min may not exceed budget_max (422); 402 when the balance does not cover it. */
export function decideCreateListing(command: CreateListing, state: AgentState): ListingCreated[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const d = command.data;
  if (d.budget_min !== null && d.budget_max !== null && d.budget_min > d.budget_max)
    throw new ValidationFailed([{ loc: ['body', 'budget_max'], msg: 'budget_max must not be below budget_min', type: 'value_error.budget' }]);
  return [
    {
      type: 'ListingCreated',
      data: {
        intent_id: command.metadata.intent_id,
        agent_id: state.agent_id,
        agent_name: state.name,
        ...d,
        created_at: command.metadata.now.toISOString(),
        charge: charge(state, 'marketplace_post'),
      },
    },
  ];
}

/** What a response needs to know of the listing (from the listings read model), or null when there is none. */
export interface ListingFacts {
  intent_id: string;
  owner_id: string;
  status: 'open' | 'closed' | 'deleted';
}

export type RespondToListing = Command<
  'RespondToListing',
  { listing: ListingFacts | null; message: string; proposed_price: number | null; already_responded: boolean },
  { now: Date; response_id: string }
>;

/** RespondToListing (0.25) on the responder's stream: not the owner's own (400), open only (409), once per agent (409), then the charge (402). */
export function decideRespondToListing(command: RespondToListing, state: AgentState): ListingResponded[] {
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const { listing, message, proposed_price, already_responded } = command.data;
  if (!listing || listing.status === 'deleted') throw notFound('Listing', 'listing_not_found');
  if (listing.owner_id === state.agent_id) throw new DomainError(400, 'cannot_respond_own_listing', 'You cannot respond to your own listing');
  if (listing.status === 'closed') throw new DomainError(409, 'listing_closed', 'This listing is closed and takes no more responses');
  if (already_responded) throw new DomainError(409, 'already_responded', 'You already responded to this listing');
  return [
    {
      type: 'ListingResponded',
      data: {
        response_id: command.metadata.response_id,
        intent_id: listing.intent_id,
        agent_id: state.agent_id,
        agent_name: state.name,
        listing_owner_id: listing.owner_id,
        message,
        proposed_price,
        responded_at: command.metadata.now.toISOString(),
        charge: charge(state, 'marketplace_respond'),
      },
    },
  ];
}

export type ListingStreamEvent = EventOfType<'ListingClosed' | 'ListingDeleted'>;

/** `listing-<intent_id>`: what the owner did to the listing after creating it. */
export interface ListingState {
  closed: boolean;
  deleted: boolean;
}

export const listingAggregate: Aggregate<ListingState, ListingStreamEvent> = {
  initialState: () => ({ closed: false, deleted: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'ListingClosed':
        return { ...state, closed: true };
      case 'ListingDeleted':
        return { ...state, deleted: true };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

export type CloseListing = Command<'CloseListing' | 'DeleteListing', { agent_id: string; listing: ListingFacts | null }>;

function ownListing(command: CloseListing, state: ListingState): ListingFacts {
  const { listing, agent_id } = command.data;
  if (!listing || state.deleted) throw notFound('Listing', 'listing_not_found');
  if (listing.owner_id !== agent_id) throw forbidden('Only the owner of this listing may do this', 'not_listing_owner');
  return listing;
}

/** CloseListing: the owner only (403); closing a closed listing changes nothing. */
export function decideCloseListing(command: CloseListing, state: ListingState): ListingClosed[] {
  const listing = ownListing(command, state);
  if (state.closed) return [];
  return [{ type: 'ListingClosed', data: { intent_id: listing.intent_id, agent_id: command.data.agent_id, closed_at: command.metadata.now.toISOString() } }];
}

/** DeleteListing: the owner only (403); afterwards the listing answers 404. Its contracts go on. */
export function decideDeleteListing(command: CloseListing, state: ListingState): ListingDeleted[] {
  const listing = ownListing(command, state);
  return [{ type: 'ListingDeleted', data: { intent_id: listing.intent_id, agent_id: command.data.agent_id, deleted_at: command.metadata.now.toISOString() } }];
}

type AgentEvents = Parameters<typeof agentAggregate.evolve>[1];

export async function createListing(bus: CommandBus, agentId: string, input: ListingInput, ctx: CommandContext) {
  const command: CreateListing = { type: 'CreateListing', data: input, metadata: { now: ctx.now, intent_id: deriveId('lst', ctx.commandId) } };
  return bus.handle<AgentState, AgentEvents, ListingCreated[]>(agentStream(agentId), agentAggregate, (s) => decideCreateListing(command, s), ctx);
}

export async function respondToListing(
  bus: CommandBus,
  agentId: string,
  input: { message: string; proposed_price: number | null },
  facts: { listing: ListingFacts | null; already_responded: boolean },
  ctx: CommandContext,
) {
  const command: RespondToListing = {
    type: 'RespondToListing',
    data: { ...input, ...facts },
    metadata: { now: ctx.now, response_id: deriveId('rsp', ctx.commandId) },
  };
  return bus.handle<AgentState, AgentEvents, ListingResponded[]>(agentStream(agentId), agentAggregate, (s) => decideRespondToListing(command, s), ctx);
}

export async function closeListing(bus: CommandBus, agentId: string, intentId: string, listing: ListingFacts | null, del: boolean, ctx: CommandContext) {
  const command: CloseListing = { type: del ? 'DeleteListing' : 'CloseListing', data: { agent_id: agentId, listing }, metadata: { now: ctx.now } };
  return bus.handle<ListingState, ListingStreamEvent, Array<ListingClosed | ListingDeleted>>(
    listingStream(intentId),
    listingAggregate,
    (s) => (del ? decideDeleteListing(command, s) : decideCloseListing(command, s)),
    ctx,
  );
}
