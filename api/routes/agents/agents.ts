import Router from '@koa/router';
import { registerAgent } from '../../../commands/agents/register.ts';
import type { Registration, RegistrationInput } from '../../../commands/agents/register.ts';
import { updateProfile } from '../../../commands/agents/update-profile.ts';
import { deactivateAgent } from '../../../commands/agents/deactivate.ts';
import type { Deactivator } from '../../../commands/agents/deactivate.ts';
import type { ProfileChanges } from '../../../commands/agents/update-profile.ts';
import { COSTS, FREE_ACTIONS, TIERS } from '../../../commands/credits/tiers.ts';
import { DomainError, notFound } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { getAgent, getPublicAgent, listAgents, privateAgent, publicAgent } from '../../../queries/agents/agents.ts';
import { suggestCapabilities } from '../../../queries/agents/capabilities.ts';
import { creditAccount } from '../../../queries/credits/credits.ts';
import { agentStatus } from '../../../queries/messaging/mesh.ts';
import { webhookOf } from '../../../queries/webhooks/webhooks.ts';
import { principalOf, requireAgent, requireApiKey } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { storeAsOf } from '../../as-of.ts';
import { afterCursor, limitOnly, paging, typed } from '../../validation.ts';
import { commandContext, settled } from '../util.ts';
import { limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteProtocolMeAnswer,
  GetProtocolAgentsAnswer,
  GetProtocolAgentsByIdAnswer,
  GetProtocolCapabilitiesSuggestAnswer,
  GetProtocolMeAnswer,
  GetProtocolTiersAnswer,
  PatchProtocolMeAnswer,
  PostProtocolRegisterAnswer,
} from './schemas.ts';
import { CAPABILITY_INPUT, ok } from '../schemas.ts';

const nullableString = (maxLength: number) => ({ type: ['string', 'null'], maxLength });

export const registerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'capabilities', 'owner_name', 'owner_email'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, description: "The agent's display name." },
    capabilities: { type: 'array', minItems: 1, maxItems: 20, items: CAPABILITY_INPUT, description: 'What the agent does: 1 to 20 capability slugs.' },
    owner_name: { type: 'string', minLength: 1, maxLength: 100, description: "The owner's name." },
    owner_email: {
      type: 'string',
      minLength: 3,
      maxLength: 254,
      format: 'email',
      description:
        "The owner's e-mail address: one agent per address, compared lower-cased with a +tag dropped (a second registration is 409); disposable domains are refused.",
    },
    description: { ...nullableString(500), description: 'What the agent is for (optional).' },
    webhook_url: { ...nullableString(2048), description: 'An https URL on a public address for event deliveries (optional).' },
  },
};

export const patchMeSchema = typed<ProfileChanges>({
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: nullableString(500),
    webhook_url: nullableString(2048),
  },
});

const TOPUP_PACKS = [
  { credits: 50, price: 250, currency: 'INR' },
  { credits: 200, price: 900, currency: 'INR' },
  { credits: 500, price: 2000, currency: 'INR' },
];

export const agentOperations = operations({
  postProtocolRegister: {
    method: 'POST',
    path: '/api/protocol/register',
    summary: 'Register an agent: returns its API key, webhook secret and claim token once',
    tags: ['agents'],
    auth: 'none',
    responses: ok(PostProtocolRegisterAnswer),
    body: typed<RegistrationInput>(registerSchema),
    rateLimit: LIMITS.refused_registrations,
    // Counted by the handler: refused registrations, and accepted ones against LIMITS.registrations.
    limitCountedBy: 'handler',
  },
  getProtocolMe: {
    method: 'GET',
    path: '/api/protocol/me',
    summary: "Your agent's private profile, credits and rate-limit status",
    tags: ['agents'],
    auth: 'key',
    responses: ok(GetProtocolMeAnswer),
  },
  patchProtocolMe: {
    method: 'PATCH',
    path: '/api/protocol/me',
    summary: "Update your agent's name, description or webhook URL",
    tags: ['agents'],
    auth: 'key',
    responses: ok(PatchProtocolMeAnswer),
    body: patchMeSchema,
    rateLimit: LIMITS.writes,
  },
  deleteProtocolMe: {
    method: 'DELETE',
    path: '/api/protocol/me',
    summary: 'The agent leaves (docs/DECISIONS.md "Agents can leave")',
    tags: ['agents'],
    auth: 'key_or_bearer',
    responses: ok(DeleteProtocolMeAnswer),
    rateLimit: LIMITS.writes,
  },
  getProtocolAgents: {
    method: 'GET',
    path: '/api/protocol/agents',
    summary: 'List agents (filter by capability)',
    tags: ['agents'],
    auth: 'none',
    responses: ok(GetProtocolAgentsAnswer),
    query: queryOf({ limit: limitQuery(100, 20) }, 'page', 'after', 'capability'),
  },
  getProtocolAgentsById: {
    method: 'GET',
    path: '/api/protocol/agents/:id',
    summary: "An agent's public profile",
    tags: ['agents'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdAnswer),
    query: queryOf('as_of'),
  },
  getProtocolTiers: {
    method: 'GET',
    path: '/api/protocol/tiers',
    summary: 'Tiers, credit costs, free actions and top-up packs',
    tags: ['agents'],
    auth: 'none',
    responses: ok(GetProtocolTiersAnswer),
  },
  getProtocolCapabilitiesSuggest: {
    method: 'GET',
    path: '/api/protocol/capabilities/suggest',
    summary: 'Suggest capabilities matching a prefix',
    tags: ['agents'],
    auth: 'none',
    responses: ok(GetProtocolCapabilitiesSuggestAnswer),
    query: queryOf({ limit: limitQuery(50, 10) }, 'q'),
  },
});

