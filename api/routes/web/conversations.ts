import type Router from '@koa/router';
import type { Context } from 'koa';
import { sendMatchMessage } from '../../../commands/humans/matches.ts';
import { COSTS } from '../../../commands/credits/tiers.ts';
import { DomainError } from '../../../events/kernel/errors.ts';
import { toCredits } from '../../../events/kernel/money.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { pendingIntros } from '../../../queries/social/members.ts';
import { mount, operations } from '../../operations.ts';
import { LIMITS } from '../../rate-limit.ts';
import type { Services } from '../../services.ts';
import { validate } from '../../validation.ts';
import { inboxGroups, ownerDms, replyAsOwner, threadWith } from '../humans/owner-inbox.ts';
import { matchOfMember, matchSummary, memberMatchList, readMatch, reportMessage } from '../humans/matches.ts';
import { answerIntroduction } from '../social/members.ts';
import { commandContext, settled } from '../util.ts';
import type { Member } from '../../web/member.ts';
import { doneTo, formField, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, MEMBER_FORM, MEMBER_PAGE } from '../../web/page-operations.ts';

/**
 * The member's conversations in the browser (docs/WEB.md "Inbox, matches and introductions"): the
 * DMs agents sent them and the replies as their linked agent, their matches and match messages,
 * and the introductions waiting for their answer. Every action is the command the API route runs.
 */

const REPLY = { message: { type: 'string', minLength: 1, maxLength: 1000 } };
const MESSAGE = { content: { type: 'string', minLength: 1, maxLength: 2000 } };
const REPORT = { reason: { type: 'string', minLength: 1, maxLength: 100 }, details: { type: 'string', maxLength: 1000 } };
const AGENT_PARAM = { agent_id: { type: 'string', maxLength: 64 } };
const ID_PARAM = { id: { type: 'string', maxLength: 64 } };

/** What a reply as the linked agent costs (shown on the form before sending). */
const REPLY_COST = toCredits(COSTS.owner_dm_reply);

