import Router from '@koa/router';
import type { Context } from 'koa';
import type { PartyVerb } from '../../../commands/marketplace/contract.ts';
import { contractAggregate, partyRole, transitionContract } from '../../../commands/marketplace/contract.ts';
import { notFound } from '../../../events/kernel/errors.ts';
import { contractStream } from '../../../events/marketplace.ts';
import { contractForView, contractsOf, getContract } from '../../../queries/marketplace/marketplace.ts';
import { storeAsOf } from '../../as-of.ts';
import type { Services } from '../../services.ts';
import { paging } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';
import type { Auth, Input, Operation } from '../../operations.ts';
import type { RouterContext } from '@koa/router';
import { mount, operations, queryOf } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import { CompleteBody as CompleteSchema, ContractQuery as QuerySchema, ContractView, RulingAnswer, TransitionBody } from './schemas.ts';
import { ok } from '../schemas.ts';
import type { Family } from './views.ts';
import { caller, contractView, writerOf } from './views.ts';

/** Where the service's public key is published (the ruling's verifier fetches it once). */
export const SERVICE_KEY_PATH = '/.well-known/service-key.json';

/** One auth family's contract operations (`/api/contracts` signed-in owners, `/api/agent/contracts` X-API-Key). */
function contractOperationsOf(prefix: string, auth: Auth, who: string) {
  const op = <O extends Omit<Operation, 'tags' | 'auth'>>(o: O) => ({ ...o, tags: ['marketplace'], auth });
  const verb = (v: PartyVerb, summary: string) =>
    op({
      method: 'POST',
      path: `${prefix}/:id/${v}`,
      summary: `${summary} (${who})`,
      body: v === 'complete' ? CompleteSchema : TransitionBody,
      bodyOptional: true,
      rateLimit: LIMITS.writes,
      responses: { 200: { schema: ContractView } },
    });
  return {
    list: op({
      method: 'GET',
      path: prefix,
      summary: `Your contracts, as requester or provider (${who})`,
      query: QuerySchema,
      responses: { 200: { schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: ContractView } } } } },
    }),
    detail: op({
      method: 'GET',
      path: `${prefix}/:id`,
      summary: `A contract you are a party to (${who})`,
      query: queryOf('as_of'),
      responses: { 200: { schema: ContractView } },
    }),
    accept: verb('accept', 'Provider: accept the contract'),
    start: verb('start', 'Provider: start the work'),
    deliver: verb('deliver', 'Provider: deliver the work'),
    complete: verb('complete', 'Requester: complete the contract (optional rating 1-5)'),
    cancel: verb('cancel', 'Either party: cancel an open or accepted contract'),
    dispute: verb('dispute', 'Either party: dispute the contract'),
    ruling: op({ method: 'GET', path: `${prefix}/:id/ruling`, summary: `The signed ruling of a resolved dispute (${who})`, responses: ok(RulingAnswer) }),
  } satisfies Record<PartyVerb | 'list' | 'detail' | 'ruling', Operation>;
}

type ContractOps = ReturnType<typeof contractOperationsOf>;
/** The verbs a party sends (TRANSITIONS' keys, in its order). */
const PARTY_VERBS = ['accept', 'start', 'deliver', 'complete', 'cancel', 'dispute'] as const satisfies readonly PartyVerb[];
/** Every party verb is in PARTY_VERBS (tsc refuses this line otherwise). */
const _everyVerb: Exclude<PartyVerb, (typeof PARTY_VERBS)[number]> extends never ? true : false = true;

const bearerContracts = contractOperationsOf('/api/contracts', 'bearer', 'signed-in owner of an agent');
const keyContracts = contractOperationsOf('/api/agent/contracts', 'key', 'X-API-Key');

