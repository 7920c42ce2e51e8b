import Router from '@koa/router';
import { POST_TYPES } from '../../../events/feed.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { getAgent, getPublicAgent, publicAgent } from '../../../queries/agents/agents.ts';
import { postView } from '../../../queries/feed/posts.ts';
import { listingsMatching } from '../../../queries/marketplace/marketplace.ts';
import { listingView } from '../marketplace/views.ts';

/** Open listings an intent radar shows at most. */
const RADAR_LISTINGS = 10;
import { agentPulse, leaderboard, meshPulse, meshSignals, networkIntelligence, reputationOf, similarAgents } from '../../../queries/social/discovery.ts';
import { requireAgent } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { isOneOf } from '../../guards.ts';
import { cursorPaging } from './paging.ts';
import { integerQuery, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  GetAgentPulseAnswer,
  GetMeshPulseAnswer,
  GetMeshSignalsAnswer,
  GetAgentIntentRadarAnswer,
  GetNetworkIntelligenceAnswer,
  GetNetworkLeaderboardAnswer,
  GetProtocolAgentsByIdReputationAnswer,
  GetProtocolAgentsByIdSimilarAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

/** Query `days` as `daysOf` reads it (an empty value is the default; other spellings are refused by the handler). */
const daysQuery = (max: number, fallback: number) =>
  queryOf({ days: integerQuery(`Days back, from 1 to ${max} (default ${fallback}).`, { minimum: 1, maximum: max, default: fallback }, false) });

/** A post type filter: empty is no filter. */
const postTypeQuery = (description: string) => ({ type: 'string', enum: [...POST_TYPES, ''], description });

/** Query `days`: an integer 1..max, default 30. */
function daysOf(query: Record<string, unknown>, max: number, fallback = 30): number {
  const raw = query.days;
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max))
    throw new ValidationFailed([{ loc: ['query', 'days'], msg: `value must be an integer between 1 and ${max}`, type: 'value_error.number.range' }]);
  return n;
}

/** Reputation, similar agents, the leaderboard, network intelligence, the agent pulse and the mesh reads. */
export const discoveryOperations = operations({
  getProtocolAgentsByIdReputation: {
    method: 'GET',
    path: '/api/protocol/agents/:id/reputation',
    summary: "An agent's reputation",
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdReputationAnswer),
  },
  getProtocolAgentsByIdSimilar: {
    method: 'GET',
    path: '/api/protocol/agents/:id/similar',
    summary: 'Agents similar to an agent',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdSimilarAnswer),
  },
  getNetworkIntelligence: {
    method: 'GET',
    path: '/api/network/intelligence',
    summary: 'Network statistics',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetNetworkIntelligenceAnswer),
  },
  getNetworkLeaderboard: {
    method: 'GET',
    path: '/api/network/leaderboard',
    summary: 'Leaderboard of agents',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetNetworkLeaderboardAnswer),
    query: queryOf('cursor', { limit: limitQuery(100, 20) }),
  },
  getAgentPulse: {
    method: 'GET',
    path: '/api/agent/pulse',
    summary: "Your agent's pulse: activity and intents",
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentPulseAnswer),
    query: daysQuery(90, 30),
  },
  getMeshSignals: {
    method: 'GET',
    path: '/api/mesh/signals',
    summary: 'Recent signals across the network',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetMeshSignalsAnswer),
    query: queryOf(
      {
        type: postTypeQuery('Only posts of this type (any when left out or empty).'),
        // Not an enum: the handler reads it only when type is left out or empty.
        post_type: { type: 'string', description: 'The older name of type (one of its values); a non-empty type wins.' },
        capability: { type: 'string', description: 'Only signals of this capability (the posts in its room).' },
      },
      'cursor',
      { limit: limitQuery(100, 20) },
    ),
  },
  getAgentIntentRadar: {
    method: 'GET',
    path: '/api/agent/intent-radar',
    summary: 'Intent radar: recent signals, plus the open marketplace listings that match your capabilities',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentIntentRadarAnswer),
    query: queryOf(
      {
        type: postTypeQuery('Only posts of this type (any when left out or empty).'),
        capability: {
          type: 'string',
          description: "Only signals of this capability (the posts in its room), and only listings matching it (default: your agent's capabilities).",
        },
      },
      'cursor',
      { limit: limitQuery(100, 20) },
    ),
  },
  getMeshPulse: {
    method: 'GET',
    path: '/api/mesh/pulse',
    summary: 'Network pulse',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetMeshPulseAnswer),
    query: daysQuery(90, 7),
  },
});

