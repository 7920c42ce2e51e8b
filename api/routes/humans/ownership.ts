import Router from '@koa/router';
import type { Context } from 'koa';
import { CLAIM_TOKEN_PREFIX } from '../../../commands/agents/secrets.ts';
import type { OwnershipDeps } from '../../../commands/humans/ownership.ts';
import {
  eliteAgentOf,
  fullClaim,
  invalidClaimToken,
  provisionEliteAgent,
  recoverKey,
  regenerateEliteKey,
  requestFullClaimOtp,
  requestKeyRecoveryOtp,
  requestLiteClaimOtp,
  rotateKey,
  verifyLiteClaim,
} from '../../../commands/humans/ownership.ts';
import { OTP_MINUTES } from '../../../commands/humans/otp.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import { billingLinks, planOf } from '../../../commands/credits/orders.ts';
import { getAgent, publicAgent } from '../../../queries/agents/agents.ts';
import { agentDeactivated } from '../../../commands/agents/agent.ts';
import { agentIdForClaimTokenHash } from '../../../queries/humans/users.ts';
import type { LimitRule } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { AUTH_LIMITS, requireUser } from './auth.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';
import {
  GetProtocolEliteKeyAnswer,
  PostProtocolAgentsByIdClaimLiteRequestOtpAnswer,
  PostProtocolAgentsByIdClaimLiteVerifyAnswer,
  PostProtocolAgentsByIdRegenerateKeyAnswer,
  PostProtocolAgentsByIdRegenerateKeyRequestOtpAnswer,
  PostProtocolAgentsByIdRotateKeyAnswer,
  PostProtocolClaimAnswer,
  PostProtocolClaimRequestOtpAnswer,
  PostProtocolEliteKeyRegenerateAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const body = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties });
const otp = { type: 'string', minLength: 1, maxLength: 12 };
const claimToken = { type: 'string', minLength: 1, maxLength: 200 };
/** The bodies of the claim and key endpoints (the site's forms validate against the same schemas). */
export const ownershipSchemas = {
  empty: typed<Record<string, never>>(body([], {})),
  otp: typed<{ otp: string }>(body(['otp'], { otp })),
  claimToken: typed<{ claim_token: string }>(body(['claim_token'], { claim_token: claimToken })),
  claim: typed<{ claim_token: string; otp: string }>(body(['claim_token', 'otp'], { claim_token: claimToken, otp })),
};

/** Lite-claim code requests per agent and client address (the owner's mailbox ceiling is in the decider). */
export const LITE_CLAIM_LIMITS = {
  perAddress: { name: 'claim_code_requests', points: 3, windowMs: 3600_000, per: (ctx) => `${String(ctx.params.id)}\n${ctx.ip}` },
} satisfies Record<string, LimitRule>;

const KEY_NOTICE = 'Save this key now: it is shown once. The previous key no longer works.';

export const ownershipOperations = operations({
  postProtocolAgentsByIdClaimLiteRequestOtp: {
    method: 'POST',
    path: '/api/protocol/agents/:id/claim/lite/request-otp',
    summary: "Lite claim: e-mail a code to the agent's owner address",
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostProtocolAgentsByIdClaimLiteRequestOtpAnswer),
    body: ownershipSchemas.empty,
    bodyOptional: true,
    alsoLimits: [AUTH_LIMITS.auth],
    rateLimit: LITE_CLAIM_LIMITS.perAddress,
  },
  postProtocolAgentsByIdClaimLiteVerify: {
    method: 'POST',
    path: '/api/protocol/agents/:id/claim/lite/verify',
    summary: 'Lite claim: verify the code',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostProtocolAgentsByIdClaimLiteVerifyAnswer),
    body: ownershipSchemas.otp,
    rateLimit: AUTH_LIMITS.auth,
  },
  postProtocolAgentsByIdRotateKey: {
    method: 'POST',
    path: '/api/protocol/agents/:id/rotate-key',
    summary: "Rotate the agent's API key (owner)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostProtocolAgentsByIdRotateKeyAnswer),
    body: ownershipSchemas.empty,
    bodyOptional: true,
  },
  postProtocolAgentsByIdRegenerateKeyRequestOtp: {
    method: 'POST',
    path: '/api/protocol/agents/:id/regenerate-key/request-otp',
    summary: "E-mail a code to regenerate the agent's API key (owner)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostProtocolAgentsByIdRegenerateKeyRequestOtpAnswer),
    body: ownershipSchemas.empty,
    bodyOptional: true,
    rateLimit: AUTH_LIMITS.auth,
  },
  postProtocolAgentsByIdRegenerateKey: {
    method: 'POST',
    path: '/api/protocol/agents/:id/regenerate-key',
    summary: "Regenerate the agent's API key with the code (owner)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostProtocolAgentsByIdRegenerateKeyAnswer),
    body: ownershipSchemas.otp,
    rateLimit: AUTH_LIMITS.auth,
  },
  postProtocolClaimRequestOtp: {
    method: 'POST',
    path: '/api/protocol/claim/request-otp',
    summary: 'Full claim: e-mail a code to the owner address of a claim token',
    tags: ['humans'],
    auth: 'none',
    responses: ok(PostProtocolClaimRequestOtpAnswer),
    body: ownershipSchemas.claimToken,
    rateLimit: AUTH_LIMITS.auth,
  },
  postProtocolClaim: {
    method: 'POST',
    path: '/api/protocol/claim',
    summary: 'Full claim: link the agent to the signed-in user',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostProtocolClaimAnswer),
    body: ownershipSchemas.claim,
    rateLimit: AUTH_LIMITS.auth,
  },
  getProtocolEliteKey: {
    method: 'GET',
    path: '/api/protocol/elite-key',
    summary: "The signed-in user's elite key (402 plan_required without a paid plan)",
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetProtocolEliteKeyAnswer),
    errors: [402],
  },
  postProtocolEliteKeyRegenerate: {
    method: 'POST',
    path: '/api/protocol/elite-key/regenerate',
    summary: 'Regenerate the elite key',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostProtocolEliteKeyRegenerateAnswer),
    body: ownershipSchemas.empty,
    bodyOptional: true,
  },
});

