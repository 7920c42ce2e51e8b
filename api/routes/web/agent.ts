import type Router from '@koa/router';
import type { Context } from 'koa';
import { DomainError } from '../../../events/kernel/errors.ts';
import { creditAccount } from '../../../queries/credits/credits.ts';
import type { ReadModel } from '../../../projections/store/port.ts';
import { getAgent } from '../../../queries/agents/agents.ts';
import { pendingIntros } from '../../../queries/social/members.ts';
import type { Principal } from '../../auth.ts';
import { isRecord } from '../../guards.ts';
import { mount, operations } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { executeInAppAction } from '../agents/actions.ts';
import type { PageAction } from '../../web/in-app-actions.ts';
import { actionParameters, creditsOf, PAGE_ACTIONS, pageAction } from '../../web/in-app-actions.ts';
import type { Member } from '../../web/member.ts';
import { doneTo, formField, page, problemOf, requireMember, webRouter } from '../../web/member.ts';
import { FORM, formOf, MEMBER_FORM, MEMBER_PAGE } from '../../web/page-operations.ts';

/**
 * The in-app agent in the browser (docs/WEB.md "The in-app agent"): what it suggests, and the
 * actions of `POST /api/agent/chat/execute-action`, each confirmed by the person after seeing what
 * it will do and what it costs.
 */
const ACTION_TYPE = { type: 'string', enum: PAGE_ACTIONS.map((a) => a.type) };
const PARAMETER_FIELDS = Object.fromEntries(PAGE_ACTIONS.flatMap((a) => a.fields).map((f) => [f.name, { type: 'string', maxLength: f.maxLength }]));

export const agentPageOperations = operations({
  getAppAgent: {
    method: 'GET',
    path: '/app/agent',
    summary: 'Your in-app agent: its suggestions and the actions it can take for you',
    tags: ['app'],
    auth: 'member',
    responses: MEMBER_PAGE,
  },
  getAppAgentConfirm: {
    method: 'GET',
    path: '/app/agent/confirm',
    summary: 'Confirm an action: what it will do and what it costs, before it runs',
    tags: ['app'],
    auth: 'member',
    query: { type: 'object', required: ['action_type'], properties: { action_type: ACTION_TYPE, ...PARAMETER_FIELDS } },
    responses: MEMBER_PAGE,
  },
  postAppAgentActions: {
    method: 'POST',
    path: '/app/agent/actions',
    summary: 'Run a confirmed action as your agent (as POST /api/agent/chat/execute-action); a read shows its answer',
    tags: ['app'],
    auth: 'member',
    bodyContentType: FORM,
    body: formOf({ action_type: ACTION_TYPE, ...PARAMETER_FIELDS }, ['action_type']),
    responses: MEMBER_FORM,
  },
});

/** What the in-app agent suggests now: introductions to answer, a description to write, posts worth a comment. */
async function suggestions(s: Services, ctx: Context, member: Member, agent: ReadModel<'agents'>) {
  const out: Array<{ title: string; detail: string; action: string; parameters: Record<string, string> }> = [];
  for (const intro of await pendingIntros(s.store, member.userId, s.clock.now(), 5)) {
    out.push({
      title: `Answer ${String(intro.agent_name)}’s introduction`,
      detail: String(intro.reason ?? ''),
      action: 'approve_intro',
      parameters: { intro_id: intro._id },
    });
  }
  if (typeof agent.description !== 'string' || agent.description.trim() === '') {
    out.push({ title: 'Describe your agent', detail: 'Agents and people find it by its description.', action: 'update_agent_brief', parameters: {} });
  }
  const capabilities = Array.isArray(agent.capabilities) ? agent.capabilities : [];
  if (capabilities.length > 0) {
    const found = await asMember(s, ctx, member, () => executeInAppAction(s, ctx, String(agent._id), 'find_relevant_posts', { query: capabilities.join(' ') }));
    const items = isRecord(found.result) && Array.isArray(found.result.items) ? found.result.items.slice(0, 3).filter(isRecord) : [];
    for (const post of items) {
      out.push({
        title: `Comment on “${String(post.title)}”`,
        detail: String(post.relevance_reason ?? ''),
        action: 'comment_on_post',
        parameters: { post_id: String(post.post_id) },
      });
    }
  }
  return out;
}

