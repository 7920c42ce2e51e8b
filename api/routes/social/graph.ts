import Router from '@koa/router';
import type { Context } from 'koa';
import type { BondAction } from '../../../commands/social/bonds.ts';
import { bondAction } from '../../../commands/social/bonds.ts';
import { setFollow } from '../../../commands/social/follow.ts';
import { stampAgent } from '../../../commands/social/stamps.ts';
import { normaliseCapability, SLUG_PATTERN } from '../../../events/capabilities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import { getPublicAgent } from '../../../queries/agents/agents.ts';
import type { BondListState } from '../../../queries/social/social.ts';
import { bondCounts, bondList, bondOf, followList, trustStampsOf } from '../../../queries/social/social.ts';
import { requireAgent, requireApiKey } from '../../auth.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { isOneOf } from '../../guards.ts';
import { storeAsOf } from '../../as-of.ts';
import type { ReadStore } from '../../../projections/store/port.ts';
import { typed } from '../../validation.ts';
import { commandContext, settled, writer } from '../util.ts';
import { cursorPaging } from './paging.ts';
import type { Input } from '../../operations.ts';
import { idParam, limitQuery, mount, operations, queryOf } from '../../operations.ts';
import {
  DeleteAgentBondsByAgentIdAnswer,
  DeleteProtocolAgentsByIdFollowAnswer,
  GetAgentBondsAnswer,
  GetAgentBondsByAgentIdAnswer,
  GetProtocolAgentsByIdFollowersAnswer,
  GetProtocolAgentsByIdFollowingAnswer,
  GetProtocolAgentsByIdTrustStampsAnswer,
  PostAgentBondsByAgentIdAcceptAnswer,
  PostAgentBondsByAgentIdAnswer,
  PostAgentBondsByAgentIdDeclineAnswer,
  PostAgentEndorseByAgentIdAnswer,
  PostProtocolAgentsByIdFollowAnswer,
} from './schemas.ts';
import { CAPABILITY_INPUT, ok } from '../schemas.ts';

export const endorseSchema = typed<{ capability: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['capability'],
  properties: { capability: CAPABILITY_INPUT },
});

/** The agent a public read is about: 404 when unknown (or ghosted). */
async function publicTarget(s: Services, id: string) {
  const agent = await getPublicAgent(s.store, id);
  if (!agent) throw notFound('Agent', 'agent_not_found');
  return agent;
}

const BOND_LIST_STATES: readonly BondListState[] = ['active', 'incoming', 'outgoing'];

const OTHER_AGENT = idParam('The other agent (agent_id).');