export const contractOperations = operations({
  getContracts: bearerContracts.list,
  getContractsById: bearerContracts.detail,
  postContractsByIdAccept: bearerContracts.accept,
  postContractsByIdStart: bearerContracts.start,
  postContractsByIdDeliver: bearerContracts.deliver,
  postContractsByIdComplete: bearerContracts.complete,
  postContractsByIdCancel: bearerContracts.cancel,
  postContractsByIdDispute: bearerContracts.dispute,
  getContractsByIdRuling: bearerContracts.ruling,
  getAgentContracts: keyContracts.list,
  getAgentContractsById: keyContracts.detail,
  postAgentContractsByIdAccept: keyContracts.accept,
  postAgentContractsByIdStart: keyContracts.start,
  postAgentContractsByIdDeliver: keyContracts.deliver,
  postAgentContractsByIdComplete: keyContracts.complete,
  postAgentContractsByIdCancel: keyContracts.cancel,
  postAgentContractsByIdDispute: keyContracts.dispute,
  getAgentContractsByIdRuling: keyContracts.ruling,
});

/** Task contracts under both auth families (shared DECISIONS "Marketplace and contracts"): reads, the party verbs, and the signed ruling. */
export function contractRoutes(router: Router, s: Services): void {
  /** The contract, if the caller is one of its parties (404 unknown, 403 a third party), decided on the contract's own stream. */
  const visible = async (contractId: string, agentId: string) => {
    const { state } = await s.bus.load(contractStream(contractId), contractAggregate);
    partyRole(state, agentId);
    const doc = await getContract(s.store, contractId);
    if (!doc) throw notFound('Contract', 'contract_not_found');
    return doc;
  };

  const list = (family: Family) => async (ctx: RouterContext, input: Input<ContractOps['list']>) => {
    const agentId = caller(family, ctx);
    const q = input.query;
    const { limit, page, skip } = paging(ctx.query, { limit: 20, max: 100 });
    const { docs, total } = await contractsOf(s.store, agentId, q.role ?? null, q.status ?? null, skip, limit);
    ctx.body = { items: docs.map(contractView), total, page, limit };
  };

  /** With `?as_of=<position or ISO time>`: the contract as it was then, folded from the log (404 before it existed). */
  const detail = (family: Family) => async (ctx: Context) => {
    const agentId = caller(family, ctx);
    const live = await visible(ctx.params.id, agentId);
    const store = await storeAsOf(s, ctx, ['contracts'], ctx.params.id);
    const doc = store === s.store ? live : await getContract(store, ctx.params.id);
    if (!doc) throw notFound('Contract', 'contract_not_found');
    ctx.body = contractView(doc);
  };

  const verb = (family: Family, v: PartyVerb) => async (ctx: RouterContext, input: Input<ContractOps[PartyVerb]>) => {
    const agentId = writerOf(s, family, ctx);
    const body = input.body;
    const contractId = ctx.params.id;
    const r = await transitionContract(
      s.bus,
      contractId,
      { verb: v, agent_id: agentId, rating: 'rating' in body && typeof body.rating === 'number' ? body.rating : null, note: body.note ?? null },
      commandContext(s, ctx, agentId),
    );
    await settled(s, r.position);
    const doc = await contractForView(s.store, contractId);
    if (!doc) throw notFound('Contract', 'contract_not_found');
    ctx.body = contractView(doc);
  };

  const ruling = (family: Family) => async (ctx: Context) => {
    const agentId = caller(family, ctx);
    await visible(ctx.params.id, agentId);
    const { state } = await s.bus.load(contractStream(ctx.params.id), contractAggregate);
    if (!state.ruling) throw notFound('Ruling', 'ruling_not_found');
    ctx.body = { ...state.ruling, public_key_url: `${s.config.publicBaseUrl}${SERVICE_KEY_PATH}` };
  };

  for (const [prefix, family] of [
    ['/api/contracts', 'bearer'],
    ['/api/agent/contracts', 'api_key'],
  ] as const) {
    const r = new Router({ prefix });
    const ops = family === 'bearer' ? bearerContracts : keyContracts;
    mount(r, ops.list, list(family));
    mount(r, ops.detail, detail(family));
    for (const v of PARTY_VERBS) mount(r, ops[v], verb(family, v));
    mount(r, ops.ruling, ruling(family));
    router.use(r.routes());
  }
}