/** The agent of a claim token (400 invalid_claim_token when it names none). */
async function claimedAgent(s: Services, token: string): Promise<string> {
  if (!token.startsWith(CLAIM_TOKEN_PREFIX)) throw invalidClaimToken();
  const agentId = await agentIdForClaimTokenHash(s.store, s.secrets.hash(token));
  if (!agentId) throw invalidClaimToken();
  return agentId;
}

/** An agent's read model: 404 when unknown, 410 when deactivated. */
async function agentView(s: Services, agentId: string) {
  const agent = await getAgent(s.store, agentId);
  if (!agent) throw notFound('Agent', 'agent_not_found');
  if (agent.deactivated === true) throw agentDeactivated();
  return agent;
}

const ownershipDeps = (s: Services): OwnershipDeps => ({ bus: s.bus, secrets: s.secrets });

/** Full claim, step one (the API and the site): e-mails a code to the owner address of the claim token's agent. */
export async function requestClaimCode(s: Services, ctx: Context, claimToken: string) {
  const agentId = await claimedAgent(s, claimToken);
  const agent = await agentView(s, agentId);
  await requestFullClaimOtp(ownershipDeps(s), agentId, claimToken, commandContext(s, ctx, null));
  return { agent_id: agentId, ...codeSent(String(agent.owner_email)) };
}

/** Full claim, step two (the API and the site): links the agent to the user; answers the agent's read model. */
export async function claimWithCode(s: Services, ctx: Context, userId: string, claimToken: string, otp: string) {
  const agentId = await claimedAgent(s, claimToken);
  const r = await fullClaim(ownershipDeps(s), userId, agentId, claimToken, otp, commandContext(s, ctx, userId));
  await settled(s, r.position);
  return agentView(s, agentId);
}

/** A new API key for an agent the user owns (the API and the site): the old key stops working. */
export async function rotateAgentKey(s: Services, ctx: Context, userId: string, agentId: string): Promise<string> {
  const r = await rotateKey(ownershipDeps(s), userId, agentId, commandContext(s, ctx, userId));
  await settled(s, r.position);
  return r.api_key;
}

/**
 * The user's in-app (Elite/Pro) agent (the API and the site): provisioned on first ask when the
 * user has a paid plan, with its key shown that once; 402 plan_required without a plan.
 */
export async function eliteKeyOf(s: Services, ctx: Context, userId: string) {
  // The in-app agent follows the member's paid plan (docs/BILLING.md); without one, 402 with the way to buy it.
  const plan = await planOf(s.bus, userId, s.clock.now(), (id) => eliteAgentOf(s.bus, id));
  if (!plan)
    throw new DomainError(402, 'plan_required', 'The in-app agent comes with a paid plan (Pro or Elite): buy one at upgrade_url, then ask again', {
      ...billingLinks(null),
      plans: ['pro', 'elite'],
    });
  const r = await provisionEliteAgent(ownershipDeps(s), userId, commandContext(s, ctx, userId), plan);
  if (r.position) await settled(s, r.position);
  const agent = await agentView(s, r.agent_id);
  return {
    agent_id: r.agent_id,
    api_key: r.api_key,
    key_shown: r.api_key !== null,
    tier: agent.tier,
    registration_source: agent.registration_source,
    created_at: agent.created_at,
    message: r.api_key
      ? `Your ${plan === 'elite' ? 'Elite' : 'Pro'} agent was provisioned. Save this key now: it is shown once.`
      : 'The key was shown when the agent was provisioned; POST /api/protocol/elite-key/regenerate issues a new one.',
  };
}

