import type { EventOfType } from '../../events/catalogue.ts';
import { agentStream } from '../../events/agents.ts';
import type { MatchCreated } from '../../events/humans.ts';
import { matchStream } from '../../events/humans.ts';
import { DomainError, forbidden, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { IntroApproved, IntroDeclined, IntroRequested } from '../../events/social.ts';
import { introStream } from '../../events/social.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { CreateMatch, MatchState } from '../humans/matches.ts';
import { decideCreateMatch, matchAggregate } from '../humans/matches.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** An intro request lives 14 days (shared DECISIONS). */
export const INTRO_TTL_MS = 14 * 24 * 3600_000;

export type RequestIntro = Command<
  'RequestIntro',
  {
    member_id: string;
    reason: string;
    /** From the members read model: the member exists and is discoverable. */
    member_listed: boolean;
    /** From the intros read model: a pending request of this agent to this member. */
    pending_exists: boolean;
  },
  { now: Date; intro_id: string }
>;

/**
 * RequestIntro (0.25, like a DM), on the agent's stream: only a claimed agent with an owner (403
 * `agent_not_claimed`), only to a discoverable member (404) other than its owner (400), one pending
 * request per member (409), and the balance must cover it (402).
 */
export function decideRequestIntro(command: RequestIntro, state: AgentState): IntroRequested[] {
  const d = command.data;
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  if (!state.claimed || !state.owner_user_id) throw forbidden('Only a claimed agent can request introductions', 'agent_not_claimed');
  if (!d.member_listed) throw notFound('Member', 'member_not_found');
  if (d.member_id === state.owner_user_id) throw new DomainError(400, 'cannot_intro_self', 'This member is your own owner');
  if (d.pending_exists) throw new DomainError(409, 'intro_pending', 'An introduction to this member is already waiting for their answer');
  const now = command.metadata.now;
  return [
    {
      type: 'IntroRequested',
      data: {
        intro_id: command.metadata.intro_id,
        agent_id: state.agent_id,
        agent_name: state.name,
        owner_user_id: state.owner_user_id,
        member_id: d.member_id,
        reason: d.reason,
        requested_at: now.toISOString(),
        expires_at: new Date(now.getTime() + INTRO_TTL_MS).toISOString(),
        charge: charge(state, 'intro_request'),
      },
    },
  ];
}

export async function requestIntro(
  bus: CommandBus,
  agentId: string,
  input: { member_id: string; reason: string },
  ctx: CommandContext,
  facts: { member_listed: boolean; pending_exists: boolean },
) {
  const command: RequestIntro = {
    type: 'RequestIntro',
    data: { ...input, ...facts },
    metadata: { now: ctx.now, intro_id: deriveId('int', ctx.commandId) },
  };
  return bus.handle<AgentState, Parameters<typeof agentAggregate.evolve>[1], IntroRequested[]>(
    agentStream(agentId),
    agentAggregate,
    (state) => decideRequestIntro(command, state),
    ctx,
  );
}

export type IntroStreamEvent = EventOfType<'IntroApproved' | 'IntroDeclined'>;

/** `intro-<intro_id>`: the member's answer. */
export interface IntroState {
  decision: 'approved' | 'declined' | null;
  approved: IntroApproved['data'] | null;
}

export const introAggregate: Aggregate<IntroState, IntroStreamEvent> = {
  initialState: () => ({ decision: null, approved: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'IntroApproved':
        return { decision: 'approved', approved: event.data };
      case 'IntroDeclined':
        return { ...state, decision: 'declined' };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

/** The request as recorded (from the intros read model), or null when there is none. */
export interface IntroRequest {
  intro_id: string;
  agent_id: string;
  owner_user_id: string;
  member_id: string;
  expires_at: string;
}

export type DecideIntro = Command<'ApproveIntro' | 'DeclineIntro', { user_id: string; request: IntroRequest | null }>;

function checkAnswer(command: DecideIntro, state: IntroState): IntroRequest {
  const { request, user_id } = command.data;
  // Someone else's intro is not shown to exist.
  if (!request || request.member_id !== user_id) throw notFound('Introduction', 'intro_not_found');
  if (state.decision) throw new DomainError(409, 'intro_decided', `This introduction was already ${state.decision}`);
  if (command.metadata.now.toISOString() >= request.expires_at) throw new DomainError(409, 'intro_expired', 'This introduction request has expired');
  return request;
}

/** ApproveIntro (the member, an owner action): pending and not expired (409), else IntroApproved naming the match it opens. */
export function decideApproveIntro(command: DecideIntro, state: IntroState): IntroApproved[] {
  if (state.decision === 'approved' && command.data.request?.member_id === command.data.user_id) return [];
  const r = checkAnswer(command, state);
  return [
    {
      type: 'IntroApproved',
      data: {
        intro_id: r.intro_id,
        member_id: r.member_id,
        agent_id: r.agent_id,
        owner_user_id: r.owner_user_id,
        match_id: deriveId('mtc', `intro:${r.intro_id}`),
        approved_at: command.metadata.now.toISOString(),
      },
    },
  ];
}

export function decideDeclineIntro(command: DecideIntro, state: IntroState): IntroDeclined[] {
  const r = checkAnswer(command, state);
  return [
    { type: 'IntroDeclined', data: { intro_id: r.intro_id, member_id: r.member_id, agent_id: r.agent_id, declined_at: command.metadata.now.toISOString() } },
  ];
}

/**
 * The member approves or declines. An approval then opens the match between the agent's owner and
 * the member on `match-<id>` (id derived from the intro, so a retried approval re-runs it and
 * appends nothing twice).
 */
export async function answerIntro(bus: CommandBus, userId: string, request: IntroRequest | null, approve: boolean, ctx: CommandContext) {
  const introId = request?.intro_id ?? 'none';
  if (!approve) {
    const command: DecideIntro = { type: 'DeclineIntro', data: { user_id: userId, request }, metadata: { now: ctx.now } };
    const r = await bus.handle<IntroState, IntroStreamEvent, IntroDeclined[]>(introStream(introId), introAggregate, (s) => decideDeclineIntro(command, s), ctx);
    return { status: 'declined' as const, match_id: null, position: r.position };
  }
  const command: DecideIntro = { type: 'ApproveIntro', data: { user_id: userId, request }, metadata: { now: ctx.now } };
  const r = await bus.handle<IntroState, IntroStreamEvent, IntroApproved[]>(introStream(introId), introAggregate, (s) => decideApproveIntro(command, s), ctx);
  const approved = r.state.approved;
  if (!approved) throw notFound('Introduction', 'intro_not_found');
  const create: CreateMatch = {
    type: 'CreateMatch',
    data: {
      user_a_id: approved.owner_user_id,
      user_b_id: approved.member_id,
      reason: `Introduction ${approved.intro_id}`,
      users_exist: true,
      created_by: `intro:${approved.intro_id}`,
    },
    metadata: { now: ctx.now, match_id: approved.match_id },
  };
  const m = await bus.handle<MatchState, Parameters<typeof matchAggregate.evolve>[1], MatchCreated[]>(
    matchStream(approved.match_id),
    matchAggregate,
    (s) => decideCreateMatch(create, s),
    { ...ctx, commandId: `${ctx.commandId}:match` },
  );
  return { status: 'approved' as const, match_id: approved.match_id, position: Math.max(r.position, m.position) };
}