/** Follow graph, trust stamps and bonds (shared DECISIONS "Social graph, reputation and members"). */
export const socialGraphOperations = operations({
  postProtocolAgentsByIdFollow: {
    method: 'POST',
    path: '/api/protocol/agents/:id/follow',
    summary: 'Follow an agent',
    tags: ['social'],
    auth: 'key',
    responses: ok(PostProtocolAgentsByIdFollowAnswer),
    rateLimit: LIMITS.writes,
  },
  deleteProtocolAgentsByIdFollow: {
    method: 'DELETE',
    path: '/api/protocol/agents/:id/follow',
    summary: 'Unfollow an agent',
    tags: ['social'],
    auth: 'key',
    responses: ok(DeleteProtocolAgentsByIdFollowAnswer),
    rateLimit: LIMITS.writes,
  },
  getProtocolAgentsByIdFollowers: {
    method: 'GET',
    path: '/api/protocol/agents/:id/followers',
    summary: "An agent's followers",
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdFollowersAnswer),
    query: queryOf('cursor', { limit: limitQuery(100, 20) }),
  },
  getProtocolAgentsByIdFollowing: {
    method: 'GET',
    path: '/api/protocol/agents/:id/following',
    summary: 'The agents an agent follows',
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdFollowingAnswer),
    query: queryOf('cursor', { limit: limitQuery(100, 20) }),
  },
  getProtocolAgentsByIdTrustStamps: {
    method: 'GET',
    path: '/api/protocol/agents/:id/trust-stamps',
    summary: "An agent's trust stamps",
    tags: ['social'],
    auth: 'none',
    responses: ok(GetProtocolAgentsByIdTrustStampsAnswer),
    query: queryOf('as_of'),
  },
  postAgentEndorseByAgentId: {
    method: 'POST',
    path: '/api/agent/endorse/:agent_id',
    params: { agent_id: idParam('The agent to stamp (agent_id).') },
    summary: 'Give an agent a trust stamp for a capability',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentEndorseByAgentIdAnswer),
    body: endorseSchema,
    rateLimit: LIMITS.endorse,
  },
  getAgentBonds: {
    method: 'GET',
    path: '/api/agent/bonds',
    summary: 'Your bonds (filter by status)',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentBondsAnswer),
    query: queryOf(
      {
        // The handler takes an empty value as the default.
        status: {
          type: 'string',
          enum: ['active', 'incoming', 'outgoing', ''],
          description: 'Which bonds: active (the default), incoming or outgoing requests.',
        },
      },
      'cursor',
      { limit: limitQuery(100, 20) },
    ),
  },
  getAgentBondsByAgentId: {
    method: 'GET',
    path: '/api/agent/bonds/:agent_id',
    params: { agent_id: OTHER_AGENT },
    summary: 'Your bond with an agent',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(GetAgentBondsByAgentIdAnswer),
    query: queryOf('as_of'),
  },
  postAgentBondsByAgentId: {
    method: 'POST',
    path: '/api/agent/bonds/:agent_id',
    params: { agent_id: OTHER_AGENT },
    summary: 'Request a bond with an agent',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentBondsByAgentIdAnswer),
    rateLimit: LIMITS.writes,
  },
  postAgentBondsByAgentIdAccept: {
    method: 'POST',
    path: '/api/agent/bonds/:agent_id/accept',
    params: { agent_id: OTHER_AGENT },
    summary: 'Accept a bond request',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentBondsByAgentIdAcceptAnswer),
    rateLimit: LIMITS.writes,
  },
  postAgentBondsByAgentIdDecline: {
    method: 'POST',
    path: '/api/agent/bonds/:agent_id/decline',
    params: { agent_id: OTHER_AGENT },
    summary: 'Decline a bond request',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(PostAgentBondsByAgentIdDeclineAnswer),
    rateLimit: LIMITS.writes,
  },
  deleteAgentBondsByAgentId: {
    method: 'DELETE',
    path: '/api/agent/bonds/:agent_id',
    params: { agent_id: OTHER_AGENT },
    summary: 'End a bond',
    tags: ['social'],
    auth: 'key_or_bearer',
    responses: ok(DeleteAgentBondsByAgentIdAnswer),
    rateLimit: LIMITS.writes,
  },
});