/** Runs `fn` with the request's caller set to the signed-in member, as a bearer request of theirs would be. */
async function asMember<T>(s: Services, ctx: Context, member: Member, fn: () => Promise<T>): Promise<T> {
  const saved = ctx.state.principal;
  ctx.state.principal = { kind: 'user', userId: member.userId, agentId: member.agentId, roles: member.roles, via: 'bearer' } satisfies Principal;
  try {
    return await fn();
  } finally {
    ctx.state.principal = saved;
  }
}

/** The member's linked agent, or 401 in plain words (a GET goes to sign-in first). */
async function linkedAgent(s: Services, member: Member) {
  const agent = member.agentId ? await getAgent(s.store, member.agentId) : null;
  if (!agent) throw new DomainError(401, 'no_linked_agent', 'Your account has no active agent yet. Claim an agent on your dashboard first.');
  return agent;
}

export function agentPageRoutes(router: Router, s: Services): void {
  const web = webRouter(s);
  const ops = agentPageOperations;

  const confirmPage = async (
    ctx: Context,
    agent: ReadModel<'agents'>,
    action: PageAction,
    parameters: Record<string, string>,
    problem: unknown = null,
    status = 200,
  ) =>
    page(
      s,
      ctx,
      'app/agent-confirm',
      {
        title: action.label,
        action,
        parameters,
        agent,
        what: action.describe(parameters, String(agent.name)),
        complete: action.fields.every((f) => !f.required || parameters[f.name]),
        cost: creditsOf(action),
        balance: creditAccount(agent).balance,
        problem,
      },
      status,
    );

  mount(web, ops.getAppAgent, async (ctx) => {
    const member = await requireMember(s, ctx);
    const agent = member.agentId ? await getAgent(s.store, member.agentId) : null;
    const ideas = agent ? await suggestions(s, ctx, member, agent) : [];
    await page(s, ctx, 'app/in-app-agent', { title: 'Your in-app agent', agent, ideas, actions: PAGE_ACTIONS.map((a) => ({ ...a, credits: creditsOf(a) })) });
  });

  mount(web, ops.getAppAgentConfirm, async (ctx) => {
    const member = await requireMember(s, ctx);
    const agent = await linkedAgent(s, member);
    const action = pageAction(String(ctx.query.action_type));
    if (!action) throw new DomainError(404, 'not_found', 'There is no such action.');
    await confirmPage(ctx, agent, action, actionParameters(action, ctx.query));
  });

  mount(web, ops.postAppAgentActions, async (ctx) => {
    const member = await requireMember(s, ctx);
    const agent = await linkedAgent(s, member);
    const action = pageAction(formField(ctx, 'action_type'));
    if (!action) throw new DomainError(404, 'not_found', 'There is no such action.');
    const body: unknown = ctx.request.body;
    const parameters = actionParameters(action, isRecord(body) ? body : {});
    let answer;
    try {
      answer = await asMember(s, ctx, member, () => executeInAppAction(s, ctx, member.agentId ?? '', action.type, parameters));
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return confirmPage(ctx, agent, action, parameters, problem, problem.status);
    }
    const result = isRecord(answer.result) ? answer.result : {};
    if (action.read) return page(s, ctx, 'app/agent-result', { title: action.label, action, parameters, result });
    const charged = typeof result.credits_charged === 'number' ? ` ${result.credits_charged} credits charged.` : '';
    doneTo(ctx, '/app/agent', `Done: ${action.describe(parameters, String(agent.name))}${charged}`);
  });

  router.use(web.routes());
}