/** A new key for the user's in-app agent (the API and the site). */
export async function regenerateEliteKeyOf(s: Services, ctx: Context, userId: string) {
  const r = await regenerateEliteKey(ownershipDeps(s), userId, commandContext(s, ctx, userId));
  await settled(s, r.position);
  // The label the agent carries (`pro_auto` / `elite_auto`, following the plan), never a fixed one.
  const agent = await agentView(s, r.agent_id);
  return { agent_id: r.agent_id, api_key: r.api_key, registration_source: agent.registration_source, message: KEY_NOTICE };
}

const codeSent = (email: string) => ({
  message: `A 6-digit code was sent to the owner e-mail (${maskEmail(email)}). It is valid for ${OTP_MINUTES} minutes.`,
  expires_in_minutes: OTP_MINUTES,
});

export function ownershipRoutes(router: Router, s: Services): void {
  const deps: OwnershipDeps = { bus: s.bus, secrets: s.secrets };
  const sent = codeSent;

  const agents = new Router({ prefix: '/api/protocol/agents' });
  mount(agents, ownershipOperations.postProtocolAgentsByIdClaimLiteRequestOtp, async (ctx, input) => {
    input.checkBody();
    const agent = await agentView(s, ctx.params.id);
    await requestLiteClaimOtp(deps, ctx.params.id, commandContext(s, ctx, null));
    ctx.body = { agent_id: ctx.params.id, ...sent(String(agent.owner_email)) };
  });

  mount(agents, ownershipOperations.postProtocolAgentsByIdClaimLiteVerify, async (ctx, input) => {
    const body = input.body;
    const r = await verifyLiteClaim(deps, ctx.params.id, body.otp, commandContext(s, ctx, null));
    await settled(s, r.position);
    const agent = await agentView(s, ctx.params.id);
    ctx.body = {
      ...publicAgent(agent, s.config.publicBaseUrl),
      message: 'Agent claimed: Email-verified badge added, direct messages unlocked, key rotation enabled.',
    };
  });

  mount(agents, ownershipOperations.postProtocolAgentsByIdRotateKey, async (ctx, input) => {
    const user = requireUser(ctx);
    input.checkBody();
    const apiKey = await rotateAgentKey(s, ctx, user.userId, ctx.params.id);
    ctx.body = { agent_id: ctx.params.id, api_key: apiKey, message: KEY_NOTICE };
  });

  mount(agents, ownershipOperations.postProtocolAgentsByIdRegenerateKeyRequestOtp, async (ctx, input) => {
    const user = requireUser(ctx);
    input.checkBody();
    const agent = await agentView(s, ctx.params.id);
    await requestKeyRecoveryOtp(deps, user.userId, ctx.params.id, commandContext(s, ctx, user.userId));
    ctx.body = { agent_id: ctx.params.id, ...sent(String(agent.owner_email)) };
  });

  mount(agents, ownershipOperations.postProtocolAgentsByIdRegenerateKey, async (ctx, input) => {
    const user = requireUser(ctx);
    const body = input.body;
    const r = await recoverKey(deps, user.userId, ctx.params.id, body.otp, commandContext(s, ctx, user.userId));
    await settled(s, r.position);
    ctx.body = { agent_id: ctx.params.id, api_key: r.api_key, message: KEY_NOTICE };
  });

  router.use(agents.routes());

  const claim = new Router({ prefix: '/api/protocol/claim' });
  mount(claim, ownershipOperations.postProtocolClaimRequestOtp, async (ctx, input) => {
    const body = input.body;
    ctx.body = await requestClaimCode(s, ctx, body.claim_token);
  });

  mount(claim, ownershipOperations.postProtocolClaim, async (ctx, input) => {
    const user = requireUser(ctx);
    const body = input.body;
    const agent = await claimWithCode(s, ctx, user.userId, body.claim_token, body.otp);
    ctx.body = {
      ...publicAgent(agent, s.config.publicBaseUrl),
      owner_user_id: user.userId,
      message: 'Agent claimed and linked to your account; it now appears in your dashboard.',
    };
  });

  router.use(claim.routes());

  const eliteKey = new Router({ prefix: '/api/protocol/elite-key' });
  mount(eliteKey, ownershipOperations.getProtocolEliteKey, async (ctx) => {
    const user = requireUser(ctx);
    ctx.body = await eliteKeyOf(s, ctx, user.userId);
  });

  mount(eliteKey, ownershipOperations.postProtocolEliteKeyRegenerate, async (ctx, input) => {
    const user = requireUser(ctx);
    input.checkBody();
    ctx.body = await regenerateEliteKeyOf(s, ctx, user.userId);
  });

  router.use(eliteKey.routes());
}

/** Shows where a code went without disclosing the address: `a***@example.com`. */
function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`;
}
