import { Type, type Static } from '@sinclair/typebox';
import { ownCopy } from './kernel/text.ts';
import type { Event } from './types.ts';
import { AgentId, Charge, Data, Hex64, IsoDate, Literals, Nullable } from './types.ts';

/** Listing categories (shared DECISIONS "Marketplace and contracts"). */
export const LISTING_CATEGORIES = ['engineering', 'design', 'fundraising', 'legal', 'marketing', 'sales', 'operations', 'data', 'content', 'other'] as const;
export type ListingCategory = (typeof LISTING_CATEGORIES)[number];
export const PRICING_TYPES = ['fixed', 'hourly', 'negotiable', 'free'] as const;
export type PricingType = (typeof PRICING_TYPES)[number];

/** Contract states and the verbs that move them (the table is commands/marketplace/contract.ts). */
export const CONTRACT_STATES = ['open', 'accepted', 'in_progress', 'delivered', 'completed', 'disputed', 'cancelled', 'refunded'] as const;
export type ContractStatus = (typeof CONTRACT_STATES)[number];
export const CONTRACT_ACTIONS = ['accept', 'start', 'deliver', 'complete', 'cancel', 'dispute', 'resolve'] as const;
export type ContractAction = (typeof CONTRACT_ACTIONS)[number];
/** The end states a contract can reach after acceptance (the completion rate's denominator, with cancellation from `accepted` only). */
export const END_STATES_AFTER_ACCEPTANCE: readonly ContractStatus[] = ['completed', 'refunded', 'cancelled'];
export const RESOLVE_OUTCOMES = ['completed', 'in_progress', 'refunded'] as const;
export type ResolveOutcome = (typeof RESOLVE_OUTCOMES)[number];

const IntentId = Type.String({ pattern: '^lst_' });
const ResponseId = Type.String({ pattern: '^rsp_' });
const ContractId = Type.String({ pattern: '^ctr_' });
const Name = Type.String({ minLength: 1 });
const Money = Type.Number({ minimum: 0 });
const State = Literals(CONTRACT_STATES);

/** On the owner's stream `agent-<id>` (0.5 credits, the charge rides on it): a new listing, open for responses. */
export const ListingCreatedData = Data({
  intent_id: IntentId,
  agent_id: AgentId,
  agent_name: Name,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1, maxLength: 5000 }),
  category: Literals(LISTING_CATEGORIES),
  price: Money,
  pricing_type: Literals(PRICING_TYPES),
  budget_min: Nullable(Money),
  budget_max: Nullable(Money),
  delivery_window: Nullable(Type.String({ maxLength: 200 })),
  created_at: IsoDate,
  charge: Charge,
});
export type ListingCreated = Event<'ListingCreated', Static<typeof ListingCreatedData>>;

/** On the responder's stream `agent-<id>` (0.25 credits): a response to another agent's open listing. */
export const ListingRespondedData = Data({
  response_id: ResponseId,
  intent_id: IntentId,
  agent_id: AgentId,
  agent_name: Name,
  listing_owner_id: AgentId,
  message: Type.String({ minLength: 1, maxLength: 5000 }),
  proposed_price: Nullable(Money),
  responded_at: IsoDate,
  charge: Charge,
});
export type ListingResponded = Event<'ListingResponded', Static<typeof ListingRespondedData>>;

/** On `listing-<intent_id>`: the owner closes the listing (no more responses) or deletes it (then it answers 404). */
export const ListingClosedData = Data({ intent_id: IntentId, agent_id: AgentId, closed_at: IsoDate });
export type ListingClosed = Event<'ListingClosed', Static<typeof ListingClosedData>>;
export const ListingDeletedData = Data({ intent_id: IntentId, agent_id: AgentId, deleted_at: IsoDate });
export type ListingDeleted = Event<'ListingDeleted', Static<typeof ListingDeletedData>>;

/**
 * On `contract-<contract_id>` (the id derives from the response, so one response opens at most one
 * contract): the listing owner accepted a response; the owner is the requester, the responder the
 * provider. Contracts move no credits.
 */
export const ContractOpenedData = Data({
  contract_id: ContractId,
  intent_id: IntentId,
  response_id: ResponseId,
  requester_id: AgentId,
  provider_id: AgentId,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  price: Money,
  pricing_type: Literals(PRICING_TYPES),
  proposed_price: Nullable(Money),
  /** Log positions of the ListingCreated and ListingResponded events: the evidence bundle starts with them. */
  listing_position: Type.Integer({ minimum: 1 }),
  response_position: Type.Integer({ minimum: 1 }),
  opened_at: IsoDate,
});
export type ContractOpened = Event<'ContractOpened', Static<typeof ContractOpenedData>>;

/**
 * On `contract-<contract_id>`: one transition of the state machine, with who made it (an agent id,
 * or the super admin's user id for `resolve`), in which role, and the note or rating it carried.
 * The stream of these is the audit trail admins read.
 */
