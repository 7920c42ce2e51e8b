import Router from '@koa/router';
import type { Context } from 'koa';
import { decidePeer, registerPeer } from '../../../commands/federation/peers.ts';
import { DomainError, ValidationFailed } from '../../../events/kernel/errors.ts';
import { bareHost, isLoopbackAddress } from '../../../commands/agents/webhook-url.ts';
import { RefusedTarget } from '../../../commands/webhooks/target.ts';
import { fetchPublicText } from '../../link-preview.ts';
import { federatedAgents, listPeers } from '../../../queries/federation/federation.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import type { LimitRule } from '../../rate-limit.ts';
import { requireSuperAdmin } from '../humans/matches.ts';
import { commandContext, settled } from '../util.ts';
import { cursorPaging } from '../social/paging.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAdminFederationAnswer,
  GetFederationAgentsAnswer,
  PostAdminFederationByPeerIdApproveAnswer,
  PostAdminFederationByPeerIdRejectAnswer,
  PostFederationRegisterAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/** Registration requests per client address (no auth). */
const FEDERATION_LIMIT: LimitRule = { name: 'federation_registrations', points: 10, windowMs: 3600_000, per: 'address' };

const registerSchema = typed<{ name: string; base_url: string; contact_email: string; public_key?: string | null }>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'base_url', 'contact_email'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    base_url: { type: 'string', minLength: 9, maxLength: 300, pattern: '^https?://', description: "The network's https origin (a path is ignored)" },
    contact_email: { type: 'string', format: 'email', maxLength: 254 },
    public_key: { type: ['string', 'null'], maxLength: 200 },
  },
});

function peerView(d: Record<string, unknown>) {
  return { peer_id: d.peer_id, name: d.name, base_url: d.base_url, status: d.status, registered_at: d.registered_at, decided_at: d.decided_at ?? null };
}

/** Federation (shared DECISIONS): peer registration and its review, and the portable agent directory. */
export const federationOperations = operations({
  postFederationRegister: {
    method: 'POST',
    path: '/api/federation/register',
    summary: 'Register a peer network for federation',
    tags: ['federation'],
    auth: 'none',
    description:
      'The origin of base_url must prove it is the caller\'s: it serves the registration\'s proof token at /.well-known/agent-network-federation.txt (403 peer_unverified gives the token and the URL). docs/SOCIAL.md "Federation".',
    responses: ok(PostFederationRegisterAnswer),
    body: registerSchema,
    rateLimit: FEDERATION_LIMIT,
    errors: [403, 409],
  },
  getFederationAgents: {
    method: 'GET',
    path: '/api/federation/agents',
    summary: 'Agents shared with federated peers',
    tags: ['federation'],
    auth: 'none',
    responses: ok(GetFederationAgentsAnswer),
    query: queryOf('cursor', { limit: limitQuery(100, 50) }),
  },
  getAdminFederation: {
    method: 'GET',
    path: '/api/admin/federation',
    summary: 'Federation peers (super admin)',
    tags: ['federation'],
    auth: 'admin',
    responses: ok(GetAdminFederationAnswer),
    query: queryOf('status'),
  },
  postAdminFederationByPeerIdApprove: {
    method: 'POST',
    path: '/api/admin/federation/:peer_id/approve',
    summary: 'Approve a peer (super admin)',
    tags: ['federation'],
    auth: 'admin',
    responses: ok(PostAdminFederationByPeerIdApproveAnswer),
  },
  postAdminFederationByPeerIdReject: {
    method: 'POST',
    path: '/api/admin/federation/:peer_id/reject',
    summary: 'Reject a peer (super admin)',
    tags: ['federation'],
    auth: 'admin',
    responses: ok(PostAdminFederationByPeerIdRejectAnswer),
  },
});

/** The origin of a peer's base URL: https only (plain http to a loopback address where WEBHOOK_ALLOW_LOOPBACK allows it, in tests). */
function peerOrigin(raw: string, allowLoopback: boolean): string {
  const refused = () => new ValidationFailed([{ loc: ['body', 'base_url'], msg: 'value is not a valid https URL', type: 'value_error.url' }]);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused();
  }
  if (url.username || url.password) throw refused();
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback && isLoopbackAddress(bareHost(url)))) throw refused();
  return url.origin;
}

/** Where a peer publishes its proof of control, under its own origin. */
export const PROOF_PATH = '/.well-known/agent-network-federation.txt';

