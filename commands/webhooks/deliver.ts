import { agentStream } from '../../events/agents.ts';
import { MINUTE, HOUR } from '../../events/kernel/clock.ts';
import { conflict, notFound } from '../../events/kernel/errors.ts';
import type { DeliveryOutcome, WebhookDeliveryAttempted, WebhookDeliveryQueued, WebhookDisabled } from '../../events/webhooks.ts';
import { deliveryStream } from '../../events/webhooks.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import type { AgentState } from '../agents/agent.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** Delay before attempt n+1 after attempt n failed (index n-1): about 0 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h. */
export const RETRY_DELAYS_MS = [30_000, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Jitter: each delay is scaled by a factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.1;

/** Every event appended to `delivery-<id>`. */
export type DeliveryEvent = WebhookDeliveryQueued | WebhookDeliveryAttempted;

export interface DeliveryState {
  queued: WebhookDeliveryQueued['data'] | null;
  attempts: number;
  done: boolean;
}

export const deliveryAggregate: Aggregate<DeliveryState, DeliveryEvent> = {
  initialState: () => ({ queued: null, attempts: 0, done: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookDeliveryQueued':
        return { ...state, queued: event.data };
      case 'WebhookDeliveryAttempted':
        return { ...state, attempts: event.data.attempt, done: event.data.next_attempt_at === null };
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** QueueWebhookDelivery: one inbox event for one webhook, its body fixed once. */
export type QueueWebhookDelivery = Command<'QueueWebhookDelivery', WebhookDeliveryQueued['data'], { now: Date }>;

/** Once per inbox entry: a delivery already queued queues nothing again. */
export function decideQueueWebhookDelivery(command: QueueWebhookDelivery, state: DeliveryState): WebhookDeliveryQueued[] {
  return state.queued ? [] : [{ type: 'WebhookDeliveryQueued', data: command.data }];
}

/**
 * Appended with "no stream" and no read first (the reactor's hot path): a redelivered log event
 * finds the stream there and queues nothing twice (null).
 */
export async function queueDelivery(bus: CommandBus, data: WebhookDeliveryQueued['data'], ctx: CommandContext): Promise<number | null> {
  const command: QueueWebhookDelivery = { type: 'QueueWebhookDelivery', data, metadata: { now: ctx.now } };
  try {
    const r = await bus.appendRaw(deliveryStream(data.delivery_id), decideQueueWebhookDelivery(command, deliveryAggregate.initialState()), 'no_stream', ctx);
    return r.position;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return null;
    throw err;
  }
}

export interface AttemptResult {
  status_code: number | null;
  /** delivered (2xx), gone (410), refused (non-public target), failed (anything else). */
  outcome: Exclude<DeliveryOutcome, 'given_up'>;
  error: string | null;
  duration_ms: number;
}

/** Next attempt time after a failed attempt `n`, or null when the schedule is exhausted. */
export function nextAttemptAt(attempt: number, now: Date, random: () => number = Math.random): string | null {
  const delay = RETRY_DELAYS_MS[attempt - 1];
  if (delay === undefined) return null;
  const factor = 1 - JITTER + 2 * JITTER * random();
  return new Date(now.getTime() + Math.round(delay * factor)).toISOString();
}

/** RecordDeliveryAttempt: `jitter` (in [0, 1)) places a retry inside its jitter band. */
export type RecordDeliveryAttempt = Command<
  'RecordDeliveryAttempt',
  { delivery_id: string; url: string; result: AttemptResult },
  { now: Date; jitter: number }
>;

/**
 * Appends attempt n, exactly the next one (so two workers cannot record the same attempt twice),
 * to a queued delivery that is not finished (404, 409). A failure is retried on the schedule;
 * past its end the delivery is given up. A delivered, gone or refused attempt ends the delivery.
 */
export function decideRecordDeliveryAttempt(command: RecordDeliveryAttempt, state: DeliveryState): WebhookDeliveryAttempted[] {
  if (!state.queued) throw notFound('Delivery', 'delivery_not_found');
  if (state.done) throw conflict('Delivery already finished', 'delivery_finished');
  const { delivery_id, url, result } = command.data;
  const { now, jitter } = command.metadata;
  const attempt = state.attempts + 1;
  const retry = result.outcome === 'failed' ? nextAttemptAt(attempt, now, () => jitter) : null;
  const outcome: DeliveryOutcome = result.outcome === 'failed' && retry === null ? 'given_up' : result.outcome;
  return [
    {
      type: 'WebhookDeliveryAttempted',
      data: {
        delivery_id,
        agent_id: state.queued.agent_id,
        inbox_id: state.queued.inbox_id,
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

/** DisableWebhook: the receiver of a delivery answered 410 Gone. */
export type DisableWebhook = Command<'DisableWebhook', { agent_id: string; delivery_id: string }, { now: Date }>;

/** Deliveries stop until the webhook is configured again. */
export function decideDisableWebhook(command: DisableWebhook, _state: AgentState): WebhookDisabled[] {
  const { agent_id, delivery_id } = command.data;
  return [
    { type: 'WebhookDisabled', data: { agent_id, reason: 'The receiver answered 410 Gone', delivery_id, disabled_at: command.metadata.now.toISOString() } },
  ];
}

/** Records an attempt; a 410 also disables the agent's webhook (on the agent's stream, its own command id). */
export async function recordAttempt(
  bus: CommandBus,
  deliveryId: string,
  url: string,
  result: AttemptResult,
  ctx: CommandContext,
  random: () => number = Math.random,
) {
  const command: RecordDeliveryAttempt = {
    type: 'RecordDeliveryAttempt',
    data: { delivery_id: deliveryId, url, result },
    metadata: { now: ctx.now, jitter: random() },
  };
  const r = await bus.handle(deliveryStream(deliveryId), deliveryAggregate, (state) => decideRecordDeliveryAttempt(command, state), ctx);
  const [{ data }] = r.events;
  let position = r.position;
  if (data.outcome === 'gone') {
    const disable: DisableWebhook = { type: 'DisableWebhook', data: { agent_id: data.agent_id, delivery_id: deliveryId }, metadata: { now: ctx.now } };
    const d = await bus.handle(agentStream(data.agent_id), agentAggregate, (state) => decideDisableWebhook(disable, state), {
      ...ctx,
      commandId: `${ctx.commandId}:disable`,
    });
    position = Math.max(position, d.position);
  }
  return { attempt: data, position };
}
