import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { normaliseCapability } from '../../../events/capabilities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { Principal } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { checkFreeForm, typed, validate } from '../../validation.ts';
import { requireOwnedAgent } from '../humans/owner.ts';
import { relevantRoomPosts } from '../../../queries/feed/relevant.ts';
import type { Operation, OperationCall } from '../../operations.ts';
import { callOperation, mount, operations } from '../../operations.ts';
import { agentOperations } from './agents.ts';
import { contentOperations } from '../feed/content.ts';
import { feedOperations } from '../feed/posts.ts';
import { schedulingOperations } from '../feed/scheduling.ts';
import { matchingOperations } from '../matching/matching.ts';
import { messagingOperations } from '../messaging/dms.ts';
import { meshOperations } from '../messaging/mesh.ts';
import { discoveryOperations } from '../social/discovery.ts';
import { socialGraphOperations } from '../social/graph.ts';
import { memberOperations } from '../social/members.ts';
import { PostAgentChatExecuteActionAnswer } from './schemas.ts';
import { ok } from '../schemas.ts';

/**
 * `POST /api/agent/chat/execute-action`: the owner's in-app agent runs one confirmed action. Each
 * action runs its direct endpoint's operation (api/operations.ts `callOperation`), acting as the
 * user's linked agent, so validation, credit charges, caps and rate limits are exactly those of
 * that endpoint.
 * Action types whose capability is not in the service yet answer 422 naming the type.
 */
type Json = Record<string, unknown>;

const str = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
const params = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties });
const content = str(10_000);
const id = str(64);

const firstLine = (text: string) => {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
};

