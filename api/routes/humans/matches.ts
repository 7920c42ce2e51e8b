import Router from '@koa/router';
import type { Context } from 'koa';
import { openers, quickReplies } from '../../../commands/humans/generated-text.ts';
import type { Member } from '../../../commands/humans/generated-text.ts';
import { createMatch, deleteMatchMessage, markMatchRead, reportMatchMessage, sendMatchMessage } from '../../../commands/humans/matches.ts';
import { forbidden, notFound } from '../../../events/kernel/errors.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import {
  getMatch,
  getMatchMessage,
  getUser,
  matchesOf,
  matchMessages,
  matchMessageView,
  unreadByMatch,
  unreadMatchMessages,
} from '../../../queries/humans/users.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { typed } from '../../validation.ts';
import { requireUser } from './auth.ts';
import { commandContext, settled } from '../util.ts';
import { mount, operations } from '../../operations.ts';
import {
  DeleteMessagesByMessageIdAnswer,
  GetMessagesByMatchIdOpenersAnswer,
  GetMessagesByMatchIdQuickRepliesAnswer,
  GetMessagesUnreadCountAnswer,
  PostAdminMatchesAnswer,
  PostMessagesAnswer,
  PostMessagesByMessageIdReportAnswer,
} from './schemas.ts';
import { ok } from '../schemas.ts';

const body = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties });
const userId = { type: 'string', minLength: 1, maxLength: 64 };
const schemas = {
  match: typed<{ user_a_id: string; user_b_id: string; reason?: string | null }>(
    body(['user_a_id', 'user_b_id'], { user_a_id: userId, user_b_id: userId, reason: { type: ['string', 'null'], maxLength: 500 } }),
  ),
  message: typed<{ match_id: string; content: string }>(
    body(['match_id', 'content'], {
      match_id: { type: 'string', minLength: 1, maxLength: 64 },
      content: { type: 'string', minLength: 1, maxLength: 2000 },
    }),
  ),
  report: typed<{ reason: string; details?: string | null }>(
    body(['reason'], { reason: { type: 'string', minLength: 1, maxLength: 100 }, details: { type: ['string', 'null'], maxLength: 1000 } }),
  ),
};

/** The most recent matches `GET /api/matches` lists (a member has a handful; matches are made by admins, intros and matching runs). */
export const MATCH_LIST_LIMIT = 100;

const MatchSummary = {
  type: 'object',
  additionalProperties: false,
  required: ['match_id', 'other_member', 'reason', 'created_at', 'message_count', 'last_message_at', 'unread_count'],
  properties: {
    match_id: { type: 'string' },
    other_member: {
      type: 'object',
      additionalProperties: false,
      required: ['user_id', 'full_name'],
      properties: { user_id: { type: ['string', 'null'] }, full_name: { type: ['string', 'null'] } },
    },
    reason: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    message_count: { type: 'integer', minimum: 0 },
    last_message_at: { type: ['string', 'null'], format: 'date-time' },
    unread_count: { type: 'integer', minimum: 0 },
  },
};
const GetMatchesAnswer = {
  type: 'object',
  additionalProperties: false,
  required: ['matches', 'count'],
  properties: { matches: { type: 'array', items: MatchSummary }, count: { type: 'integer', minimum: 0 } },
};

/** Super admin only. */
export function requireSuperAdmin(ctx: Context): string {
  const user = requireUser(ctx);
  if (!user.roles.includes('super_admin')) throw forbidden('This needs the super admin role', 'admin_required');
  return user.userId;
}

