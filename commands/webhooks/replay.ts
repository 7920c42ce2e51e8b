import { agentStream } from '../../events/agents.ts';
import { conflict, forbidden, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { DeliveryOutcome, WebhookReplayAttempted, WebhookReplayRequested } from '../../events/webhooks.ts';
import { MAX_REPLAY_DELIVERIES, replayStream } from '../../events/webhooks.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import type { AttemptResult, DisableWebhook } from './deliver.ts';
import { decideDisableWebhook, nextAttemptAt } from './deliver.ts';

/** Every event appended to `replay-<id>`. */
export type ReplayEvent = WebhookReplayRequested | WebhookReplayAttempted;

export interface ReplayState {
  requested: WebhookReplayRequested['data'] | null;
  /** The delivery being sent (index into `delivery_ids`); equal to their number once all arrived. */
  index: number;
  /** Attempts made for the delivery at `index`. */
  attempts: number;
  next_attempt_at: string | null;
  /** Every delivery arrived, or one ended without arriving (the replay stopped there). */
  done: boolean;
  stopped: boolean;
}

export const replayAggregate: Aggregate<ReplayState, ReplayEvent> = {
  initialState: () => ({ requested: null, index: 0, attempts: 0, next_attempt_at: null, done: false, stopped: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookReplayRequested':
        return { ...state, requested: event.data, next_attempt_at: event.data.requested_at, done: event.data.deliveries === 0 };
      case 'WebhookReplayAttempted': {
        const d = event.data;
        if (d.outcome === 'delivered') {
          const index = d.index + 1;
          const done = index >= (state.requested?.deliveries ?? 0);
          return { ...state, index, attempts: 0, next_attempt_at: done ? null : d.attempted_at, done };
        }
        if (d.next_attempt_at) return { ...state, attempts: d.attempt, next_attempt_at: d.next_attempt_at };
        return { ...state, attempts: d.attempt, next_attempt_at: null, done: true, stopped: true };
      }
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** Where a replay starts: after a delivery-list cursor (its delivery included) or at a time. */
export interface ReplayRange {
  from_cursor: string | null;
  from_time: string | null;
  to_time: string | null;
  limit: number;
}

/**
 * RequestWebhookReplay. The facts are loaded before deciding: whether the agent exists and its
 * webhook's state, the owner of the delivery the `from` cursor names, and the agent's deliveries
 * in the range (oldest first, at most `limit` + 1 to tell whether more exist).
 */
export type RequestWebhookReplay = Command<
  'RequestWebhookReplay',
  ReplayRange & {
    agent_id: string;
    requested_by: string;
    requested_by_role: 'agent' | 'admin';
    agent_exists: boolean;
    webhook: 'active' | 'not_configured' | 'disabled';
    /** The agent that owns the delivery named by `from_cursor` (null: no cursor, or the list's start). */
    from_delivery_agent_id: string | null;
    candidates: string[];
  },
  { now: Date; replay_id: string }
>;

/**
 * Exactly one of `from_cursor` / `from_time`, `to_time` after `from_time`, `limit` 1 to 1,000
 * (422); the agent must exist (404); a cursor naming another agent's delivery is refused (403);
 * the webhook must be configured (409 `webhook_not_configured`) and not disabled by a 410 (409
 * `webhook_disabled`). A range with nothing is recorded too (0 deliveries). A replay already
 * requested (a retried command) decides nothing.
 */
export function decideRequestWebhookReplay(command: RequestWebhookReplay, state: ReplayState): WebhookReplayRequested[] {
  if (state.requested) return [];
  const d = command.data;
  const { now, replay_id } = command.metadata;
  if ((d.from_cursor === null) === (d.from_time === null))
    throw new ValidationFailed([{ loc: ['body'], msg: 'give exactly one of from (a delivery cursor) and from_time', type: 'value_error.missing' }]);
  if (d.to_time !== null && d.from_time !== null && d.to_time <= d.from_time)
    throw new ValidationFailed([{ loc: ['body', 'to_time'], msg: 'to_time must be after from_time', type: 'value_error.range' }]);
  if (!Number.isInteger(d.limit) || d.limit < 1 || d.limit > MAX_REPLAY_DELIVERIES)
    throw new ValidationFailed([
      { loc: ['body', 'limit'], msg: `limit must be an integer from 1 to ${MAX_REPLAY_DELIVERIES}`, type: 'value_error.number.range' },
    ]);
  if (!d.agent_exists) throw notFound('Agent', 'agent_not_found');
  if (d.from_delivery_agent_id !== null && d.from_delivery_agent_id !== d.agent_id)
    throw forbidden("The from cursor names another agent's delivery", 'forbidden');
  if (d.webhook === 'not_configured') throw conflict('The agent has no webhook URL to replay to; configure one first', 'webhook_not_configured');
  if (d.webhook === 'disabled') throw conflict('The webhook was disabled by a 410 answer; configure it again first', 'webhook_disabled');
  const ids = d.candidates.slice(0, d.limit);
  return [
    {
      type: 'WebhookReplayRequested',
      data: {
        replay_id,
        agent_id: d.agent_id,
        requested_by: d.requested_by,
        requested_by_role: d.requested_by_role,
        from_cursor: d.from_cursor,
        from_time: d.from_time,
        to_time: d.to_time,
        limit: d.limit,
        delivery_ids: ids,
        deliveries: ids.length,
        has_more: d.candidates.length > d.limit,
        requested_at: now.toISOString(),
      },
    },
  ];
}

export async function requestWebhookReplay(bus: CommandBus, data: RequestWebhookReplay['data'], ctx: CommandContext) {
  const replayId = deriveId('rpl', ctx.commandId, 'webhook_replay');
  const command: RequestWebhookReplay = { type: 'RequestWebhookReplay', data, metadata: { now: ctx.now, replay_id: replayId } };
  const r = await bus.handle(replayStream(replayId), replayAggregate, (state) => decideRequestWebhookReplay(command, state), ctx);
  const requested = r.state.requested;
  if (!requested) throw new Error('replay not recorded');
  return { replay: requested, position: r.position };
}

/** RecordReplayAttempt: `jitter` (in [0, 1)) places a retry inside its jitter band. */
export type RecordReplayAttempt = Command<
  'RecordReplayAttempt',
  { delivery_id: string; inbox_id: string; url: string; result: AttemptResult },
  { now: Date; jitter: number }
>;

/**
 * Appends the next attempt of the delivery the replay is at (404 without a replay, 409
 * `replay_finished` once it ended, 409 `replay_out_of_order` for any other delivery, so two
 * workers cannot send out of order or record the same attempt twice). Retries follow the
 * delivery schedule; past its end the delivery is given up and the replay stops.
 */
export function decideRecordReplayAttempt(command: RecordReplayAttempt, state: ReplayState): WebhookReplayAttempted[] {
  const requested = state.requested;
  if (!requested) throw notFound('Replay', 'replay_not_found');
  if (state.done) throw conflict('Replay already finished', 'replay_finished');
  const { delivery_id, inbox_id, url, result } = command.data;
  if (requested.delivery_ids[state.index] !== delivery_id) throw conflict('Not the delivery this replay sends next', 'replay_out_of_order');
  const { now, jitter } = command.metadata;
  const attempt = state.attempts + 1;
  const retry = result.outcome === 'failed' ? nextAttemptAt(attempt, now, () => jitter) : null;
  const outcome: DeliveryOutcome = result.outcome === 'failed' && retry === null ? 'given_up' : result.outcome;
  return [
    {
      type: 'WebhookReplayAttempted',
      data: {
        replay_id: requested.replay_id,
        delivery_id,
        agent_id: requested.agent_id,
        inbox_id,
        index: state.index,
        attempt,
        url,
        status_code: result.status_code,
        outcome,
        error: result.error,
        duration_ms: Math.max(0, Math.round(result.duration_ms)),
        attempted_at: now.toISOString(),
        next_attempt_at: retry,
      },
    },
  ];
}

/** Records a replay attempt; a 410 also disables the agent's webhook, as for any delivery. */
export async function recordReplayAttempt(
  bus: CommandBus,
  replayId: string,
  data: RecordReplayAttempt['data'],
  ctx: CommandContext,
  random: () => number = Math.random,
) {
  const command: RecordReplayAttempt = { type: 'RecordReplayAttempt', data, metadata: { now: ctx.now, jitter: random() } };
  const r = await bus.handle(replayStream(replayId), replayAggregate, (state) => decideRecordReplayAttempt(command, state), ctx);
  const [{ data: attempted }] = r.events;
  let position = r.position;
  if (attempted.outcome === 'gone') {
    const disable: DisableWebhook = {
      type: 'DisableWebhook',
      data: { agent_id: attempted.agent_id, delivery_id: attempted.delivery_id },
      metadata: { now: ctx.now },
    };
    const d = await bus.handle(agentStream(attempted.agent_id), agentAggregate, (state) => decideDisableWebhook(disable, state), {
      ...ctx,
      commandId: `${ctx.commandId}:disable`,
    });
    position = Math.max(position, d.position);
  }
  return { attempt: attempted, state: r.state, position };
}