/**
 * The proof token of a registration: a keyed hash of the origin with the contact and key it is
 * registered with, so a token published for one registration proves no other (someone who sees
 * the partner's file cannot register the origin with their own contact).
 */
export function proofToken(s: Services, input: { base_url: string; contact_email: string; public_key: string | null }): string {
  return `anfed_${s.secrets.hash(`federation-proof\n${input.base_url}\n${input.contact_email}\n${input.public_key ?? ''}`).slice(0, 40)}`;
}

/**
 * Proof of control of the origin before it is locked as a pending peer: the origin must serve the
 * registration's token at PROOF_PATH (text/plain, a line of its own), fetched through the webhook
 * SSRF guard (every address the name resolves to public, the connection pinned to it, no
 * redirect followed, 4 KB, 5 s). Otherwise 403 `peer_unverified`, carrying the token and the URL
 * to publish it at: the caller publishes it and registers again.
 */
async function requireProofOfControl(s: Services, input: { base_url: string; contact_email: string; public_key: string | null }): Promise<void> {
  const token = proofToken(s, input);
  const proofUrl = `${input.base_url}${PROOF_PATH}`;
  let text: string | null = null;
  let why = 'it did not answer 200 with text/plain';
  try {
    text = await fetchPublicText(proofUrl, {
      resolver: s.resolver,
      allowLoopback: s.config.webhookAllowLoopback,
      accept: 'text/plain',
      type: /^text\/plain\b/i,
    });
  } catch (err) {
    why = err instanceof RefusedTarget ? `the address is not public (${err.message})` : 'it could not be reached';
  }
  if (text !== null && text.split(/\r?\n/).some((line) => line.trim() === token)) return;
  if (text !== null) why = 'the token is not among its lines';
  throw new DomainError(
    403,
    'peer_unverified',
    `Prove control of ${input.base_url}: serve the proof_token as a line of text/plain at proof_url, then register again (${why})`,
    {
      proof_url: proofUrl,
      proof_token: token,
    },
  );
}

export function federationRoutes(router: Router, s: Services): void {
  const federation = new Router({ prefix: '/api/federation' });
  mount(federation, federationOperations.postFederationRegister, async (ctx, given) => {
    const body = given.body;
    const origin = peerOrigin(body.base_url, s.config.webhookAllowLoopback);
    const input = { name: body.name.trim(), base_url: origin, contact_email: body.contact_email.toLowerCase(), public_key: body.public_key ?? null };
    await requireProofOfControl(s, input);
    const r = await registerPeer(s.bus, input, commandContext(s, ctx, null));
    await settled(s, r.position);
    const d = r.events[0]?.data ?? r.state.registered;
    ctx.body = { peer_id: d?.peer_id, name: d?.name, base_url: d?.base_url, status: 'pending', registered_at: d?.registered_at };
  });
  mount(federation, federationOperations.getFederationAgents, async (ctx) => {
    const page = await federatedAgents(s.store, s.config.publicBaseUrl, cursorPaging(ctx.query, { limit: 50, max: 100 }));
    ctx.body = {
      network: { name: 'agent-network', base_url: s.config.publicBaseUrl },
      agents: page.items,
      next_cursor: page.next_cursor,
      has_more: page.has_more,
    };
  });
  router.use(federation.routes());

  const admin = new Router({ prefix: '/api/admin/federation' });
  mount(admin, federationOperations.getAdminFederation, async (ctx) => {
    requireSuperAdmin(ctx);
    const status = typeof ctx.query.status === 'string' && ctx.query.status ? ctx.query.status : undefined;
    const peers = await listPeers(s.store, status, 100);
    ctx.body = { peers: peers.map((p) => ({ ...peerView(p), contact_email: p.contact_email, public_key: p.public_key ?? null })) };
  });
  const decide = (status: 'approved' | 'rejected') => async (ctx: Context) => {
    const adminId = requireSuperAdmin(ctx);
    const r = await decidePeer(s.bus, ctx.params.peer_id, status, adminId, commandContext(s, ctx, adminId));
    await settled(s, r.position);
    ctx.body = { peer_id: ctx.params.peer_id, status };
  };
  mount(admin, federationOperations.postAdminFederationByPeerIdApprove, decide('approved'));
  mount(admin, federationOperations.postAdminFederationByPeerIdReject, decide('rejected'));
  router.use(admin.routes());
}
