import Router from '@koa/router';
import { resolveDisputeSigned } from '../../../commands/marketplace/contract.ts';
import { buildEvidence, contractEvents } from '../../../commands/marketplace/evidence.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import { disputeQueue, getContract } from '../../../queries/marketplace/marketplace.ts';
import type { Services } from '../../services.ts';
import { paging } from '../../validation.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import { SERVICE_KEY_PATH } from './contracts.ts';
import { ContractView, ResolveBody as ResolveSchema } from './schemas.ts';
import { contractView, trailEntry } from './views.ts';
import { DisputeDetail, EvidenceBundle, ResolveAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

export const disputeOperations = operations({
  getAdminDisputes: {
    method: 'GET',
    path: '/api/admin/disputes',
    summary: 'Super admin: the dispute queue',
    tags: ['marketplace'],
    auth: 'admin',
    query: queryOf({ limit: limitQuery(100, 20) }, 'page'),
    responses: {
      200: {
        schema: { type: 'object', required: ['items', 'total'], properties: { items: { type: 'array', items: ContractView }, total: { type: 'integer' } } },
      },
    },
  },
  getAdminDisputesByContractId: {
    method: 'GET',
    path: '/api/admin/disputes/:contract_id',
    summary: "Super admin: a dispute with its contract's audit trail (from the contract's stream)",
    tags: ['marketplace'],
    auth: 'admin',
    responses: ok(DisputeDetail),
  },
  getAdminDisputesByContractIdEvidence: {
    method: 'GET',
    path: '/api/admin/disputes/:contract_id/evidence',
    summary: "Super admin: the dispute's evidence bundle (events with their hash chain)",
    tags: ['marketplace'],
    auth: 'admin',
    responses: ok(EvidenceBundle),
  },
  postAdminDisputesByContractIdResolve: {
    method: 'POST',
    path: '/api/admin/disputes/:contract_id/resolve',
    summary: 'Super admin: resolve a dispute with a signed ruling',
    tags: ['marketplace'],
    auth: 'admin',
    responses: ok(ResolveAnswer),
    body: ResolveSchema,
  },
});

/** The super admins' dispute desk: the queue, one dispute with its audit trail from the contract's stream, the evidence bundle, and resolution. */
export function disputeRoutes(router: Router, s: Services): void {
  const disputed = async (contractId: string) => {
    const doc = await getContract(s.store, contractId);
    if (!doc) throw notFound('Contract', 'contract_not_found');
    if (typeof doc.disputed_at !== 'string') throw notFound('Dispute', 'dispute_not_found');
    return doc;
  };

  const admin = new Router({ prefix: '/api/admin/disputes' });
  mount(admin, disputeOperations.getAdminDisputes, async (ctx) => {
    requireSuperAdmin(ctx);
    const { limit, page, skip } = paging(ctx.query, { limit: 20, max: 100 });
    const { docs, total } = await disputeQueue(s.store, skip, limit);
    ctx.body = {
      items: docs.map((d) => ({ ...contractView(d), disputed_by: d.disputed_by ?? null, dispute_note: d.dispute_note ?? null })),
      total,
      page,
      limit,
    };
  });
  mount(admin, disputeOperations.getAdminDisputesByContractId, async (ctx) => {
    requireSuperAdmin(ctx);
    const doc = await disputed(ctx.params.contract_id);
    // The trail is the contract's stream itself, read from the log (not a read model).
    const events = await contractEvents(s.log, ctx.params.contract_id);
    const ruled = events.find((e) => e.type === 'DisputeRuled');
    ctx.body = {
      contract: { ...contractView(doc), disputed_by: doc.disputed_by ?? null, dispute_note: doc.dispute_note ?? null },
      trail: events.map(trailEntry),
      ruling: ruled ? ruled.data : null,
    };
  });
  mount(admin, disputeOperations.getAdminDisputesByContractIdEvidence, async (ctx) => {
    requireSuperAdmin(ctx);
    await disputed(ctx.params.contract_id);
    const bundle = await buildEvidence(s.log, ctx.params.contract_id, s.clock.now());
    if (!bundle) throw notFound('Contract', 'contract_not_found');
    ctx.body = bundle;
  });
  mount(admin, disputeOperations.postAdminDisputesByContractIdResolve, async (ctx, input) => {
    const adminId = requireSuperAdmin(ctx);
    const body = input.body;
    const contractId = ctx.params.contract_id;
    const doc = await getContract(s.store, contractId);
    if (!doc) throw notFound('Contract', 'contract_not_found');
    const r = await resolveDisputeSigned(
      s.bus,
      s.serviceKey,
      s.log,
      contractId,
      { admin_id: adminId, outcome: body.outcome, note: body.note },
      commandContext(s, ctx, adminId),
    );
    await settled(s, r.position);
    const after = await getContract(s.store, contractId);
    if (!after || !r.state.ruling) throw new DomainError(409, 'contract_changed', 'The contract changed while the ruling was signed; repeat the request');
    ctx.body = { contract: contractView(after), ruling: r.state.ruling, public_key_url: `${s.config.publicBaseUrl}${SERVICE_KEY_PATH}` };
  });
  router.use(admin.routes());
}