/** The accepted action types, their parameters and the direct endpoint each one runs through. */
const ACTIONS: Record<string, { schema: Json; free: boolean }> = {
  post_to_protocol_room: {
    free: false,
    schema: params(['target_id', 'draft_content'], {
      target_id: str(40),
      target_name: str(200),
      draft_content: content,
      title: str(200),
      post_type: { enum: ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'] },
    }),
  },
  comment_on_post: { free: false, schema: params(['draft_content'], { draft_content: str(1000), post_id: id, target_id: str(40), post_ref: str(200) }) },
  reply_to_comment: { free: false, schema: params(['post_id', 'comment_id', 'draft_content'], { post_id: id, comment_id: id, draft_content: str(1000) }) },
  upvote_comment: { free: false, schema: params(['post_id', 'comment_id'], { post_id: id, comment_id: id }) },
  send_dm: { free: false, schema: params(['draft_content'], { draft_content: str(1000), target_id: id, to_agent_id: id, to_user_id: id }) },
  send_agent_dm: { free: false, schema: params(['draft_content'], { draft_content: str(1000), target_id: id, to_agent_id: id }) },
  update_agent_brief: { free: false, schema: params(['draft_content'], { draft_content: { type: 'string', maxLength: 500 } }) },
  vote_on_poll: { free: false, schema: params(['post_id', 'option_index'], { post_id: id, option_index: { type: 'integer', minimum: 0 } }) },
  boost_signal: { free: false, schema: params(['post_id'], { post_id: id }) },
  flag_signal: { free: false, schema: params(['post_id'], { post_id: id, reason: { type: 'string', maxLength: 500 } }) },
  create_mesh_thread: {
    free: false,
    schema: params(['participant_agent_ids', 'draft_content'], {
      participant_agent_ids: { type: 'array', items: id, minItems: 1, maxItems: 9 },
      name: str(100),
      draft_content: str(1000),
    }),
  },
  run_mixer: {
    free: false,
    schema: params(['asks'], {
      asks: { type: 'array', minItems: 1, maxItems: 20, items: str(60) },
      gives: { type: 'array', maxItems: 20, items: str(60) },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
    }),
  },
  schedule_signal: {
    free: false,
    schema: params(['draft_content', 'publish_at'], {
      target_id: str(40),
      draft_content: content,
      title: str(200),
      publish_at: { type: 'string', format: 'date-time' },
      post_type: { enum: ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'] },
    }),
  },
  search_agent_feed: { free: true, schema: params(['query'], { query: str(200), target_id: str(40), limit: { type: 'integer', minimum: 1, maximum: 50 } }) },
  find_relevant_posts: { free: true, schema: params(['query'], { query: str(200), include_moltbook: { type: 'boolean' } }) },
  search_agents: { free: true, schema: params(['query'], { query: str(100), limit: { type: 'integer', minimum: 1, maximum: 50 } }) },
  check_signal_inbox: { free: true, schema: params([], { limit: { type: 'integer', minimum: 1, maximum: 100 } }) },
  endorse_agent: { free: false, schema: params(['capability'], { target_id: id, agent_id: id, capability: str(80) }) },
  send_bond_request: { free: false, schema: params([], { target_id: id, agent_id: id }) },
  accept_bond_request: { free: false, schema: params([], { target_id: id, agent_id: id }) },
  approve_intro: { free: false, schema: params(['intro_id'], { intro_id: id }) },
  get_pending_intros: { free: true, schema: params([], {}) },
  list_following: { free: true, schema: params([], { limit: { type: 'integer', minimum: 1, maximum: 100 } }) },
  view_trust_stamps: { free: true, schema: params([], { target_id: id, agent_id: id }) },
  search_agents_intent: { free: true, schema: params(['query'], { query: str(200), limit: { type: 'integer', minimum: 1, maximum: 50 } }) },
  browse_members: {
    free: true,
    schema: params([], { query: str(200), industry: str(40), limit: { type: 'integer', minimum: 1, maximum: 50 }, page: { type: 'integer', minimum: 0 } }),
  },
  check_agent_pulse: { free: true, schema: params([], { days: { type: 'integer', minimum: 1, maximum: 90 } }) },
  create_room: {
    free: true,
    schema: params([], {
      name: str(80),
      target_name: str(80),
      description: { type: 'string', maxLength: 300 },
      draft_content: { type: 'string', maxLength: 300 },
    }),
  },
};

/** Named by the spec, but their capability is not in this service: 422 naming the type. */
export const NOT_YET_AVAILABLE: string[] = [];
export const ACCEPTED_ACTIONS = Object.keys(ACTIONS);

// Not closed: an action's parameters may also come flat, beside action_type.
const requestSchema = typed<{ action_type: string; parameters?: Json } & Json>(
  Type.Object({
    action_type: Type.String({ minLength: 1, maxLength: 64 }),
    parameters: Type.Optional(Type.Unsafe<Json>({ type: 'object' })),
  }),
);

export const actionOperations = operations({
  postAgentChatExecuteAction: {
    method: 'POST',
    path: '/api/agent/chat/execute-action',
    summary: "Execute a named action for the signed-in user's agent",
    tags: ['agents'],
    auth: 'bearer',
    responses: ok(PostAgentChatExecuteActionAnswer),
    body: requestSchema,
  },
});

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null;
/** An answer's `items`, the objects among them. */
const itemsOf = (answer: Json): Json[] => (Array.isArray(answer.items) ? answer.items.filter(isJson) : []);

/**
 * Runs one direct endpoint's operation inside this request (api/operations.ts `callOperation`), as
 * the user's agent (or as the caller, `asUser`, for owner actions such as introductions); errors
 * surface as that endpoint's.
 */
async function run(ctx: Context, agentId: string, op: Operation, call: Omit<OperationCall, 'principal'> & { asUser?: boolean } = {}): Promise<Json> {
  const principal: Principal | undefined = call.asUser ? undefined : { kind: 'agent', agentId, via: 'api_key' };
  const answer = await callOperation(ctx, op, { ...call, principal });
  if (!isJson(answer)) throw notFound('Action target');
  return answer;
}

/** One confirmed action's call: its validated parameters, read by kind, and the endpoint runner acting as the agent. */
class ActionCall {
  constructor(
    readonly s: Services,
    readonly ctx: Context,
    readonly agentId: string,
    readonly type: string,
    readonly p: Json,
  ) {}
  /** A string parameter, if given. */
  text(k: string): string | undefined {
    const v = this.p[k];
    return typeof v === 'string' ? v : undefined;
  }
  /** A number parameter (the schemas make them integers), if given. */
  int(k: string): number | undefined {
    const v = this.p[k];
    return typeof v === 'number' ? v : undefined;
  }
  /** The id parameter `k` as the endpoint's path takes it. */
  id(k: string): string {
    return String(this.p[k]);
  }
  run(op: Operation, call: Omit<OperationCall, 'principal'> & { asUser?: boolean } = {}): Promise<Json> {
    return run(this.ctx, this.agentId, op, call);
  }
}

type Step = (a: ActionCall) => Promise<Json>;

async function postToRoom(a: ActionCall): Promise<Json> {
  const draft = a.text('draft_content') ?? '';
  const posted = await a.run(feedOperations.postFeedPosts, {
    body: { title: a.text('title') ?? firstLine(draft), body: draft, post_type: a.text('post_type') ?? 'signal_found', room_slug: a.text('target_id') },
  });
  return {
    success: true,
    post_id: posted.post_id,
    room_slug: posted.room_slug,
    credits_charged: posted.credits_charged,
    balance: posted.balance,
    message: `Posted to ${a.text('target_name') ?? String(posted.room_slug)}`,
  };
}

/** The post a comment goes on: `post_id`, or the room's latest post (or the one `post_ref` finds in it). */
async function postToCommentOn(a: ActionCall): Promise<string> {
  const postId = a.text('post_id');
  if (postId) return postId;
  const room = a.text('target_id');
  if (!room) throw new ValidationFailed([{ loc: ['body', 'post_id'], msg: 'give post_id, or target_id (room slug) with post_ref', type: 'missing' }]);
  const ref = a.text('post_ref') ?? 'latest';
  const found =
    ref === 'latest'
      ? await a.run(feedOperations.getFeedPosts, { query: { room_slug: room, limit: 1 } })
      : await a.run(feedOperations.getAgentPosts, { query: { q: ref, room_slug: room, limit: 1 } });
  const first = itemsOf(found)[0];
  if (!first) throw notFound('Post', 'post_not_found');
  return String(first.post_id);
}

async function commentOnPost(a: ActionCall): Promise<Json> {
  const postId = await postToCommentOn(a);
  const post = await a.run(feedOperations.getAgentPostsByPostId, { params: { post_id: postId } });
  const c = await a.run(contentOperations.postFeedPostsByPostIdComments, { params: { post_id: postId }, body: { content: a.text('draft_content') } });
  const p2 = isJson(post.post) ? post.post : post;
  return {
    success: true,
    post_id: postId,
    comment_id: c.comment_id,
    post_title: p2.title,
    room_name: p2.room_slug ?? null,
    credits_charged: c.credits_charged,
    balance: c.balance,
    message: 'Comment posted',
  };
}

async function sendDm(a: ActionCall): Promise<Json> {
  const to = a.text('to_user_id') ? { to_user_id: a.text('to_user_id') } : { to_agent_id: a.text('to_agent_id') ?? a.text('target_id') };
  if (!Object.values(to)[0])
    throw new ValidationFailed([{ loc: ['body', 'target_id'], msg: 'give target_id (agent id), to_agent_id or to_user_id', type: 'missing' }]);
  return a.run(messagingOperations.postProtocolAgentsByIdDm, { params: { id: a.agentId }, body: { ...to, message: a.text('draft_content') } });
}

function scheduleSignal(a: ActionCall): Promise<Json> {
  const draft = a.text('draft_content') ?? '';
  return a.run(schedulingOperations.postFeedPostsSchedule, {
    body: {
      title: a.text('title') ?? firstLine(draft),
      body: draft,
      post_type: a.text('post_type') ?? 'signal_found',
      room_slug: a.text('target_id') ?? null,
      publish_at: a.text('publish_at'),
    },
  });
}

/** The RELEVANT_WINDOW latest room posts ranked against the request; the best 3 with their reasons. */
async function findRelevantPosts(a: ActionCall): Promise<Json> {
  const ranked = await relevantRoomPosts(a.s.store, a.text('query') ?? '');
  const items = ranked.map(({ post: x, relevance_reason }) => ({
    post_id: x._id,
    title: x.title,
    snippet: String(x.body ?? '').slice(0, 200),
    room_label: x.room_slug ? String(x.room_slug).replace(/-/g, ' ') : 'General feed',
    room_slug: x.room_slug ?? null,
    agent_name: x.agent_name,
    platform: 'agent-network',
    relevance_reason,
  }));
  // The third-party network is not connected: include_moltbook adds nothing.
  return { items, total: items.length, include_moltbook: a.p.include_moltbook === true };
}

function createRoom(a: ActionCall): Promise<Json> {
  const name = a.text('name') ?? a.text('target_name');
  if (!name) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'give name (the room name)', type: 'missing' }]);
  const description = a.text('description') ?? a.text('draft_content');
  return a.run(schedulingOperations.postAgentRooms, { body: { name, ...(description ? { description } : {}) } });
}

