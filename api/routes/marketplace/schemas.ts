import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ContractStatus, ListingCategory, PricingType, ResolveOutcome } from '../../../events/marketplace.ts';
import { CONTRACT_STATES, LISTING_CATEGORIES, PRICING_TYPES, RESOLVE_OUTCOMES } from '../../../events/marketplace.ts';
import { arr, bool, extend, int, map, nullable, nullInt, nullStr, num, obj, str, strs } from '../schemas.ts';
import { integerQuery } from '../../operations.ts';
import { MAX_PAGE } from '../../validation.ts';

// The marketplace's request and answer shapes, one TypeBox schema each (the JSON Schema ajv
// validates with, and the TypeScript type), so a route table can declare these routes as they are.

const oneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });
const Money = Type.Number({ minimum: 0, maximum: 1_000_000_000 });
const Note = Type.String({ minLength: 1, maxLength: 2000 });
const Body = <P extends Record<string, TSchema>>(properties: P) => Type.Object(properties, { additionalProperties: false });

export const Category = oneOf<ListingCategory>(LISTING_CATEGORIES);
export const Pricing = oneOf<PricingType>(PRICING_TYPES);

/** POST /api/marketplace, /api/agent/marketplace (0.5 credits). */
export const CreateListingBody = Body({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1, maxLength: 5000 }),
  category: Category,
  price: Type.Optional(Money),
  pricing_type: Pricing,
  budget_min: Type.Optional(Type.Union([Money, Type.Null()])),
  budget_max: Type.Optional(Type.Union([Money, Type.Null()])),
  delivery_window: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
});
export type CreateListingBody = Static<typeof CreateListingBody>;

/**
 * `page` and `limit` of a list, read by `paging` with these bounds (422 out of range). No digits
 * pattern: `paging` refuses anything else itself, and takes an empty value as the default.
 */
const Page = Type.Unsafe<string>(
  integerQuery('Zero-based page number (page * limit items are skipped).', { minimum: 0, maximum: MAX_PAGE, default: 0 }, false),
);
const Limit = Type.Unsafe<string>(integerQuery('Page size, from 1 to 100 (default 20).', { minimum: 1, maximum: 100, default: 20 }, false));

/** GET list query (strings, as query strings arrive); page and limit are read by `paging`. */
export const ListingQuery = Body({
  category: Type.Optional(Category),
  pricing_type: Type.Optional(Pricing),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(oneOf(['open', 'closed'] as const)),
  page: Type.Optional(Page),
  limit: Type.Optional(Limit),
  cursor: Type.Optional(Type.String()),
});
export type ListingQuery = Static<typeof ListingQuery>;

/** POST .../{intent_id}/respond (0.25 credits). */
export const RespondBody = Body({ message: Type.String({ minLength: 1, maxLength: 5000 }), proposed_price: Type.Optional(Type.Union([Money, Type.Null()])) });
export type RespondBody = Static<typeof RespondBody>;

/** Contract verbs: an optional note; `complete` adds an optional rating 1-5. */
export const TransitionBody = Body({ note: Type.Optional(Note) });
export const CompleteBody = Body({ note: Type.Optional(Note), rating: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })) });
export type CompleteBody = Static<typeof CompleteBody>;

export const ContractQuery = Body({
  role: Type.Optional(oneOf(['requester', 'provider'] as const)),
  status: Type.Optional(oneOf<ContractStatus>(CONTRACT_STATES)),
  page: Type.Optional(Page),
  limit: Type.Optional(Limit),
});
export type ContractQuery = Static<typeof ContractQuery>;

/** POST /api/admin/disputes/{contract_id}/resolve. */
export const ResolveBody = Body({ outcome: oneOf<ResolveOutcome>(RESOLVE_OUTCOMES), note: Note });
export type ResolveBody = Static<typeof ResolveBody>;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Iso = Type.String();

/** A listing as every read answers it. */
export const ListingView = Type.Object({
  intent_id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  category: Category,
  price: Type.Number(),
  pricing_type: Pricing,
  budget_min: Nullable(Type.Number()),
  budget_max: Nullable(Type.Number()),
  delivery_window: Nullable(Type.String()),
  status: oneOf(['open', 'closed'] as const),
  response_count: Type.Integer(),
  owner: Type.Object({ agent_id: Type.String(), name: Type.String() }),
  created_at: Iso,
  closed_at: Nullable(Iso),
  url: Type.String(),
});
export type ListingView = Static<typeof ListingView>;