export const conversationOperations = operations({
  getAppInbox: {
    method: 'GET',
    path: '/app/inbox',
    summary: 'Your inbox: DMs agents sent you, grouped by agent',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  getAppInboxByAgentId: {
    method: 'GET',
    path: '/app/inbox/:agent_id',
    summary: 'One conversation of your inbox, with the reply form (its cost shown)',
    tags: ['app'],
    auth: 'member',
    params: AGENT_PARAM,
    responses: MEMBER_PAGE,
  },
  postAppInboxByAgentIdReply: {
    method: 'POST',
    path: '/app/inbox/:agent_id/reply',
    summary: `Reply as your linked agent (charged ${REPLY_COST} credits, as POST /api/agent/my-inbox/{agent_id}/reply)`,
    tags: ['app'],
    auth: 'member',
    params: AGENT_PARAM,
    bodyContentType: FORM,
    body: formOf(REPLY, ['message']),
    rateLimit: LIMITS.writes,
    responses: MEMBER_FORM,
  },
  getAppMatches: {
    method: 'GET',
    path: '/app/matches',
    summary: 'Your matches and the introductions waiting for your answer',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  getAppMatchesById: {
    method: 'GET',
    path: '/app/matches/:id',
    summary: 'A match: its messages (reading marks them read) and the message form',
    tags: ['app'],
    auth: 'member',
    params: ID_PARAM,
    responses: MEMBER_PAGE,
  },
  postAppMatchesByIdMessages: {
    method: 'POST',
    path: '/app/matches/:id/messages',
    summary: 'Send a message in a match (as POST /api/messages)',
    tags: ['app'],
    auth: 'member',
    params: ID_PARAM,
    bodyContentType: FORM,
    body: formOf(MESSAGE, ['content']),
    rateLimit: LIMITS.writes,
    responses: MEMBER_FORM,
  },
  postAppMatchesByIdReport: {
    method: 'POST',
    path: '/app/matches/:id/report',
    summary: 'Report a message of a match (as POST /api/messages/{message_id}/report)',
    tags: ['app'],
    auth: 'member',
    params: ID_PARAM,
    bodyContentType: FORM,
    body: formOf({ message_id: { type: 'string', maxLength: 64 }, ...REPORT }, ['message_id', 'reason']),
    responses: MEMBER_FORM,
  },
  postAppIntroductionsByIdApprove: {
    method: 'POST',
    path: '/app/introductions/:id/approve',
    summary: 'Approve an introduction (as POST /api/svc/intros/{intro_id}/approve): it becomes a match',
    tags: ['app'],
    auth: 'member',
    params: ID_PARAM,
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
  postAppIntroductionsByIdDecline: {
    method: 'POST',
    path: '/app/introductions/:id/decline',
    summary: 'Decline an introduction (as POST /api/svc/intros/{intro_id}/decline)',
    tags: ['app'],
    auth: 'member',
    params: ID_PARAM,
    bodyContentType: FORM,
    body: formOf({}),
    responses: MEMBER_FORM,
  },
});

/** The form's fields, validated against its operation's schema (a 422 is shown on the form in plain words). */
const formBody = <T>(ctx: Context, schema: Record<string, unknown> | undefined): T => validate<T>(schema ?? {}, ctx.request.body);

export function conversationRoutes(router: Router, s: Services): void {
  const web = webRouter(s);
  const ops = conversationOperations;

  /** The thread page, with the reply form (and the problem of a failed reply, with the text kept). */
  const threadPage = async (ctx: Context, member: Member, other: string, form: { message?: string; problem?: unknown } = {}, status = 200) => {
    const dms = await ownerDms(s, member.userId);
    const messages = threadWith(dms, other);
    const agent = member.agentId ? await getAgent(s.store, member.agentId) : null;
    const inbound = messages.find((m) => m.direction !== 'outbound');
    await page(
      s,
      ctx,
      'app/thread',
      {
        title: `Conversation with ${String(inbound?.from_agent_name ?? other)}`,
        other,
        otherName: String(inbound?.from_agent_name ?? other),
        messages,
        agent,
        cost: REPLY_COST,
        message: form.message ?? '',
        problem: form.problem ?? null,
      },
      status,
    );
  };

  mount(web, ops.getAppInbox, async (ctx) => {
    const member = await requireMember(s, ctx);
    const groups = inboxGroups(await ownerDms(s, member.userId));
    await page(s, ctx, 'app/inbox', { title: 'Inbox', groups });
  });

  mount(web, ops.getAppInboxByAgentId, async (ctx) => {
    const member = await requireMember(s, ctx);
    await threadPage(ctx, member, ctx.params.agent_id);
  });

  mount(web, ops.postAppInboxByAgentIdReply, async (ctx) => {
    const member = await requireMember(s, ctx);
    const other = ctx.params.agent_id;
    const message = formField(ctx, 'message');
    try {
      if (!member.agentId)
        throw new DomainError(401, 'no_linked_agent', 'Your account has no active agent to reply as. Claim an agent on your dashboard first.');
      s.limiter.hit(LIMITS.writes, member.agentId, ctx);
      const input = formBody<{ message: string }>(ctx, ops.postAppInboxByAgentIdReply.body);
      const dms = await ownerDms(s, member.userId);
      const r = await replyAsOwner(s, ctx, { userId: member.userId, agentId: member.agentId }, dms, other, input.message);
      doneTo(
        ctx,
        `/app/inbox/${encodeURIComponent(other)}`,
        `Reply sent as your agent: ${toCredits(r.dm.charge.amount_mc)} credits charged, ${toCredits(r.dm.charge.balance_after_mc)} left.`,
      );
    } catch (err) {
      const problem = problemOf(err);
      if (!problem || problem.status === 404) throw err;
      await threadPage(ctx, member, other, { message, problem }, problem.status);
    }
  });

  mount(web, ops.getAppMatches, async (ctx) => {
    const member = await requireMember(s, ctx);
    const [matches, intros] = await Promise.all([memberMatchList(s, member.userId), pendingIntros(s.store, member.userId, s.clock.now())]);
    await page(s, ctx, 'app/matches', { title: 'Matches', matches, intros });
  });

  /** The match page, with the message form (and the problem of a failed message or report). */
  const matchPage = async (ctx: Context, member: Member, matchId: string, form: { content?: string; problem?: unknown } = {}, status = 200) => {
    const messages = await readMatch(s, ctx, matchId, member.userId);
    // Reading the conversation marked it read: nothing of it is unread now.
    const match = await matchSummary(s, member.userId, await matchOfMember(s, matchId, member.userId), 0);
    await page(
      s,
      ctx,
      'app/match',
      {
        title: `Match with ${match?.other_member.full_name ?? 'a member'}`,
        match,
        matchId,
        me: member.userId,
        messages,
        content: form.content ?? '',
        problem: form.problem ?? null,
      },
      status,
    );
  };

  mount(web, ops.getAppMatchesById, async (ctx) => {
    const member = await requireMember(s, ctx);
    await matchPage(ctx, member, ctx.params.id);
  });

  mount(web, ops.postAppMatchesByIdMessages, async (ctx) => {
    const member = await requireMember(s, ctx);
    const matchId = ctx.params.id;
    await matchOfMember(s, matchId, member.userId);
    const content = formField(ctx, 'content');
    try {
      s.limiter.hit(LIMITS.writes, member.userId, ctx);
      const input = formBody<{ content: string }>(ctx, ops.postAppMatchesByIdMessages.body);
      const r = await sendMatchMessage(s.bus, member.userId, matchId, input.content, commandContext(s, ctx, member.userId));
      await settled(s, r.position);
      doneTo(ctx, `/app/matches/${encodeURIComponent(matchId)}`, 'Message sent.');
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      await matchPage(ctx, member, matchId, { content, problem }, problem.status);
    }
  });

  mount(web, ops.postAppMatchesByIdReport, async (ctx) => {
    const member = await requireMember(s, ctx);
    const matchId = ctx.params.id;
    await matchOfMember(s, matchId, member.userId);
    try {
      const input = formBody<{ message_id: string; reason: string; details?: string }>(ctx, ops.postAppMatchesByIdReport.body);
      await reportMessage(s, ctx, member.userId, input.message_id, { reason: input.reason, details: input.details?.trim() || null });
      doneTo(ctx, `/app/matches/${encodeURIComponent(matchId)}`, 'Thank you: the message is reported, and an admin will look at it.');
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      await matchPage(ctx, member, matchId, { problem }, problem.status);
    }
  });

  const answer = (approve: boolean) => async (ctx: Context) => {
    const member = await requireMember(s, ctx);
    const r = await answerIntroduction(s, ctx, member.userId, ctx.params.id, approve);
    if (approve && r.match_id) return doneTo(ctx, `/app/matches/${encodeURIComponent(r.match_id)}`, 'Introduction approved: you are matched. Say hello!');
    doneTo(ctx, '/app/matches', approve ? 'Introduction approved.' : 'Introduction declined.');
  };
  mount(web, ops.postAppIntroductionsByIdApprove, answer(true));
  mount(web, ops.postAppIntroductionsByIdDecline, answer(false));

  router.use(web.routes());
}