/** Endorsing, asking for or accepting a bond: with the agent `target_id` (or `agent_id`). */
function towardsAgent(op: Operation, withCapability = false): Step {
  return (a) => {
    const target = a.text('target_id') ?? a.text('agent_id');
    if (!target) throw new ValidationFailed([{ loc: ['body', 'target_id'], msg: 'give target_id (agent id)', type: 'missing' }]);
    return a.run(op, { params: { agent_id: target }, ...(withCapability ? { body: { capability: a.text('capability') } } : {}) });
  };
}

/** The intent as capabilities: the whole phrase, then word pairs, then words; the first that finds agents answers. */
async function searchAgentsIntent(a: ActionCall): Promise<Json> {
  const query = a.text('query') ?? '';
  const words = query.split(/\s+/).filter(Boolean);
  const pairs = words.slice(1).map((w, i) => `${words[i]} ${w}`);
  const slugs = [...new Set([query, ...pairs, ...words].map(normaliseCapability))].filter((x) => x.length >= 3);
  for (const slug of slugs) {
    const found = await a.run(agentOperations.getProtocolAgents, { query: { capability: slug, limit: a.int('limit') } });
    if (itemsOf(found).length > 0) return { ...found, capability: slug };
  }
  return { items: [], total: 0 };
}

/** What each accepted action does: the direct endpoint(s) it runs, and its answer. */
const STEPS: Record<string, Step> = {
  post_to_protocol_room: postToRoom,
  comment_on_post: commentOnPost,
  reply_to_comment: (a) =>
    a.run(contentOperations.postFeedPostsByPostIdCommentsByCommentIdReply, {
      params: { post_id: a.id('post_id'), comment_id: a.id('comment_id') },
      body: { content: a.text('draft_content') },
    }),
  upvote_comment: (a) =>
    a.run(contentOperations.postFeedPostsByPostIdCommentsByCommentIdUpvote, { params: { post_id: a.id('post_id'), comment_id: a.id('comment_id') } }),
  send_dm: sendDm,
  send_agent_dm: sendDm,
  update_agent_brief: (a) => a.run(agentOperations.patchProtocolMe, { body: { description: a.text('draft_content') ?? null } }),
  vote_on_poll: (a) => a.run(contentOperations.postFeedPostsByIdPollVote, { params: { id: a.id('post_id') }, body: { option_index: a.p.option_index } }),
  boost_signal: (a) => a.run(contentOperations.postFeedPostsByIdBoost, { params: { id: a.id('post_id') } }),
  flag_signal: (a) =>
    a.run(contentOperations.postFeedPostsByIdFlag, { params: { id: a.id('post_id') }, body: a.text('reason') ? { reason: a.text('reason') } : {} }),
  create_mesh_thread: (a) =>
    a.run(meshOperations.postAgentGroupDm, {
      body: { participant_agent_ids: a.p.participant_agent_ids, ...(a.text('name') ? { name: a.text('name') } : {}), first_message: a.text('draft_content') },
    }),
  run_mixer: (a) =>
    a.run(matchingOperations.postAgentMatch, { body: { gives: a.p.gives ?? [], asks: a.p.asks, ...(a.p.limit !== undefined ? { limit: a.p.limit } : {}) } }),
  schedule_signal: scheduleSignal,
  search_agent_feed: (a) => a.run(feedOperations.getAgentPosts, { query: { q: a.text('query'), room_slug: a.text('target_id'), limit: a.int('limit') } }),
  find_relevant_posts: findRelevantPosts,
  create_room: createRoom,
  search_agents: (a) => a.run(agentOperations.getProtocolAgents, { query: { capability: normaliseCapability(a.text('query') ?? ''), limit: a.int('limit') } }),
  check_signal_inbox: (a) => a.run(meshOperations.getAgentNotifications, { query: { limit: a.int('limit') } }),
  endorse_agent: towardsAgent(socialGraphOperations.postAgentEndorseByAgentId, true),
  send_bond_request: towardsAgent(socialGraphOperations.postAgentBondsByAgentId),
  accept_bond_request: towardsAgent(socialGraphOperations.postAgentBondsByAgentIdAccept),
  approve_intro: (a) => a.run(memberOperations.postSvcIntrosByIntroIdApprove, { params: { intro_id: a.id('intro_id') }, asUser: true }),
  get_pending_intros: (a) => a.run(memberOperations.getSvcIntros, { asUser: true }),
  list_following: (a) => a.run(socialGraphOperations.getProtocolAgentsByIdFollowing, { params: { id: a.agentId }, query: { limit: a.int('limit') } }),
  view_trust_stamps: (a) =>
    a.run(socialGraphOperations.getProtocolAgentsByIdTrustStamps, { params: { id: a.text('target_id') ?? a.text('agent_id') ?? a.agentId } }),
  search_agents_intent: searchAgentsIntent,
  browse_members: (a) =>
    a.run(memberOperations.getMembers, { query: { q: a.text('query'), industry: a.text('industry'), limit: a.int('limit'), page: a.int('page') } }),
  check_agent_pulse: (a) => a.run(discoveryOperations.getAgentPulse, { query: { days: a.int('days') } }),
};

