import type { EventOfType } from '../../events/catalogue.ts';
import { DomainError, forbidden, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { ServiceKey } from '../../events/kernel/signing.ts';
import type {
  ContractAction,
  ContractOpened,
  ContractStatus,
  ContractTransitioned,
  DisputeRuled,
  PricingType,
  ResolveOutcome,
  RulingDocument,
} from '../../events/marketplace.ts';
import { contractStream } from '../../events/marketplace.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import { evidenceHead } from './evidence.ts';
import type { EvidenceSource } from './evidence.ts';

export type PartyVerb = Exclude<ContractAction, 'resolve'>;
type Role = 'requester' | 'provider' | 'either';

/**
 * The state machine (shared DECISIONS "Marketplace and contracts"): who may use each verb and
 * the states it moves from. Anything else is 409 `invalid_transition`; `resolve` is the super
 * admin's, from `disputed` only.
 */
export const TRANSITIONS: Readonly<Record<PartyVerb, { by: Role; from: readonly ContractStatus[]; to: ContractStatus }>> = {
  accept: { by: 'provider', from: ['open'], to: 'accepted' },
  start: { by: 'provider', from: ['accepted'], to: 'in_progress' },
  deliver: { by: 'provider', from: ['in_progress'], to: 'delivered' },
  complete: { by: 'requester', from: ['delivered'], to: 'completed' },
  cancel: { by: 'either', from: ['open', 'accepted'], to: 'cancelled' },
  dispute: { by: 'either', from: ['accepted', 'in_progress', 'delivered'], to: 'disputed' },
};

/**
 * What a contract's stream holds. `MailQueued` only in streams written before the lifecycle mails
 * moved to their reactor (workers/marketplace/contract-mails.ts): folded as nothing.
 */
export type ContractStreamEvent = EventOfType<'ContractOpened' | 'ContractTransitioned' | 'DisputeRuled' | 'MailQueued'>;

export interface ContractState {
  exists: boolean;
  contract_id: string;
  intent_id: string;
  response_id: string;
  requester_id: string;
  provider_id: string;
  title: string;
  status: ContractStatus;
  rating: number | null;
  /** Set while disputed: the state the dispute was filed from. */
  disputed_from: ContractStatus | null;
  ruling: DisputeRuled['data'] | null;
}

export const contractAggregate: Aggregate<ContractState, ContractStreamEvent> = {
  initialState: () => ({
    exists: false,
    contract_id: '',
    intent_id: '',
    response_id: '',
    requester_id: '',
    provider_id: '',
    title: '',
    status: 'open',
    rating: null,
    disputed_from: null,
    ruling: null,
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'ContractOpened': {
        const d = event.data;
        return {
          ...state,
          exists: true,
          contract_id: d.contract_id,
          intent_id: d.intent_id,
          response_id: d.response_id,
          requester_id: d.requester_id,
          provider_id: d.provider_id,
          title: d.title,
          status: 'open',
        };
      }
      case 'ContractTransitioned': {
        const d = event.data;
        return {
          ...state,
          status: d.to,
          rating: d.rating ?? state.rating,
          disputed_from: d.action === 'dispute' ? d.from : d.action === 'resolve' ? null : state.disputed_from,
        };
      }
      case 'DisputeRuled':
        return { ...state, ruling: event.data };
      case 'MailQueued':
        return state;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

/** The listing and the response an owner accepts (from the read models), or null when missing. */
export interface AcceptFacts {
  listing: { intent_id: string; owner_id: string; title: string; price: number; pricing_type: PricingType; deleted: boolean; position: number } | null;
  response: { response_id: string; intent_id: string; agent_id: string; proposed_price: number | null; position: number } | null;
}

export type OpenContract = Command<'OpenContract', AcceptFacts & { agent_id: string }, { now: Date; contract_id: string }>;

/** OpenContract: the listing owner (403) accepts a response to that listing (404); one contract per response (409). */
export function decideOpenContract(command: OpenContract, state: ContractState): ContractOpened[] {
  const { listing, response, agent_id } = command.data;
  if (!listing || listing.deleted) throw notFound('Listing', 'listing_not_found');
  if (listing.owner_id !== agent_id) throw forbidden('Only the owner of this listing may accept its responses', 'not_listing_owner');
  if (!response || response.intent_id !== listing.intent_id) throw notFound('Response', 'response_not_found');
  if (state.exists) throw new DomainError(409, 'contract_exists', 'This response was already accepted', { contract_id: state.contract_id });
  return [
    {
      type: 'ContractOpened',
      data: {
        contract_id: command.metadata.contract_id,
        intent_id: listing.intent_id,
        response_id: response.response_id,
        requester_id: listing.owner_id,
        provider_id: response.agent_id,
        title: listing.title,
        price: listing.price,
        pricing_type: listing.pricing_type,
        proposed_price: response.proposed_price,
        listing_position: listing.position,
        response_position: response.position,
        opened_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

/** The caller's role on a contract: 404 when there is no contract, 403 for a third party. */
export function partyRole(state: ContractState, agentId: string): 'requester' | 'provider' {
  if (!state.exists) throw notFound('Contract', 'contract_not_found');
  if (agentId === state.requester_id) return 'requester';
  if (agentId === state.provider_id) return 'provider';
  throw forbidden('Only the requester and the provider of this contract may see it or act on it', 'not_contract_party');
}

const invalid = (verb: string, state: ContractState) =>
  new DomainError(409, 'invalid_transition', `A contract that is ${state.status} cannot be moved by ${verb}`, { state: state.status });

export type TransitionContract = Command<
  'TransitionContract',
  { verb: PartyVerb; agent_id: string; rating: number | null; note: string | null },
  { now: Date }
>;

/**
 * A party's verb: 404 unknown contract, 403 third party or the other party's verb, 409 from any
 * state the table does not list (a disputed contract is locked: only `resolve` moves it). A rating
 * belongs to `complete` only. The lifecycle mails are queued by their reactor once it is committed.
 */
export function decideTransition(command: TransitionContract, state: ContractState): ContractTransitioned[] {
  const { verb, agent_id, rating, note } = command.data;
  const role = partyRole(state, agent_id);
  const rule = TRANSITIONS[verb];
  if (rule.by !== 'either' && rule.by !== role) throw forbidden(`Only the ${rule.by} of this contract may ${verb} it`, 'wrong_contract_role');
  if (!rule.from.includes(state.status)) throw invalid(verb, state);
  const transitioned: ContractTransitioned = {
    type: 'ContractTransitioned',
    data: {
      contract_id: state.contract_id,
      requester_id: state.requester_id,
      provider_id: state.provider_id,
      action: verb,
      from: state.status,
      to: rule.to,
      actor_id: agent_id,
      actor_role: role,
      note,
      rating: verb === 'complete' ? rating : null,
      at: command.metadata.now.toISOString(),
    },
  };
  return [transitioned];
}

export type ResolveDispute = Command<
  'ResolveDispute',
  { admin_id: string; outcome: ResolveOutcome; note: string; ruling: DisputeRuled['data'] },
  { now: Date }
>;

/**
 * ResolveDispute (super admin): only a disputed contract (404 unknown, 409 otherwise). The signed
 * ruling was made on the stream as it stood at `evidence_revision`; if the stream moved since,
 * 409 `contract_changed` (the caller signs again on the new evidence).
 */
export function decideResolveDispute(command: ResolveDispute, state: ContractState, revision: number | null): Array<ContractTransitioned | DisputeRuled> {
  const { admin_id, outcome, note, ruling } = command.data;
  if (!state.exists) throw notFound('Contract', 'contract_not_found');
  if (state.status !== 'disputed') throw invalid('resolve', state);
  if (ruling.ruling.evidence_revision !== revision)
    throw new DomainError(409, 'contract_changed', 'The contract changed while the ruling was signed; repeat the request');
  return [
    {
      type: 'ContractTransitioned',
      data: {
        contract_id: state.contract_id,
        requester_id: state.requester_id,
        provider_id: state.provider_id,
        action: 'resolve',
        from: 'disputed',
        to: outcome,
        actor_id: admin_id,
        actor_role: 'admin',
        note,
        rating: null,
        at: command.metadata.now.toISOString(),
      },
    },
    { type: 'DisputeRuled', data: ruling },
  ];
}

export async function openContract(bus: CommandBus, agentId: string, facts: AcceptFacts, ctx: CommandContext) {
  // One contract per response: its id derives from the response, so a second accept meets the existing stream.
  const contractId = deriveId('ctr', `response:${facts.response?.response_id ?? 'none'}`);
  const command: OpenContract = { type: 'OpenContract', data: { ...facts, agent_id: agentId }, metadata: { now: ctx.now, contract_id: contractId } };
  return bus.handle<ContractState, ContractStreamEvent, ContractOpened[]>(
    contractStream(contractId),
    contractAggregate,
    (s) => decideOpenContract(command, s),
    ctx,
  );
}

export async function transitionContract(
  bus: CommandBus,
  contractId: string,
  input: { verb: PartyVerb; agent_id: string; rating: number | null; note: string | null },
  ctx: CommandContext,
) {
  const command: TransitionContract = { type: 'TransitionContract', data: input, metadata: { now: ctx.now } };
  return bus.handle<ContractState, ContractStreamEvent, ContractTransitioned[]>(
    contractStream(contractId),
    contractAggregate,
    (s) => decideTransition(command, s),
    ctx,
  );
}

/** The signed ruling of a resolution: the document over the evidence as it stands, signed with the service key. */
export function signRuling(key: ServiceKey, doc: RulingDocument): DisputeRuled['data'] {
  return { contract_id: doc.contract_id, ruling: doc, signature: key.sign(doc) };
}

/**
 * A super admin resolves a dispute: the evidence chain is computed from the log as it stands, the
 * ruling over it is signed, and both are appended with the `resolve` transition in one append
 * (revision-checked, so the ruling names exactly the events it was made on).
 */
export async function resolveDispute(
  bus: CommandBus,
  key: ServiceKey,
  source: EvidenceSource,
  contractId: string,
  input: { admin_id: string; outcome: ResolveOutcome; note: string },
  ctx: CommandContext,
) {
  const stream = contractStream(contractId);
  const evidence = await evidenceHead(source, contractId);
  const doc: RulingDocument = {
    format: 'agent-network/ruling/v1',
    contract_id: contractId,
    outcome: input.outcome,
    note: input.note,
    ruled_by: input.admin_id,
    ruled_at: ctx.now.toISOString(),
    evidence_revision: evidence.revision,
    evidence_head: evidence.head,
  };
  const command: ResolveDispute = {
    type: 'ResolveDispute',
    data: { ...input, ruling: signRuling(key, doc) },
    metadata: { now: ctx.now },
  };
  return bus.handle<ContractState, ContractStreamEvent, Array<ContractTransitioned | DisputeRuled>>(
    stream,
    contractAggregate,
    (s, revision) => decideResolveDispute(command, s, revision),
    ctx,
  );
}

/** resolveDispute, signed again on fresh evidence when a write not yet durable when the evidence was read moved the stream (a few times at most). */
export async function resolveDisputeSigned(...args: Parameters<typeof resolveDispute>) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await resolveDispute(...args);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'contract_changed') || attempt >= 3) throw err;
    }
  }
}
