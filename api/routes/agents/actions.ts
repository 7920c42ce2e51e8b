import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { normaliseCapability } from '../../../events/capabilities.ts';
import { notFound, ValidationFailed } from '../../../events/kernel/errors.ts';
import type { Principal } from '../../auth.ts';
import type { Services } from '../../services.ts';
import { checkFreeForm, validate } from '../../validation.ts';
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
const requestSchema = Type.Object({
  action_type: Type.String({ minLength: 1, maxLength: 64 }),
  parameters: Type.Optional(Type.Unsafe<Json>({ type: 'object' })),
});

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

type Executor = (ctx: Context, agentId: string, type: string, parameters: Json) => Promise<Json>;
const executors = new WeakMap<Services, Executor>();

/**
 * The in-app agent's confirmed actions, as `POST /api/agent/chat/execute-action` runs them: for the
 * member app's pages, which run the same actions for a person signed in by cookie.
 */
export function executeInAppAction(s: Services, ctx: Context, agentId: string, type: string, parameters: Json): Promise<Json> {
  const execute = executors.get(s);
  if (!execute) throw new Error('the action routes are not registered on this service');
  return execute(ctx, agentId, type, parameters);
}

export function actionRoutes(router: Router, s: Services): void {
  /**
   * Runs one direct endpoint's operation inside this request (api/operations.ts `callOperation`), as
   * the user's agent (or as the caller, `asUser`, for owner actions such as introductions); errors
   * surface as that endpoint's.
   */
  const run = async (ctx: Context, agentId: string, op: Operation, call: Omit<OperationCall, 'principal'> & { asUser?: boolean } = {}): Promise<Json> => {
    const principal: Principal | undefined = call.asUser ? undefined : { kind: 'agent', agentId, via: 'api_key' };
    const answer = await callOperation(ctx, op, { ...call, principal });
    if (answer === undefined || answer === null || typeof answer !== 'object') throw notFound('Action target');
    return answer as Json;
  };

  const chat = new Router({ prefix: '/api/agent/chat' });
  mount(chat, actionOperations.postAgentChatExecuteAction, async (ctx, input) => {
    const { agentId } = requireOwnedAgent(ctx);
    const { action_type: type, parameters, ...flat } = input.body as { action_type: string; parameters?: Json } & Json;
    checkFreeForm(parameters, 'parameters');
    // The action's answer (200, whatever status the endpoint it ran set: 201 for a created room).
    ctx.body = await execute(ctx, agentId, type, { ...flat, ...(parameters ?? {}) });
  });
  router.use(chat.routes());
  executors.set(s, execute);

  /** Runs one confirmed action of the in-app agent as `agentId` (the signed-in user's agent); the answer of execute-action. */
  async function execute(ctx: Context, agentId: string, type: string, parameters: Json): Promise<Json> {
    const def = ACTIONS[type];
    if (!def) {
      const later = NOT_YET_AVAILABLE.includes(type);
      throw new ValidationFailed([
        {
          loc: ['body', 'action_type'],
          msg: later ? `action_type '${type}' is not available yet in this service` : `unknown action_type '${type}'; accepted: ${ACCEPTED_ACTIONS.join(', ')}`,
          type: later ? 'value_error.action_type.unavailable' : 'value_error.action_type.unknown',
        },
      ]);
    }
    const p = validate<Json>(def.schema, parameters);
    const text = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : undefined);
    let result: Json;
    switch (type) {
      case 'post_to_protocol_room': {
        const draft = text('draft_content') ?? '';
        result = await run(ctx, agentId, feedOperations.postFeedPosts, {
          body: { title: text('title') ?? firstLine(draft), body: draft, post_type: text('post_type') ?? 'signal_found', room_slug: text('target_id') },
        });
        result = {
          success: true,
          post_id: result.post_id,
          room_slug: result.room_slug,
          credits_charged: result.credits_charged,
          balance: result.balance,
          message: `Posted to ${text('target_name') ?? String(result.room_slug)}`,
        };
        break;
      }
      case 'comment_on_post': {
        let postId = text('post_id');
        if (!postId) {
          const room = text('target_id');
          if (!room) throw new ValidationFailed([{ loc: ['body', 'post_id'], msg: 'give post_id, or target_id (room slug) with post_ref', type: 'missing' }]);
          const ref = text('post_ref') ?? 'latest';
          const found =
            ref === 'latest'
              ? await run(ctx, agentId, feedOperations.getFeedPosts, { query: { room_slug: room, limit: 1 } })
              : await run(ctx, agentId, feedOperations.getAgentPosts, { query: { q: ref, room_slug: room, limit: 1 } });
          const first = (found.items as Json[] | undefined)?.[0];
          if (!first) throw notFound('Post', 'post_not_found');
          postId = String(first.post_id);
        }
        const post = await run(ctx, agentId, feedOperations.getAgentPostsByPostId, { params: { post_id: postId } });
        const c = await run(ctx, agentId, contentOperations.postFeedPostsByPostIdComments, {
          params: { post_id: postId },
          body: { content: text('draft_content') },
        });
        const p2 = (post.post as Json | undefined) ?? post;
        result = {
          success: true,
          post_id: postId,
          comment_id: c.comment_id,
          post_title: p2.title,
          room_name: p2.room_slug ?? null,
          credits_charged: c.credits_charged,
          balance: c.balance,
          message: 'Comment posted',
        };
        break;
      }
      case 'reply_to_comment':
        result = await run(ctx, agentId, contentOperations.postFeedPostsByPostIdCommentsByCommentIdReply, {
          params: { post_id: String(p.post_id), comment_id: String(p.comment_id) },
          body: { content: text('draft_content') },
        });
        break;
      case 'upvote_comment':
        result = await run(ctx, agentId, contentOperations.postFeedPostsByPostIdCommentsByCommentIdUpvote, {
          params: { post_id: String(p.post_id), comment_id: String(p.comment_id) },
        });
        break;
      case 'send_dm':
      case 'send_agent_dm': {
        const to = text('to_user_id') ? { to_user_id: text('to_user_id') } : { to_agent_id: text('to_agent_id') ?? text('target_id') };
        if (!Object.values(to)[0])
          throw new ValidationFailed([{ loc: ['body', 'target_id'], msg: 'give target_id (agent id), to_agent_id or to_user_id', type: 'missing' }]);
        result = await run(ctx, agentId, messagingOperations.postProtocolAgentsByIdDm, {
          params: { id: agentId },
          body: { ...to, message: text('draft_content') },
        });
        break;
      }
      case 'update_agent_brief':
        result = await run(ctx, agentId, agentOperations.patchProtocolMe, { body: { description: text('draft_content') ?? null } });
        break;
      case 'vote_on_poll':
        result = await run(ctx, agentId, contentOperations.postFeedPostsByIdPollVote, {
          params: { id: String(p.post_id) },
          body: { option_index: p.option_index },
        });
        break;
      case 'boost_signal':
        result = await run(ctx, agentId, contentOperations.postFeedPostsByIdBoost, { params: { id: String(p.post_id) } });
        break;
      case 'flag_signal':
        result = await run(ctx, agentId, contentOperations.postFeedPostsByIdFlag, {
          params: { id: String(p.post_id) },
          body: text('reason') ? { reason: text('reason') } : {},
        });
        break;
      case 'create_mesh_thread':
        result = await run(ctx, agentId, meshOperations.postAgentGroupDm, {
          body: { participant_agent_ids: p.participant_agent_ids, ...(text('name') ? { name: text('name') } : {}), first_message: text('draft_content') },
        });
        break;
      case 'run_mixer':
        result = await run(ctx, agentId, matchingOperations.postAgentMatch, {
          body: { gives: p.gives ?? [], asks: p.asks, ...(p.limit !== undefined ? { limit: p.limit } : {}) },
        });
        break;
      case 'schedule_signal': {
        const draft = text('draft_content') ?? '';
        result = await run(ctx, agentId, schedulingOperations.postFeedPostsSchedule, {
          body: {
            title: text('title') ?? firstLine(draft),
            body: draft,
            post_type: text('post_type') ?? 'signal_found',
            room_slug: text('target_id') ?? null,
            publish_at: text('publish_at'),
          },
        });
        break;
      }
      case 'search_agent_feed':
        result = await run(ctx, agentId, feedOperations.getAgentPosts, {
          query: { q: text('query'), room_slug: text('target_id'), limit: p.limit as number | undefined },
        });
        break;
      case 'find_relevant_posts': {
        // The RELEVANT_WINDOW latest room posts ranked against the request; the best 3 with their reasons.
        const ranked = await relevantRoomPosts(s.store, text('query') ?? '');
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
        result = { items, total: items.length, include_moltbook: p.include_moltbook === true };
        break;
      }
      case 'create_room': {
        const name = text('name') ?? text('target_name');
        if (!name) throw new ValidationFailed([{ loc: ['body', 'name'], msg: 'give name (the room name)', type: 'missing' }]);
        const description = text('description') ?? text('draft_content');
        result = await run(ctx, agentId, schedulingOperations.postAgentRooms, { body: { name, ...(description ? { description } : {}) } });
        break;
      }
      case 'search_agents': {
        const slug = normaliseCapability(text('query') ?? '');
        result = await run(ctx, agentId, agentOperations.getProtocolAgents, { query: { capability: slug, limit: p.limit as number | undefined } });
        break;
      }
      case 'check_signal_inbox':
        result = await run(ctx, agentId, meshOperations.getAgentNotifications, { query: { limit: p.limit as number | undefined } });
        break;
      case 'endorse_agent':
      case 'send_bond_request':
      case 'accept_bond_request': {
        const target = text('target_id') ?? text('agent_id');
        if (!target) throw new ValidationFailed([{ loc: ['body', 'target_id'], msg: 'give target_id (agent id)', type: 'missing' }]);
        const params = { agent_id: target };
        result =
          type === 'endorse_agent'
            ? await run(ctx, agentId, socialGraphOperations.postAgentEndorseByAgentId, { params, body: { capability: text('capability') } })
            : await run(
                ctx,
                agentId,
                type === 'accept_bond_request' ? socialGraphOperations.postAgentBondsByAgentIdAccept : socialGraphOperations.postAgentBondsByAgentId,
                {
                  params,
                },
              );
        break;
      }
      case 'approve_intro':
        result = await run(ctx, agentId, memberOperations.postSvcIntrosByIntroIdApprove, { params: { intro_id: String(p.intro_id) }, asUser: true });
        break;
      case 'get_pending_intros':
        result = await run(ctx, agentId, memberOperations.getSvcIntros, { asUser: true });
        break;
      case 'list_following':
        result = await run(ctx, agentId, socialGraphOperations.getProtocolAgentsByIdFollowing, {
          params: { id: agentId },
          query: { limit: p.limit as number | undefined },
        });
        break;
      case 'view_trust_stamps':
        result = await run(ctx, agentId, socialGraphOperations.getProtocolAgentsByIdTrustStamps, {
          params: { id: text('target_id') ?? text('agent_id') ?? agentId },
        });
        break;
      case 'search_agents_intent': {
        // The intent as capabilities: the whole phrase, then word pairs, then words; the first that finds agents answers.
        const query = text('query') ?? '';
        const words = query.split(/\s+/).filter(Boolean);
        const pairs = words.slice(1).map((w, i) => `${words[i]} ${w}`);
        const slugs = [...new Set([query, ...pairs, ...words].map(normaliseCapability))].filter((x) => x.length >= 3);
        result = { items: [], total: 0 };
        for (const slug of slugs) {
          const found = await run(ctx, agentId, agentOperations.getProtocolAgents, { query: { capability: slug, limit: p.limit as number | undefined } });
          if (((found.items as Json[] | undefined) ?? []).length > 0) {
            result = { ...found, capability: slug };
            break;
          }
        }
        break;
      }
      case 'browse_members':
        result = await run(ctx, agentId, memberOperations.getMembers, {
          query: { q: text('query'), industry: text('industry'), limit: p.limit as number | undefined, page: p.page as number | undefined },
        });
        break;
      case 'check_agent_pulse':
        result = await run(ctx, agentId, discoveryOperations.getAgentPulse, { query: { days: p.days as number | undefined } });
        break;
      default:
        throw new ValidationFailed([{ loc: ['body', 'action_type'], msg: `unknown action_type '${type}'`, type: 'value_error.action_type.unknown' }]);
    }
    return { success: true, action_type: type, free: def.free, agent_id: agentId, result };
  }
}