export const matchOperations = operations({
  postAdminMatches: {
    method: 'POST',
    path: '/api/admin/matches',
    summary: 'Create a match between two members (super admin)',
    tags: ['humans'],
    auth: 'admin',
    responses: ok(PostAdminMatchesAnswer),
    body: schemas.match,
  },
  postMessages: {
    method: 'POST',
    path: '/api/messages',
    summary: 'Send a message in a match',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostMessagesAnswer),
    body: schemas.message,
    rateLimit: LIMITS.writes,
  },
  getMatches: {
    method: 'GET',
    path: '/api/matches',
    summary: `Your matches, the newest first (the ${MATCH_LIST_LIMIT} most recent), with the other member and your unread count`,
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetMatchesAnswer),
  },
  getMessagesUnreadCount: {
    method: 'GET',
    path: '/api/messages/unread/count',
    summary: 'Your unread match messages',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetMessagesUnreadCountAnswer),
  },
  getMessagesByMatchId: {
    method: 'GET',
    // GET and DELETE share the path template /api/messages/{id}: OpenAPI forbids two templates that
    // differ only by their parameter names ({match_id}, {message_id} in the spec's table).
    path: '/api/messages/:id',
    summary: "A match's messages",
    tags: ['humans'],
    auth: 'bearer',
    params: { id: { type: 'string', description: 'The match (match_id).' } },
    responses: { 200: { schema: { type: 'array', items: { type: 'object' } } } },
  },
  deleteMessagesByMessageId: {
    method: 'DELETE',
    path: '/api/messages/:id',
    summary: 'Delete your message',
    tags: ['humans'],
    auth: 'bearer',
    params: { id: { type: 'string', description: 'Your message (message_id).' } },
    responses: ok(DeleteMessagesByMessageIdAnswer),
  },
  postMessagesByMessageIdReport: {
    method: 'POST',
    path: '/api/messages/:message_id/report',
    summary: 'Report a message',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(PostMessagesByMessageIdReportAnswer),
    body: schemas.report,
  },
  getMessagesByMatchIdOpeners: {
    method: 'GET',
    path: '/api/messages/:match_id/openers',
    summary: 'Suggested openers for a match',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetMessagesByMatchIdOpenersAnswer),
  },
  getMessagesByMatchIdQuickReplies: {
    method: 'GET',
    path: '/api/messages/:match_id/quick-replies',
    summary: 'Suggested quick replies for a match',
    tags: ['humans'],
    auth: 'bearer',
    responses: ok(GetMessagesByMatchIdQuickRepliesAnswer),
  },
});

/** The match, if `user` is one of its two members (404 if it does not exist, 403 otherwise). */
export async function matchOfMember(s: Services, matchId: string, user: string) {
  const match = await getMatch(s.store, matchId);
  if (!match) throw notFound('Match', 'match_not_found');
  if (!match.members.includes(user)) throw forbidden('Only the two members of a match can read or write it', 'not_match_member');
  return match;
}

/** A match's conversation as one of its members reads it: reading marks what they received as read. */
export async function readMatch(s: Services, ctx: Context, matchId: string, me: string) {
  await matchOfMember(s, matchId, me);
  const items = await matchMessages(s.store, matchId);
  if (items.some((m) => m.recipient_id === me && m.read !== true)) {
    const r = await markMatchRead(s.bus, me, matchId, commandContext(s, ctx, me));
    await settled(s, r.position);
  }
  return items;
}

/** Reports a message of a match the member is in (the command checks membership and that it is not their own). */
export async function reportMessage(s: Services, ctx: Context, me: string, messageId: string, input: { reason: string; details: string | null }) {
  const msg = await getMatchMessage(s.store, messageId);
  if (!msg) throw notFound('Message', 'message_not_found');
  const r = await reportMatchMessage(s.bus, me, msg.match_id, msg._id, input, commandContext(s, ctx, me));
  await settled(s, r.position);
  return msg;
}

/** The member's matches, the newest first, each with the other member's name and what they have not read. */
export async function memberMatchList(s: Services, me: string) {
  const [matches, unread] = await Promise.all([matchesOf(s.store, me, MATCH_LIST_LIMIT), unreadByMatch(s.store, me)]);
  return Promise.all(matches.map((m) => matchSummary(s, me, m, unread.get(m._id) ?? 0)));
}

/** One match as its member `me` sees it listed: the other member's name, and `unread` messages. */
export async function matchSummary(s: Services, me: string, m: NonNullable<Awaited<ReturnType<typeof getMatch>>>, unread: number) {
  const other = await getUser(s.store, m.members.find((id) => id !== me) ?? me);
  return {
    match_id: m._id,
    other_member: { user_id: other?._id ?? null, full_name: typeof other?.full_name === 'string' ? other.full_name : null },
    reason: m.reason ?? null,
    created_at: m.created_at,
    message_count: typeof m.message_count === 'number' ? m.message_count : 0,
    last_message_at: m.last_message_at ?? null,
    unread_count: unread,
  };
}

