import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ContractStatus, ListingCategory, PricingType, ResolveOutcome } from '../../../events/marketplace.ts';
import { CONTRACT_STATES, LISTING_CATEGORIES, PRICING_TYPES, RESOLVE_OUTCOMES } from '../../../events/marketplace.ts';

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

/** GET list query (strings, as query strings arrive); page and limit are read by `paging`. */
export const ListingQuery = Body({
  category: Type.Optional(Category),
  pricing_type: Type.Optional(Pricing),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(oneOf(['open', 'closed'] as const)),
  page: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
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
  page: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
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