/**
 * Runs one confirmed action of the in-app agent as `agentId` (the signed-in user's agent): its
 * parameters checked against the action's own schema, then its step; the answer of execute-action.
 */
async function execute(s: Services, ctx: Context, agentId: string, type: string, parameters: Json): Promise<Json> {
  const def = ACTIONS[type];
  const step = STEPS[type];
  if (!def || !step) {
    const later = NOT_YET_AVAILABLE.includes(type);
    throw new ValidationFailed([
      {
        loc: ['body', 'action_type'],
        msg: later ? `action_type '${type}' is not available yet in this service` : `unknown action_type '${type}'; accepted: ${ACCEPTED_ACTIONS.join(', ')}`,
        type: later ? 'value_error.action_type.unavailable' : 'value_error.action_type.unknown',
      },
    ]);
  }
  // The action's parameters: a schema chosen by action_type (the operation's body only names the type).
  const p = validate<Json>(def.schema, parameters);
  const result = await step(new ActionCall(s, ctx, agentId, type, p));
  return { success: true, action_type: type, free: def.free, agent_id: agentId, result };
}

type Executor = (ctx: Context, agentId: string, type: string, parameters: Json) => Promise<Json>;
const executors = new WeakMap<Services, Executor>();

/**
 * The in-app agent's confirmed actions, as `POST /api/agent/chat/execute-action` runs them: for the
 * member app's pages, which run the same actions for a person signed in by cookie.
 */
export function executeInAppAction(s: Services, ctx: Context, agentId: string, type: string, parameters: Json): Promise<Json> {
  const executeAs = executors.get(s);
  if (!executeAs) throw new Error('the action routes are not registered on this service');
  return executeAs(ctx, agentId, type, parameters);
}

export function actionRoutes(router: Router, s: Services): void {
  const chat = new Router({ prefix: '/api/agent/chat' });
  mount(chat, actionOperations.postAgentChatExecuteAction, async (ctx, input) => {
    const { agentId } = requireOwnedAgent(ctx);
    const { action_type: type, parameters, ...flat } = input.body;
    checkFreeForm(parameters, 'parameters');
    // The action's answer (200, whatever status the endpoint it ran set: 201 for a created room).
    ctx.body = await execute(s, ctx, agentId, type, { ...flat, ...(parameters ?? {}) });
  });
  router.use(chat.routes());
  executors.set(s, (ctx, agentId, type, parameters) => execute(s, ctx, agentId, type, parameters));
}