export const ContractTransitionedData = Data({
  contract_id: ContractId,
  requester_id: AgentId,
  provider_id: AgentId,
  action: Literals(CONTRACT_ACTIONS),
  from: State,
  to: State,
  actor_id: Type.String({ minLength: 1 }),
  actor_role: Literals(['requester', 'provider', 'admin'] as const),
  note: Nullable(Type.String({ maxLength: 2000 })),
  rating: Nullable(Type.Integer({ minimum: 1, maximum: 5 })),
  at: IsoDate,
});
export type ContractTransitioned = Event<'ContractTransitioned', Static<typeof ContractTransitionedData>>;

/** The ruling document a super admin's resolution signs (docs/MARKETPLACE.md "Rulings"). */
export const RulingDocument = Data({
  format: Type.Literal('agent-network/ruling/v1'),
  contract_id: ContractId,
  outcome: Literals(RESOLVE_OUTCOMES),
  note: Type.String({ maxLength: 2000 }),
  ruled_by: Type.String({ minLength: 1 }),
  ruled_at: IsoDate,
  /** The evidence the ruling was made on: the contract stream's events up to this revision and the bundle's chain head over them. */
  evidence_revision: Type.Integer({ minimum: 0 }),
  evidence_head: Hex64,
});
export type RulingDocument = Static<typeof RulingDocument>;

/** On `contract-<contract_id>`, in the same append as the `resolve` transition: the ruling and the service's Ed25519 signature over its canonical JSON. */
export const DisputeRuledData = Data({
  contract_id: ContractId,
  ruling: RulingDocument,
  signature: Data({ alg: Type.Literal('EdDSA'), kid: Type.String({ minLength: 1 }), value: Type.String({ minLength: 1 }) }),
});
export type DisputeRuled = Event<'DisputeRuled', Static<typeof DisputeRuledData>>;

const Rate = Type.Number({ minimum: 0, maximum: 1 });
const Count = Type.Integer({ minimum: 0 });
/**
 * On `trust-run-<run_id>` (the nightly run's id names its night, so a restart cannot run it twice):
 * one agent's reputation recomputed from its contracts as provider and its marketplace responses.
 */
export const TrustScoreRecomputedData = Data({
  run_id: Type.String({ minLength: 1 }),
  agent_id: AgentId,
  trust_score: Type.Number({ minimum: 0, maximum: 100 }),
  completion_rate: Rate,
  average_rating: Type.Number({ minimum: 0, maximum: 5 }),
  contracts_rated: Count,
  contracts_completed: Count,
  contracts_ended: Count,
  marketplace_responses: Count,
  deal_close_rate: Rate,
  computed_at: IsoDate,
});
export type TrustScoreRecomputed = Event<'TrustScoreRecomputed', Static<typeof TrustScoreRecomputedData>>;
/** The last event of a run: how many agents changed; `night` is the UTC date of a nightly run (null on demand). */
export const TrustRecomputeCompletedData = Data({
  run_id: Type.String({ minLength: 1 }),
  night: Nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })),
  agents: Count,
  completed_at: IsoDate,
});
export type TrustRecomputeCompleted = Event<'TrustRecomputeCompleted', Static<typeof TrustRecomputeCompletedData>>;

export type MarketplaceEvent =
  | ListingCreated
  | ListingResponded
  | ListingClosed
  | ListingDeleted
  | ContractOpened
  | ContractTransitioned
  | DisputeRuled
  | TrustScoreRecomputed
  | TrustRecomputeCompleted;

export const marketplaceEventSchemas = {
  ListingCreated: ListingCreatedData,
  ListingResponded: ListingRespondedData,
  ListingClosed: ListingClosedData,
  ListingDeleted: ListingDeletedData,
  ContractOpened: ContractOpenedData,
  ContractTransitioned: ContractTransitionedData,
  DisputeRuled: DisputeRuledData,
  TrustScoreRecomputed: TrustScoreRecomputedData,
  TrustRecomputeCompleted: TrustRecomputeCompletedData,
};

/** Marketplace events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const MARKETPLACE_CHARGED_EVENTS = ['ListingCreated', 'ListingResponded'] as const;

export const listingStream = (intentId: string) => `listing-${intentId}`;
export const contractStream = (contractId: string) => `contract-${contractId}`;
export const trustRunStream = (runId: string) => `trust-run-${runId}`;

/**
 * The search terms of a listing (and of a query `q`): lower-case words of 2 to 40 letters or
 * digits, each once. The listings read model indexes them (multikey), so a search is an index range.
 * Each is a string of its own (ownCopy), not a view into the text the read model would then keep.
 */
export function searchTerms(text: string, max = 200): string[] {
  const terms = new Set<string>();
  for (const word of text
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)) {
    if (word.length < 2 || word.length > 40) continue;
    terms.add(ownCopy(word));
    if (terms.size >= max) break;
  }
  return [...terms];
}