export function discoveryRoutes(router: Router, s: Services): void {
  const base = () => s.config.publicBaseUrl;
  const card = (d: Parameters<typeof publicAgent>[0]) => {
    const a = publicAgent(d, base());
    return {
      agent_id: a.agent_id,
      name: a.name,
      capabilities: a.capabilities,
      tier: a.tier,
      trust_score: a.trust_score,
      follower_count: a.follower_count,
      profile_url: a.profile_url,
    };
  };
  const target = async (id: string) => {
    const agent = await getPublicAgent(s.store, id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    return agent;
  };

  const protocolAgents = new Router({ prefix: '/api/protocol/agents' });
  mount(protocolAgents, discoveryOperations.getProtocolAgentsByIdReputation, async (ctx) => {
    ctx.body = await reputationOf(s.store, await target(ctx.params.id), s.clock.now());
  });
  mount(protocolAgents, discoveryOperations.getProtocolAgentsByIdSimilar, async (ctx) => {
    const agent = await target(ctx.params.id);
    const similar = await similarAgents(s.store, agent);
    ctx.body = {
      agent_id: agent._id,
      similar: similar.map((x) => ({ ...card(x.doc), similarity: Math.round(x.similarity * 1000) / 1000, shared_capabilities: x.shared })),
    };
  });
  router.use(protocolAgents.routes());

  const network = new Router({ prefix: '/api/network' });
  mount(network, discoveryOperations.getNetworkIntelligence, async (ctx) => {
    ctx.body = { ...(await networkIntelligence(s.store)), generated_at: s.clock.now().toISOString() };
  });
  mount(network, discoveryOperations.getNetworkLeaderboard, async (ctx) => {
    const page = await leaderboard(s.store, cursorPaging(ctx.query, { limit: 20, max: 100 }));
    ctx.body = {
      items: page.items.map((d) => ({ ...card(d), contracts_completed: typeof d.contracts_completed === 'number' ? d.contracts_completed : 0 })),
      next_cursor: page.next_cursor,
      has_more: page.has_more,
    };
  });
  router.use(network.routes());

  const pulse = new Router({ prefix: '/api/agent/pulse' });
  mount(pulse, discoveryOperations.getAgentPulse, async (ctx) => {
    const agentId = requireAgent(ctx);
    const days = daysOf(ctx.query, 90);
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = await agentPulse(s.store, agent, s.clock.now(), days);
  });
  router.use(pulse.routes());

  const mesh = new Router({ prefix: '/api/mesh' });
  mount(mesh, discoveryOperations.getMeshSignals, async (ctx) => {
    const q = ctx.query;
    const postType = typeof q.type === 'string' && q.type ? q.type : typeof q.post_type === 'string' && q.post_type ? q.post_type : undefined;
    if (postType && !isOneOf(POST_TYPES, postType))
      throw new ValidationFailed([{ loc: ['query', 'type'], msg: `value must be one of: ${POST_TYPES.join(', ')}`, type: 'type_error.enum' }]);
    const capability = typeof q.capability === 'string' && q.capability ? q.capability : undefined;
    const page = await meshSignals(s.store, { postType, capability, ...cursorPaging(q, { limit: 20, max: 100 }) });
    ctx.body = { items: page.items.map((p) => postView(p, s.config.publicBaseUrl)), next_cursor: page.next_cursor, has_more: page.has_more };
  });
  const radar = new Router({ prefix: '/api/agent/intent-radar' });
  mount(radar, discoveryOperations.getAgentIntentRadar, async (ctx) => {
    const agentId = requireAgent(ctx);
    const q = ctx.query;
    const postType = typeof q.type === 'string' && q.type ? q.type : undefined;
    if (postType && !isOneOf(POST_TYPES, postType))
      throw new ValidationFailed([{ loc: ['query', 'type'], msg: `value must be one of: ${POST_TYPES.join(', ')}`, type: 'type_error.enum' }]);
    const capability = typeof q.capability === 'string' && q.capability ? q.capability : undefined;
    const agent = await getAgent(s.store, agentId);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    const capabilities = capability ? [capability] : (agent.capabilities ?? []);
    const [page, listings] = await Promise.all([
      meshSignals(s.store, { postType, capability, ...cursorPaging(q, { limit: 20, max: 100 }) }),
      listingsMatching(s.store, capabilities, agentId, RADAR_LISTINGS),
    ]);
    ctx.body = {
      items: page.items.map((p) => postView(p, s.config.publicBaseUrl)),
      next_cursor: page.next_cursor,
      has_more: page.has_more,
      capabilities,
      listings: listings.map((l) => ({ ...listingView(l.doc, s.config.publicBaseUrl), matched_capability: l.matched })),
    };
  });
  router.use(radar.routes());

  mount(mesh, discoveryOperations.getMeshPulse, async (ctx) => {
    ctx.body = await meshPulse(s.store, s.clock.now(), daysOf(ctx.query, 90, 7));
  });
  router.use(mesh.routes());
}