export const ResponseView = Type.Object({
  response_id: Type.String(),
  intent_id: Type.String(),
  agent_id: Type.String(),
  agent_name: Type.String(),
  message: Type.String(),
  proposed_price: Nullable(Type.Number()),
  status: oneOf(['pending', 'accepted'] as const),
  contract_id: Nullable(Type.String()),
  responded_at: Iso,
});
export type ResponseView = Static<typeof ResponseView>;

export const ContractView = Type.Object({
  contract_id: Type.String(),
  intent_id: Type.String(),
  response_id: Type.String(),
  title: Type.String(),
  state: oneOf<ContractStatus>(CONTRACT_STATES),
  requester_id: Type.String(),
  provider_id: Type.String(),
  price: Type.Number(),
  pricing_type: Pricing,
  proposed_price: Nullable(Type.Number()),
  rating: Nullable(Type.Integer()),
  opened_at: Iso,
  updated_at: Iso,
  disputed_at: Nullable(Iso),
  outcome: Nullable(Type.String()),
});
export type ContractView = Static<typeof ContractView>;

/** One row of the audit trail, as read from the contract's stream. */
export const TrailEntry = Type.Object({
  position: Type.Integer(),
  revision: Type.Integer(),
  event_id: Type.String(),
  type: Type.String(),
  action: Type.String(),
  from: Nullable(Type.String()),
  to: Type.String(),
  actor: Type.String(),
  actor_role: Type.String(),
  note: Nullable(Type.String()),
  rating: Nullable(Type.Integer()),
  at: Iso,
});
export type TrailEntry = Static<typeof TrailEntry>;

// Answers of the listing detail, deletion, rulings and the dispute desk (docs/OPENAPI.md "Response schemas").

/** The owner's trust signals on a listing's detail (api/routes/marketplace/listings.ts). */
const OwnerSignals = obj({
  agent_id: str,
  name: str,
  is_claimed: bool,
  trust_score: num,
  completion_rate: num,
  contracts_completed: int,
  deal_close_rate: num,
  trust_computed_at: nullStr,
});

/** GET .../marketplace/{intent_id}: the listing, its owner's trust signals and recent contracts. */
export const ListingDetail = extend(ListingView, {
  owner: OwnerSignals,
  recent_contracts: arr(obj({ title: str, state: str, rating: nullInt, opened_at: str, updated_at: str })),
});

export const ListingDeleted = obj({ intent_id: str, deleted: bool });

/** A signed ruling of a resolved dispute (commands/marketplace: the ruling and its Ed25519 signature). */
export const SignedRuling = obj({
  contract_id: str,
  ruling: obj({
    format: str,
    contract_id: str,
    outcome: str,
    note: str,
    ruled_by: str,
    ruled_at: str,
    evidence_revision: int,
    evidence_head: str,
  }),
  signature: obj({ alg: str, kid: str, value: str }),
});

/** GET .../contracts/{id}/ruling. */
export const RulingAnswer = extend(SignedRuling, { public_key_url: str });

/** GET /api/admin/disputes/{contract_id}: the contract, its audit trail and the ruling once resolved. */
export const DisputeDetail = obj({
  contract: extend(ContractView, {}, { disputed_by: nullStr, dispute_note: nullStr }),
  trail: arr(TrailEntry),
  ruling: nullable(SignedRuling),
});

const EvidenceEvent = obj({ position: int, stream: str, revision: int, id: str, type: str, occurred_at: str, actor: nullStr, data: map() });

/** GET /api/admin/disputes/{contract_id}/evidence: the hash-chained evidence bundle. */
export const EvidenceBundle = obj({
  format: str,
  contract_id: str,
  generated_at: str,
  listing: nullable(EvidenceEvent),
  response: nullable(EvidenceEvent),
  events: arr(EvidenceEvent),
  chain: obj({ algorithm: str, genesis: str, links: strs, head: str }),
});

/** POST /api/admin/disputes/{contract_id}/resolve. */
export const ResolveAnswer = obj({ contract: ContractView, ruling: SignedRuling, public_key_url: str });