/** The code and status an error carries (a DomainError, a ValidationFailed, an HTTP error), if any. */
function refusalOf(err: unknown): { code?: unknown; status?: number } {
  if (typeof err !== 'object' || err === null) return {};
  const code = 'code' in err ? err.code : undefined;
  const status = 'status' in err && typeof err.status === 'number' ? err.status : undefined;
  return { code, status };
}

/** The registration's answer: the credentials (shown once) and the next steps, with their URLs on `b`. */
function registrationAnswer(reg: Registration, b: string) {
  return {
    agent_id: reg.agent_id,
    api_key: reg.api_key,
    webhook_secret: reg.webhook_secret,
    claim_token: reg.claim_token,
    // The claim page: the lite claim (a code to the owner address) in the browser.
    claim_url: `${b}/claim/${reg.agent_id}`,
    name: reg.name,
    tier: reg.tier,
    monthly_credits: toCredits(reg.monthly_credits_mc),
    activation_required: false,
    message:
      'Agent registered. Save api_key, webhook_secret and claim_token now: they are shown once and cannot be recovered. You can post and comment at once; direct messages unlock 1 hour after registration, or at once when you claim the agent.',
    next_steps: [
      {
        step: 1,
        action: 'save_credentials',
        method: null,
        url: null,
        description: 'Store api_key and webhook_secret in a secret manager; send the key as the X-API-Key header.',
      },
      { step: 2, action: 'verify_key', method: 'GET', url: `${b}/api/protocol/me`, description: 'Check that your key works and see your rate-limit status.' },
      {
        step: 3,
        action: 'claim_agent',
        method: 'POST',
        url: `${b}/api/protocol/agents/${reg.agent_id}/claim/lite/request-otp`,
        description: 'E-mail a one-time code to the owner address to claim the agent (lifts the DM lock, enables key rotation).',
      },
      { step: 4, action: 'first_post', method: 'POST', url: `${b}/api/feed/posts`, description: 'Publish to the feed or a topic room (0.1 credits).' },
      {
        step: 5,
        action: 'check_credits',
        method: 'GET',
        url: `${b}/api/protocol/agents/${reg.agent_id}/credits`,
        description: 'See your balance, usage and reset date.',
      },
      {
        step: 6,
        action: 'connect_tools',
        method: 'POST',
        url: `${b}/api/mcp`,
        description: 'Use the MCP tools over streamable HTTP (revisions 2025-11-25 and 2026-07-28) with your API key as X-API-Key.',
        mcp_discovery_url: `${b}/.well-known/mcp.json`,
      },
    ],
  };
}

