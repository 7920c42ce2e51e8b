import type { Context } from 'koa';
import type { RecordedEvent } from '../../../events/store/port.ts';
import type { DomainEventType, EventOfType } from '../../../events/catalogue.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { requireApiKey } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { requireOwnedAgent } from '../humans/owner.ts';
import type { ContractView, ListingView, ResponseView, TrailEntry } from './schemas.ts';

/** The two auth families: `/api/marketplace` and `/api/contracts` take a bearer token (the user's linked agent acts), `/api/agent/...` an API key. */
export type Family = 'bearer' | 'api_key';

export function caller(family: Family, ctx: Context): string {
  return family === 'bearer' ? requireOwnedAgent(ctx).agentId : requireApiKey(ctx);
}

/** A write's caller (its operation's write limit is counted by `mount`, api/operations.ts). */
export function writerOf(_s: Services, family: Family, ctx: Context): string {
  return caller(family, ctx);
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function listingView(d: ReadModel<'listings'>, baseUrl: string): ListingView {
  return {
    intent_id: d._id,
    title: String(d.title),
    description: String(d.description),
    category: d.category,
    price: num(d.price) ?? 0,
    pricing_type: d.pricing_type,
    budget_min: num(d.budget_min),
    budget_max: num(d.budget_max),
    delivery_window: str(d.delivery_window),
    status: d.status === 'closed' ? 'closed' : 'open',
    response_count: num(d.response_count) ?? 0,
    owner: { agent_id: String(d.agent_id), name: String(d.agent_name) },
    created_at: String(d.created_at),
    closed_at: str(d.closed_at),
    url: `${baseUrl}/marketplace/${encodeURIComponent(d._id)}`,
  };
}

export function responseView(d: ReadModel<'listing_responses'>): ResponseView {
  return {
    response_id: d._id,
    intent_id: String(d.intent_id),
    agent_id: String(d.agent_id),
    agent_name: String(d.agent_name),
    message: String(d.message),
    proposed_price: num(d.proposed_price),
    status: d.status === 'accepted' ? 'accepted' : 'pending',
    contract_id: str(d.contract_id),
    responded_at: String(d.responded_at),
  };
}

export function contractView(d: ReadModel<'contracts'>): ContractView {
  return {
    contract_id: d._id,
    intent_id: String(d.intent_id),
    response_id: String(d.response_id),
    title: String(d.title),
    state: d.status,
    requester_id: String(d.requester_id),
    provider_id: String(d.provider_id),
    price: num(d.price) ?? 0,
    pricing_type: d.pricing_type,
    proposed_price: num(d.proposed_price),
    rating: num(d.rating),
    opened_at: String(d.opened_at),
    updated_at: String(d.updated_at),
    disputed_at: str(d.disputed_at),
    outcome: str(d.outcome),
  };
}

/** An event read from the log is the catalogue's event of its type (appends are checked against the catalogue). */
const isOfType = <T extends DomainEventType>(e: RecordedEvent, type: T): e is RecordedEvent & EventOfType<T> => e.type === type;

/** The audit trail row of a contract event read from its stream. */
export function trailEntry(e: RecordedEvent): TrailEntry {
  const base = { position: e.position, revision: e.revision, event_id: e.id, type: e.type, at: e.metadata.occurred_at };
  if (isOfType(e, 'ContractOpened')) {
    const d = e.data;
    return { ...base, action: 'open', from: null, to: 'open', actor: d.requester_id, actor_role: 'requester', note: null, rating: null };
  }
  if (isOfType(e, 'ContractTransitioned')) {
    const d = e.data;
    return { ...base, action: d.action, from: d.from, to: d.to, actor: d.actor_id, actor_role: d.actor_role, note: d.note, rating: d.rating };
  }
  // DisputeRuled: the signed ruling, recorded with the resolution.
  return { ...base, action: 'ruling', from: null, to: 'ruled', actor: e.metadata.actor ?? 'service', actor_role: 'admin', note: null, rating: null };
}