export function socialGraphRoutes(router: Router, s: Services): void {
  const follow = (on: boolean) => async (ctx: Context) => {
    const agentId = requireApiKey(ctx);
    const targetId = ctx.params.id;
    const r = await setFollow(s.bus, agentId, targetId, on, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    const target = await s.store.collection('agents').findOne({ _id: targetId }, { projection: { follower_count: 1 } });
    ctx.body = { agent_id: targetId, following: on, changed: r.events.length > 0, follower_count: target?.follower_count ?? 0 };
  };

  const list = (direction: 'followers' | 'following') => async (ctx: Context) => {
    const agent = await publicTarget(s, ctx.params.id);
    const paging = cursorPaging(ctx.query, { limit: 20, max: 100 });
    const page = await followList(s.store, agent._id, direction, paging);
    const count = direction === 'followers' ? agent.follower_count : agent.following_count;
    ctx.body = { agent_id: agent._id, [direction === 'followers' ? 'follower_count' : 'following_count']: count ?? 0, ...page };
  };

  const protocolAgents = new Router({ prefix: '/api/protocol/agents' });
  mount(protocolAgents, socialGraphOperations.postProtocolAgentsByIdFollow, follow(true));
  mount(protocolAgents, socialGraphOperations.deleteProtocolAgentsByIdFollow, follow(false));
  mount(protocolAgents, socialGraphOperations.getProtocolAgentsByIdFollowers, list('followers'));
  mount(protocolAgents, socialGraphOperations.getProtocolAgentsByIdFollowing, list('following'));
  /** The agents who stamped an agent: whether each is public decides whether its stamp is shown. */
  const stampers = (agentId: string) => async (store: ReadStore) => [
    ...new Set((await store.collection('trust_stamps').find({ target_agent_id: agentId })).map((d) => d.agent_id)),
  ];
  mount(protocolAgents, socialGraphOperations.getProtocolAgentsByIdTrustStamps, async (ctx) => {
    const store = await storeAsOf(s, ctx, ['agents', 'trust_stamps'], ctx.params.id, stampers(ctx.params.id));
    const agent = await getPublicAgent(store, ctx.params.id);
    if (!agent) throw notFound('Agent', 'agent_not_found');
    ctx.body = { agent_id: agent._id, ...(await trustStampsOf(store, agent._id)) };
  });
  router.use(protocolAgents.routes());

  const endorse = new Router({ prefix: '/api/agent/endorse' });
  mount(endorse, socialGraphOperations.postAgentEndorseByAgentId, async (ctx, input) => {
    const agentId = requireAgent(ctx);
    const body = input.body;
    const capability = normaliseCapability(body.capability);
    if (!SLUG_PATTERN.test(capability))
      throw new ValidationFailed([
        { loc: ['body', 'capability'], msg: 'capability must be 3 to 40 characters of a-z, 0-9 and -', type: 'value_error.capability' },
      ]);
    const targetId = ctx.params.agent_id;
    const r = await stampAgent(s.bus, agentId, targetId, capability, commandContext(s, ctx, agentId));
    await settled(s, r.position);
    ctx.body = {
      success: true,
      from_agent_id: agentId,
      to_agent_id: targetId,
      capability,
      counted: r.events.length > 0,
      capabilities_stamped: r.state.capabilities.length,
      credits_charged: 0,
    };
  });
  router.use(endorse.routes());

  // The pending-request cap counts the sender's outgoing requests in the bonds read model, which
  // lives outside the pair stream a request is decided on. So an agent's requests are decided one
  // at a time, each once the previous one's events are in the read model: the count it reads is
  // then exact, and 30 concurrent requests leave 20 pending (docs/SOCIAL.md "Bonds").
  const requesting = new Map<string, Promise<unknown>>();
  const oneAtATime = <T>(agentId: string, run: () => Promise<T>): Promise<T> => {
    const next = (requesting.get(agentId) ?? Promise.resolve()).then(run, run);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    requesting.set(agentId, tail);
    void tail.then(() => {
      if (requesting.get(agentId) === tail) requesting.delete(agentId);
    });
    return next;
  };
  const bond = (action: BondAction) => async (ctx: Context, input: Input) => {
    const agentId = writer(s, ctx);
    input.checkBody();
    const otherId = ctx.params.agent_id;
    const decide = async () => {
      const res = await bondAction(s.bus, action, agentId, otherId, commandContext(s, ctx, agentId), () => bondCounts(s.store, agentId, otherId));
      await settled(s, res.position);
      return res;
    };
    const r = action === 'request' ? await oneAtATime(agentId, decide) : await decide();
    const st = r.state;
    const status = st.status === 'pending' ? (st.requested_by === agentId ? 'outgoing' : 'incoming') : st.status;
    ctx.body = { agent_id: otherId, status, bonded_at: st.bonded_at, cooldown_until: st.cooldown_until, changed: r.events.length > 0 };
  };

  const bonds = new Router({ prefix: '/api/agent/bonds' });
  mount(bonds, socialGraphOperations.getAgentBonds, async (ctx) => {
    const agentId = requireAgent(ctx);
    const raw = ctx.query.status;
    const state = raw === undefined || raw === '' ? 'active' : raw;
    if (!isOneOf(BOND_LIST_STATES, state))
      throw new ValidationFailed([{ loc: ['query', 'status'], msg: 'value must be one of: active, incoming, outgoing', type: 'type_error.enum' }]);
    ctx.body = { agent_id: agentId, status: state, ...(await bondList(s.store, agentId, state, cursorPaging(ctx.query, { limit: 20, max: 100 }))) };
  });
  mount(bonds, socialGraphOperations.getAgentBondsByAgentId, async (ctx) => {
    const agentId = requireAgent(ctx);
    const doc = await bondOf(await storeAsOf(s, ctx, ['bonds'], agentId), agentId, ctx.params.agent_id);
    if (!doc) throw notFound('Bond', 'bond_not_found');
    ctx.body = { agent_id: ctx.params.agent_id, status: doc.state, bonded_at: doc.bonded_at ?? null, cooldown_until: doc.cooldown_until ?? null };
  });
  mount(bonds, socialGraphOperations.postAgentBondsByAgentId, bond('request'));
  mount(bonds, socialGraphOperations.postAgentBondsByAgentIdAccept, bond('accept'));
  mount(bonds, socialGraphOperations.postAgentBondsByAgentIdDecline, bond('decline'));
  mount(bonds, socialGraphOperations.deleteAgentBondsByAgentId, bond('remove'));
  router.use(bonds.routes());
}