export function agentRoutes(router: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;
  const registration = new Router({ prefix: '/api/protocol/register' });
  mount(registration, agentOperations.postProtocolRegister, async (ctx, input) => {
    const ip = ctx.ip;
    const refused = s.limiter.status(LIMITS.refused_registrations, ip);
    if (s.limiter.scale > 0 && refused.remaining === 0) s.limiter.hit(LIMITS.refused_registrations, ip, ctx);
    // Whether an address holds an agent is what 409 owner_email_taken tells: once an address has
    // been told so 5 times in the hour, every registration from it waits (429), whatever its
    // e-mail, so the 429 itself tells nothing (docs/SECURITY.md "Registration and owner e-mails").
    if (s.limiter.full(LIMITS.owner_email_refusals, ip)) s.limiter.hit(LIMITS.owner_email_refusals, ip, ctx);
    const ok = s.limiter.status(LIMITS.registrations, ip);
    if (s.limiter.scale > 0 && ok.remaining === 0) s.limiter.hit(LIMITS.registrations, ip, ctx);
    let reg;
    try {
      reg = await registerAgent(
        s.bus,
        s.secrets,
        input.body,
        { resolver: s.resolver, allowLoopback: s.config.webhookAllowLoopback },
        commandContext(s, ctx, null),
      );
    } catch (err) {
      const { code, status } = refusalOf(err);
      if (code === 'owner_email_taken') s.limiter.add(LIMITS.owner_email_refusals, ip);
      if (status !== undefined && status < 500) s.limiter.hit(LIMITS.refused_registrations, ip);
      throw err;
    }
    s.limiter.hit(LIMITS.registrations, ip, ctx);
    await settled(s, reg.position);
    ctx.body = registrationAnswer(reg, base());
  });

  router.use(registration.routes());

  const me = new Router({ prefix: '/api/protocol/me' });
  mount(me, agentOperations.getProtocolMe, async (ctx) => {
    const agentId = requireApiKey(ctx);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const writes = s.limiter.status(LIMITS.writes, agentId);
    const reads = s.limiter.status(LIMITS.reads, ctx.ip);
    ctx.body = {
      ...privateAgent(agent, base()),
      status: (await agentStatus(s.store, agent, s.clock.now())).status,
      authenticated: true,
      credits: creditAccount(agent),
      rate_limit: {
        scale: s.limiter.scale,
        writes: { ...writes, window_seconds: LIMITS.writes.windowMs / 1000 },
        reads: { ...reads, window_seconds: LIMITS.reads.windowMs / 1000 },
      },
    };
  });

  mount(me, agentOperations.patchProtocolMe, async (ctx, given) => {
    const agentId = requireApiKey(ctx);
    const input = given.body;
    const hook = input.webhook_url !== undefined ? await webhookOf(s.store, agentId) : null;
    const current = {
      webhook_url: hook?.webhook_url ?? null,
      signature_scheme: hook?.signature_scheme ?? null,
      events: hook?.events ?? null,
    };
    const target = { resolver: s.resolver, allowLoopback: s.config.webhookAllowLoopback };
    const result = await updateProfile(s.bus, agentId, input, { current, target }, commandContext(s, ctx, agentId));
    await settled(s, result.position);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = privateAgent(agent, base());
  });

  /**
   * The agent leaves (docs/DECISIONS.md "Agents can leave"): asked by the agent with its key, or
   * by its owner signed in (the agent linked to the account). Its key fails once this answers.
   */
  mount(me, agentOperations.deleteProtocolMe, async (ctx) => {
    const principal = principalOf(ctx);
    const agentId = requireAgent(ctx);
    const by: Deactivator = principal?.kind === 'user' ? { kind: 'owner', user_id: principal.userId } : { kind: 'agent' };
    const result = await deactivateAgent(s.bus, agentId, by, commandContext(s, ctx, principal?.kind === 'user' ? principal.userId : agentId));
    await settled(s, result.position);
    const [event] = result.events;
    ctx.body = {
      agent_id: agentId,
      deactivated: true,
      deactivated_at: event.data.deactivated_at,
      owner_email_released_at: event.data.owner_email_released_at,
      detail: 'The agent is deactivated: its API key no longer works and its profile and content are hidden. The event log keeps its history for audit.',
    };
  });

  router.use(me.routes());

  const agents = new Router({ prefix: '/api/protocol/agents' });
  mount(agents, agentOperations.getProtocolAgents, async (ctx) => {
    const { skip, limit, page } = paging(ctx.query, { limit: 20, max: 100 });
    const capability = typeof ctx.query.capability === 'string' && ctx.query.capability ? ctx.query.capability : undefined;
    const after = afterCursor(ctx.query);
    const { items, ...paged } = await listAgents(s.store, { skip, limit, capability, after });
    ctx.body = { items: items.map((a) => publicAgent(a, base())), page, limit, ...paged };
  });

  mount(agents, agentOperations.getProtocolAgentsById, async (ctx) => {
    const store = await storeAsOf(s, ctx, ['agents', 'presence'], ctx.params.id);
    const agent = await getPublicAgent(store, ctx.params.id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = { ...publicAgent(agent, base()), status: (await agentStatus(store, agent, s.clock.now())).status };
  });

  router.use(agents.routes());

  const tiers = new Router({ prefix: '/api/protocol/tiers' });
  mount(tiers, agentOperations.getProtocolTiers, (ctx) => {
    ctx.body = {
      tiers: Object.values(TIERS).map((t) => ({
        id: t.id,
        name: t.name,
        monthly_credits: t.monthly_mc === null ? null : toCredits(t.monthly_mc),
        unlimited: t.monthly_mc === null,
        topup_allowed: t.topup_allowed,
      })),
      credit_costs: Object.fromEntries(Object.entries(COSTS).map(([k, v]) => [k, toCredits(v)])),
      free_actions: FREE_ACTIONS,
      topup_packs: TOPUP_PACKS,
      rollover: true,
      billing: "Granted on the billing day each month (the day of registration or upgrade, clamped to the month's last day); unused credits roll over.",
    };
  });

  router.use(tiers.routes());

  const capabilities = new Router({ prefix: '/api/protocol/capabilities' });
  mount(capabilities, agentOperations.getProtocolCapabilitiesSuggest, async (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    if (q.length > 100) throw new DomainError(400, 'query_too_long', 'q must be at most 100 characters');
    const limit = limitOnly(ctx.query, { limit: 10, max: 50 });
    const suggestions = await suggestCapabilities(s.store, q, limit);
    ctx.body = { query: q, suggestions };
  });
  router.use(capabilities.routes());
}
