import { agentStream } from '../../events/agents.ts';
import { MINUTE, HOUR } from '../../events/kernel/clock.ts';
import { conflict, notFound } from '../../events/kernel/errors.ts';
import type { Event } from '../../events/types.ts';
import type { DeliveryOutcome, WebhookDeliveryAttempted, WebhookDeliveryQueued, WebhookDisabled } from '../../events/webhooks.ts';
import { deliveryStream } from '../../events/webhooks.ts';
import { WrongExpectedRevisionError } from '../../events/store/port.ts';
import { agentAggregate } from '../agents/agent.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

/** Delay before attempt n+1 after attempt n failed (index n-1): about 0 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h. */
export const RETRY_DELAYS_MS = [30_000, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Jitter: each delay is scaled by a factor in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.1;

export interface DeliveryState {
  queued: WebhookDeliveryQueued['data'] | null;
  attempts: number;
  done: boolean;
}

export const deliveryAggregate: Aggregate<DeliveryState> = {
  initialState: () => ({ queued: null, attempts: 0, done: false }),
  evolve(state, event: Event<string, unknown>) {
    if (event.type === 'WebhookDeliveryQueued') return { ...state, queued: event.data as WebhookDeliveryQueued['data'] };
    if (event.type === 'WebhookDeliveryAttempted') {
      const d = event.data as WebhookDeliveryAttempted['data'];
      return { ...state, attempts: d.attempt, done: d.next_attempt_at === null };
    }
    return state;
  },
};

/** QueueWebhookDelivery: once per inbox entry ("no stream"), so a redelivered log event queues nothing twice. */
export async function queueDelivery(bus: CommandBus, data: WebhookDeliveryQueued['data'], ctx: CommandContext): Promise<number | null> {
  try {
    const r = await bus.appendRaw(
      deliveryStream(data.delivery_id),
      [{ type: 'WebhookDeliveryQueued', data } satisfies WebhookDeliveryQueued],
      'no_stream',
      ctx,
    );
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

/**
 * RecordDeliveryAttempt: appends attempt n (exactly the next one, so two workers cannot record the
 * same attempt twice). A 410 also disables the agent's webhook; a refused target and an exhausted
 * schedule end the delivery.
 */
export async function recordAttempt(bus: CommandBus, deliveryId: string, url: string, result: AttemptResult, ctx: CommandContext, random?: () => number) {
  let attempted: WebhookDeliveryAttempted | undefined;
  const r = await bus.handle(
    deliveryStream(deliveryId),
    deliveryAggregate,
    (state) => {
      if (!state.queued) throw notFound('Delivery', 'delivery_not_found');
      if (state.done) throw conflict('Delivery already finished', 'delivery_finished');
      const attempt = state.attempts + 1;
      const retry = result.outcome === 'failed' ? nextAttemptAt(attempt, ctx.now, random) : null;
      const outcome: DeliveryOutcome = result.outcome === 'failed' && retry === null ? 'given_up' : result.outcome;
      attempted = {
        type: 'WebhookDeliveryAttempted',
        data: {
          delivery_id: deliveryId,
          agent_id: state.queued.agent_id,
          inbox_id: state.queued.inbox_id,
          attempt,
          url,
          status_code: result.status_code,
          outcome,
          error: result.error,
          duration_ms: Math.max(0, Math.round(result.duration_ms)),
          attempted_at: ctx.now.toISOString(),
          next_attempt_at: retry,
        },
      };
      return [attempted];
    },
    ctx,
  );
  const data = (r.events[0]?.data ?? attempted?.data) as WebhookDeliveryAttempted['data'];
  let position = r.position;
  if (data.outcome === 'gone') {
    const d = await bus.handle(
      agentStream(data.agent_id),
      agentAggregate,
      () => [
        {
          type: 'WebhookDisabled',
          data: { agent_id: data.agent_id, reason: 'The receiver answered 410 Gone', delivery_id: deliveryId, disabled_at: ctx.now.toISOString() },
        } satisfies WebhookDisabled,
      ],
      { ...ctx, commandId: `${ctx.commandId}:disable` },
    );
    position = Math.max(position, d.position);
  }
  return { attempt: data, position };
}