export function matchRoutes(router: Router, s: Services): void {
  const memberMatch = (matchId: string, user: string) => matchOfMember(s, matchId, user);
  const member = async (id: string): Promise<Member> => {
    const u = await getUser(s.store, id);
    const agent = typeof u?.agent_id === 'string' ? await getAgent(s.store, u.agent_id) : null;
    return { user_id: id, full_name: u?.full_name ?? 'there', capabilities: agent?.capabilities ?? [] };
  };

  const adminMatches = new Router({ prefix: '/api/admin/matches' });
  mount(adminMatches, matchOperations.postAdminMatches, async (ctx, input) => {
    const admin = requireSuperAdmin(ctx);
    const body = input.body;
    const r = await createMatch(
      s.bus,
      { user_a_id: body.user_a_id, user_b_id: body.user_b_id, reason: body.reason?.trim() || null },
      commandContext(s, ctx, admin),
    );
    await settled(s, r.position);
    ctx.body = { match_id: r.match_id, members: [r.created.user_a_id, r.created.user_b_id], reason: r.created.reason, created_at: r.created.created_at };
  });

  router.use(adminMatches.routes());

  const list = new Router({ prefix: '/api/matches' });
  mount(list, matchOperations.getMatches, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    const matches = await memberMatchList(s, me);
    ctx.body = { matches, count: matches.length };
  });
  router.use(list.routes());

  const messages = new Router({ prefix: '/api/messages' });
  mount(messages, matchOperations.postMessages, async (ctx, input) => {
    const { userId: me } = requireUser(ctx);
    const body = input.body;
    const r = await sendMatchMessage(s.bus, me, body.match_id, body.content, commandContext(s, ctx, me));
    await settled(s, r.position);
    const doc = await getMatchMessage(s.store, r.message_id);
    if (!doc) throw notFound('Message', 'message_not_found');
    ctx.body = matchMessageView(doc);
  });

  mount(messages, matchOperations.getMessagesUnreadCount, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    ctx.body = { unread_count: await unreadMatchMessages(s.store, me) };
  });

  mount(messages, matchOperations.getMessagesByMatchId, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    ctx.body = (await readMatch(s, ctx, ctx.params.id, me)).map(matchMessageView);
  });

  mount(messages, matchOperations.deleteMessagesByMessageId, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    const msg = await getMatchMessage(s.store, ctx.params.id);
    if (!msg) throw notFound('Message', 'message_not_found');
    const r = await deleteMatchMessage(s.bus, me, msg.match_id, msg._id, commandContext(s, ctx, me));
    await settled(s, r.position);
    ctx.body = { message_id: msg._id, deleted: true };
  });

  mount(messages, matchOperations.postMessagesByMessageIdReport, async (ctx, input) => {
    const { userId: me } = requireUser(ctx);
    const body = input.body;
    const msg = await reportMessage(s, ctx, me, ctx.params.message_id, { reason: body.reason, details: body.details ?? null });
    ctx.body = { message_id: msg._id, reported: true };
  });

  mount(messages, matchOperations.getMessagesByMatchIdOpeners, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    const match = await memberMatch(ctx.params.match_id, me);
    const other = match.members.find((m) => m !== me) ?? me;
    ctx.body = { match_id: match._id, openers: openers(match._id, await member(me), await member(other), match.reason ?? null) };
  });

  mount(messages, matchOperations.getMessagesByMatchIdQuickReplies, async (ctx) => {
    const { userId: me } = requireUser(ctx);
    const match = await memberMatch(ctx.params.match_id, me);
    const other = match.members.find((m) => m !== me) ?? me;
    const received = (await matchMessages(s.store, match._id)).filter((m) => m.sender_id === other);
    const last = received[received.length - 1];
    ctx.body = {
      match_id: match._id,
      replies: quickReplies(match._id, last ? { message_id: last._id, content: String(last.content) } : null, await member(other)),
    };
  });

  router.use(messages.routes());
}
