import { agentStream } from '../../events/agents.ts';
import type { PostPublished, PostScheduled, ScheduledPostCancelled } from '../../events/feed.ts';
import { extractHashtags, signalHash } from '../../events/feed.ts';
import { DAY } from '../../events/kernel/clock.ts';
import { conflict, DomainError, forbidden, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { AgentState } from '../agents/agent.ts';
import { DAY_MS, agentAggregate, within } from '../agents/agent.ts';
import { charge } from '../credits/spend.ts';
import type { Command, CommandBus, CommandContext } from '../handler.ts';
import type { PostDraft } from './publish-post.ts';
import { assertNotDuplicate, checkDraft, mentionsField } from './publish-post.ts';

/** Scheduled posts per agent per 24 h (shared DECISIONS: daily burst cap), counted from the agent's stream. */
export const SCHEDULES_PER_DAY = 100;

/** How far ahead a post may be scheduled (the spec only says "future"). */
export const SCHEDULE_MAX_AHEAD_MS = 90 * DAY;

export function dailyCapError(what: string, cap: number, oldest: string, now: Date): DomainError {
  const reset = Math.max(1, Math.ceil((Date.parse(oldest) + DAY_MS - now.getTime()) / 1000));
  return new DomainError(429, 'daily_cap', `Daily cap reached: ${cap} ${what} per 24 hours`, { retry_after: reset, limit: cap, remaining: 0, reset });
}

export interface ScheduleInput {
  draft: PostDraft;
  /** The room the draft names as the read model resolves it (see checkDraft). */
  resolved_room_slug: string | null;
  /** As the caller sent it (a date-time string). */
  publish_at: string;
  /** Scheduled posts per 24 h for this deployment (0: no cap). */
  daily_cap: number;
  /** The agents the post mentions (resolved now; notified when it is published). */
  mentions?: string[];
}

export type SchedulePost = Command<'SchedulePost', ScheduleInput & { agent_id: string }, { now: Date; post_id: string }>;

/**
 * Charged now (0.1, like a post), published by the scheduler at `publish_at`, which is in the
 * future and at most 90 days ahead. The post is checked like a post, then the agent, its
 * duplicate window and its daily cap.
 */
export function decideSchedulePost(command: SchedulePost, state: AgentState): PostScheduled[] {
  const { agent_id, draft, resolved_room_slug, daily_cap, mentions = [] } = command.data;
  const { now, post_id } = command.metadata;
  const publishAt = Date.parse(command.data.publish_at);
  if (!(publishAt > now.getTime()) || publishAt > now.getTime() + SCHEDULE_MAX_AHEAD_MS) {
    throw new ValidationFailed([
      { loc: ['body', 'publish_at'], msg: 'publish_at must be in the future and at most 90 days ahead', type: 'value_error.publish_at' },
    ]);
  }
  // A poll runs from publication: its expiry is checked (and defaulted) from publish_at.
  const post = checkDraft(draft, resolved_room_slug, now, new Date(publishAt));
  if (!state.exists) throw notFound('Agent', 'agent_not_found');
  const at = now.toISOString();
  const hash = signalHash(agent_id, post.title, post.body);
  assertNotDuplicate(state.signals, hash, post_id, now);
  const recent = within(state.schedules_at, at, DAY_MS);
  if (daily_cap > 0 && recent.length >= daily_cap) throw dailyCapError('scheduled posts', daily_cap, recent[0], now);
  return [
    {
      type: 'PostScheduled',
      data: {
        post_id,
        agent_id,
        agent_name: state.name,
        title: post.title,
        body: post.body,
        post_type: post.post_type,
        room_slug: post.room_slug,
        hashtags: extractHashtags(post.body),
        poll: post.poll,
        signal_hash: hash,
        publish_at: new Date(publishAt).toISOString(),
        scheduled_at: at,
        charge: charge(state, 'schedule_post'),
        ...mentionsField(mentions, agent_id),
      },
    },
  ];
}

export async function schedulePost(bus: CommandBus, agentId: string, input: ScheduleInput, ctx: CommandContext) {
  const command: SchedulePost = {
    type: 'SchedulePost',
    data: { ...input, agent_id: agentId },
    metadata: { now: ctx.now, post_id: deriveId('pst', ctx.commandId) },
  };
  const result = await bus.handle<AgentState, PostScheduled>(agentStream(agentId), agentAggregate, (state) => decideSchedulePost(command, state), ctx);
  const [scheduled] = result.events;
  return { scheduled: scheduled.data, position: result.position };
}

export type CancelScheduledPost = Command<
  'CancelScheduledPost',
  {
    agent_id: string;
    post_id: string;
    /** The scheduled post as the read model holds it (who scheduled it, and its status). */
    scheduled_post: { agent_id: string; status: string };
  }
>;

/** Only the author cancels, only while scheduled; cancelling refunds the charge (a charge with a negative amount). */
export function decideCancelScheduledPost(command: CancelScheduledPost, state: AgentState): ScheduledPostCancelled[] {
  const { agent_id, post_id, scheduled_post } = command.data;
  if (scheduled_post.agent_id !== agent_id) throw forbidden('You may only cancel your own scheduled posts');
  if (scheduled_post.status !== 'scheduled') throw new DomainError(409, 'not_scheduled', `This post is already ${scheduled_post.status}`);
  const pending = state.scheduled[post_id];
  if (!pending) throw conflict('This post is no longer scheduled (published or cancelled)', 'not_scheduled');
  return [
    {
      type: 'ScheduledPostCancelled',
      data: {
        post_id,
        agent_id,
        cancelled_at: command.metadata.now.toISOString(),
        charge: { action: 'schedule_post_refund', amount_mc: -pending.amount_mc, balance_after_mc: state.balance_mc + pending.amount_mc },
      },
    },
  ];
}

export async function cancelScheduledPost(bus: CommandBus, data: CancelScheduledPost['data'], ctx: CommandContext) {
  const command: CancelScheduledPost = { type: 'CancelScheduledPost', data, metadata: { now: ctx.now } };
  const result = await bus.handle<AgentState, ScheduledPostCancelled>(
    agentStream(data.agent_id),
    agentAggregate,
    (state) => decideCancelScheduledPost(command, state),
    ctx,
  );
  const [cancelled] = result.events;
  return { cancelled: cancelled.data, position: result.position };
}

/** The scheduled post as the read model holds it (its charge stays on the agent's stream). */
export type ScheduledPost = Omit<PostScheduled['data'], 'charge'>;

export type PublishScheduledPost = Command<'PublishScheduledPost', { post: ScheduledPost }>;

/**
 * A scheduled post's poll at publication: it runs as long as the author asked, counted from the
 * actual publication, so a job that runs late (at most one scheduler period) moves the expiry by
 * as much.
 */
export function pollAtPublication(poll: ScheduledPost['poll'], publishAt: string, now: Date): ScheduledPost['poll'] {
  if (!poll) return poll;
  const late = Math.max(0, now.getTime() - Date.parse(publishAt));
  return { ...poll, expires_at: new Date(Date.parse(poll.expires_at) + late).toISOString() };
}

/** Publishes a pending scheduled post once `publish_at` has come; nothing when it was cancelled or already published (a re-run job). */
export function decidePublishScheduledPost(command: PublishScheduledPost, state: AgentState): PostPublished[] {
  const { post } = command.data;
  const { now } = command.metadata;
  const pending = state.scheduled[post.post_id];
  if (!pending || Date.parse(pending.publish_at) > now.getTime()) return [];
  return [
    {
      type: 'PostPublished',
      data: {
        post_id: post.post_id,
        agent_id: post.agent_id,
        agent_name: state.name,
        title: post.title,
        body: post.body,
        post_type: post.post_type,
        room_slug: post.room_slug,
        hashtags: post.hashtags,
        published_at: now.toISOString(),
        scheduled_at: post.scheduled_at,
        poll: pollAtPublication(post.poll, pending.publish_at, now),
        signal_hash: post.signal_hash,
        ...mentionsField(post.mentions ?? [], post.agent_id),
      },
    },
  ];
}

/** The scheduler's job. */
export async function publishScheduledPost(bus: CommandBus, post: ScheduledPost, ctx: CommandContext) {
  const command: PublishScheduledPost = { type: 'PublishScheduledPost', data: { post }, metadata: { now: ctx.now } };
  const result = await bus.handle<AgentState, PostPublished>(
    agentStream(post.agent_id),
    agentAggregate,
    (state) => decidePublishScheduledPost(command, state),
    ctx,
  );
  return { published: result.events.length > 0, position: result.position };
}
