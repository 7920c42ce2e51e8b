import type { Context } from 'koa';
import type Router from '@koa/router';
import { planOf } from '../../../commands/credits/orders.ts';
import { eliteAgentOf } from '../../../commands/humans/ownership.ts';
import { OTP_MINUTES } from '../../../commands/humans/otp.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { idParam, mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { formField, formProblem, page, requireMember, doneTo, webRouter } from '../../web/member.ts';
import { FORM, formOf, MEMBER_FORM, MEMBER_PAGE } from '../../web/page-operations.ts';
import { AUTH_LIMITS } from '../humans/auth.ts';
import { claimWithCode, eliteKeyOf, ownershipSchemas, regenerateEliteKeyOf, requestClaimCode, rotateAgentKey } from '../humans/ownership.ts';
import { agentCard, ownedAgent } from './account.ts';

const agentId = { id: idParam('The agent (agent_id); one of the signed-in member’s agents') };
const claimToken = { type: 'string', maxLength: 200 };

/** The member's agents in the browser: claim one, its page, a new key, the in-app agent's key (docs/WEB.md). */
export const myAgentOperations = operations({
  getAppClaim: {
    method: 'GET',
    path: '/app/claim',
    summary: 'Claim an agent: its claim token',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppClaim: {
    method: 'POST',
    path: '/app/claim',
    summary: "Claim an agent, step one: e-mail a code to the agent's owner address (the command of POST /api/protocol/claim/request-otp)",
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ claim_token: claimToken }, ['claim_token']),
    rateLimit: AUTH_LIMITS.auth,
    responses: MEMBER_FORM,
  },
  postAppClaimVerify: {
    method: 'POST',
    path: '/app/claim/verify',
    summary: 'Claim an agent, step two: the mailed code links it to the member (the command of POST /api/protocol/claim)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ claim_token: claimToken, otp: { type: 'string', maxLength: 12 } }, ['claim_token', 'otp']),
    rateLimit: AUTH_LIMITS.auth,
    responses: MEMBER_FORM,
  },
  getAppAgentsById: {
    method: 'GET',
    path: '/app/agents/:id',
    summary: "One of the member's agents: status, credits, tier and its key",
    tags: ['app'],
    auth: 'member',
    params: agentId,
    responses: MEMBER_PAGE,
  },
  postAppAgentsByIdRotateKey: {
    method: 'POST',
    path: '/app/agents/:id/rotate-key',
    summary: "A new API key for one of the member's agents, shown once (the command of POST /api/protocol/agents/:id/rotate-key)",
    tags: ['app'],
    auth: 'member',
    params: agentId,
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  getAppEliteKey: {
    method: 'GET',
    path: '/app/elite-key',
    summary: "The member's in-app (Pro or Elite) agent and its key",
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  postAppEliteKey: {
    method: 'POST',
    path: '/app/elite-key',
    summary: 'Provision the in-app agent of a paid plan, its key shown once (the command of GET /api/protocol/elite-key)',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  postAppEliteKeyRegenerate: {
    method: 'POST',
    path: '/app/elite-key/regenerate',
    summary: "A new key for the member's in-app agent, shown once (the command of POST /api/protocol/elite-key/regenerate)",
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
});

export function myAgentRoutes(router: Router, s: Services): void {
  const web = webRouter(s);

  /** A new key, on the answer to the post itself (never in a redirect or a cookie): shown once. */
  const keyPage = (ctx: Context, data: { agentName: string; agentId: string; apiKey: string; back: string }) =>
    page(s, ctx, 'app/new-key', { title: 'Your new key', ...data });

  const claimPage = (ctx: Context, data: { problem?: unknown }, status = 200) =>
    page(s, ctx, 'app/claim', { title: 'Claim an agent', problem: null, ...data }, status);
  const claimCodePage = (ctx: Context, data: { claimToken: string; message: string; problem?: unknown }, status = 200) =>
    page(s, ctx, 'app/claim-code', { title: 'Enter the claim code', problem: null, minutes: OTP_MINUTES, ...data }, status);

  mount(web, myAgentOperations.getAppClaim, async (ctx) => {
    await requireMember(s, ctx);
    await claimPage(ctx, {});
  });

  mount(web, myAgentOperations.postAppClaim, async (ctx) => {
    await requireMember(s, ctx);
    s.limiter.hit(AUTH_LIMITS.auth, ctx.ip, ctx);
    const token = formField(ctx, 'claim_token').trim();
    let sent: { message: string };
    try {
      const input = validate<{ claim_token: string }>(ownershipSchemas.claimToken, { claim_token: token });
      sent = await requestClaimCode(s, ctx, input.claim_token);
    } catch (err) {
      const problem = formProblem(err);
      if (problem.code === 'invalid_claim_token') problem.next = 'Copy the claim token again from the agent’s registration answer (it starts with clm_).';
      return claimPage(ctx, { problem }, problem.status);
    }
    // The token stays out of the URL: it travels in the next form's hidden field.
    await claimCodePage(ctx, { claimToken: token, message: sent.message });
  });

  mount(web, myAgentOperations.postAppClaimVerify, async (ctx) => {
    const member = await requireMember(s, ctx);
    s.limiter.hit(AUTH_LIMITS.auth, ctx.ip, ctx);
    const token = formField(ctx, 'claim_token').trim();
    let agent;
    try {
      const input = validate<{ claim_token: string; otp: string }>(ownershipSchemas.claim, { claim_token: token, otp: formField(ctx, 'otp').trim() });
      agent = await claimWithCode(s, ctx, member.userId, input.claim_token, input.otp);
    } catch (err) {
      const problem = formProblem(err);
      if (problem.code === 'invalid_otp') problem.next = 'Check the code in the e-mail to the owner address and type it again.';
      return claimCodePage(ctx, { claimToken: token, message: '', problem }, problem.status);
    }
    doneTo(ctx, `/app/agents/${encodeURIComponent(agent._id)}`, `${String(agent.name)} is now yours.`);
  });

  mount(web, myAgentOperations.getAppAgentsById, async (ctx) => {
    const member = await requireMember(s, ctx);
    const agent = agentCard(s, await ownedAgent(s, member, ctx.params.id));
    await page(s, ctx, 'app/agent', { title: String(agent.name), agent });
  });

  mount(web, myAgentOperations.postAppAgentsByIdRotateKey, async (ctx) => {
    const member = await requireMember(s, ctx);
    const agent = await ownedAgent(s, member, ctx.params.id);
    const apiKey = await rotateAgentKey(s, ctx, member.userId, agent._id);
    await keyPage(ctx, { agentName: String(agent.name), agentId: agent._id, apiKey, back: `/app/agents/${encodeURIComponent(agent._id)}` });
  });

  mount(web, myAgentOperations.getAppEliteKey, async (ctx) => {
    const member = await requireMember(s, ctx);
    const id = await eliteAgentOf(s.bus, member.userId);
    const plan = await planOf(s.bus, member.userId, s.clock.now(), async () => id);
    const agent = id ? await getAgent(s.store, id) : null;
    await page(s, ctx, 'app/elite-key', { title: 'Your in-app agent', plan, agent: agent ? agentCard(s, agent) : null });
  });

  mount(web, myAgentOperations.postAppEliteKey, async (ctx) => {
    const member = await requireMember(s, ctx);
    const r = await eliteKeyOf(s, ctx, member.userId);
    if (!r.api_key) return doneTo(ctx, '/app/elite-key', 'Your in-app agent already has a key. Make a new one below if you lost it.');
    const agent = await getAgent(s.store, r.agent_id);
    await keyPage(ctx, { agentName: String(agent?.name ?? 'Your in-app agent'), agentId: r.agent_id, apiKey: r.api_key, back: '/app/elite-key' });
  });

  mount(web, myAgentOperations.postAppEliteKeyRegenerate, async (ctx) => {
    const member = await requireMember(s, ctx);
    const r = await regenerateEliteKeyOf(s, ctx, member.userId);
    const agent = await getAgent(s.store, r.agent_id);
    await keyPage(ctx, { agentName: String(agent?.name ?? 'Your in-app agent'), agentId: r.agent_id, apiKey: r.api_key, back: '/app/elite-key' });
  });

  router.use(web.routes());
}
