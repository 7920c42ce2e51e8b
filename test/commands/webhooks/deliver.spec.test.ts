import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import type { DeliveryEvent, DeliveryState, DisableWebhook, QueueWebhookDelivery, RecordDeliveryAttempt } from '../../../commands/webhooks/deliver.ts';
import {
  RETRY_DELAYS_MS,
  decideDisableWebhook,
  decideQueueWebhookDelivery,
  decideRecordDeliveryAttempt,
  deliveryAggregate,
} from '../../../commands/webhooks/deliver.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, DELIVERY, NOW, URL_, failedAttempts, funded, later, webhookDeliveryAttempted, webhookDeliveryQueued, webhookDisabled } from './fixtures.ts';

describe('commands: webhooks QueueWebhookDelivery (delivery-<id>)', () => {
  const spec = DeciderSpecification.for<QueueWebhookDelivery, DeliveryState, DeliveryEvent>({ decide: decideQueueWebhookDelivery, ...deliveryAggregate });
  const queue: QueueWebhookDelivery = { type: 'QueueWebhookDelivery', data: webhookDeliveryQueued().data, metadata: { now: NOW } };

  it('queues one inbox event for one webhook, its body fixed for every retry', () => {
    spec.given([]).when(queue).then([webhookDeliveryQueued()]);
  });

  it('queues nothing twice for the same inbox entry', () => {
    spec.given([webhookDeliveryQueued()]).when(queue).thenNothingHappened();
  });
});

describe('commands: webhooks RecordDeliveryAttempt (delivery-<id>)', () => {
  const spec = DeciderSpecification.for<RecordDeliveryAttempt, DeliveryState, DeliveryEvent>({ decide: decideRecordDeliveryAttempt, ...deliveryAggregate });
  const record = (result: Partial<RecordDeliveryAttempt['data']['result']> = {}, jitter = 0.5): RecordDeliveryAttempt => ({
    type: 'RecordDeliveryAttempt',
    data: { delivery_id: DELIVERY, url: URL_, result: { status_code: 200, outcome: 'delivered', error: null, duration_ms: 12.4, ...result } },
    metadata: { now: NOW, jitter },
  });
  const attempted = (over: Parameters<typeof webhookDeliveryAttempted>[0]) =>
    webhookDeliveryAttempted({
      attempted_at: NOW.toISOString(),
      status_code: 200,
      outcome: 'delivered',
      error: null,
      duration_ms: 12,
      next_attempt_at: null,
      ...over,
    });
  const failed = { status_code: 500, outcome: 'failed' as const, error: 'HTTP 500' };

  it('records a delivered attempt as attempt 1, which ends the delivery', () => {
    spec
      .given([webhookDeliveryQueued()])
      .when(record())
      .then([attempted({ attempt: 1 })]);
  });

  it('schedules the retry of a failed attempt on the schedule, placed in its jitter band', () => {
    spec
      .given([webhookDeliveryQueued()])
      .when(record(failed))
      .then([attempted({ ...failed, attempt: 1, next_attempt_at: later(RETRY_DELAYS_MS[0]).toISOString() })]);
    spec
      .given([webhookDeliveryQueued(), ...failedAttempts(1)])
      .when(record(failed, 0))
      .then([attempted({ ...failed, attempt: 2, next_attempt_at: later(RETRY_DELAYS_MS[1] * 0.9).toISOString() })]);
  });

  it('gives up after the 8th failed attempt', () => {
    spec
      .given([webhookDeliveryQueued(), ...failedAttempts(7)])
      .when(record(failed))
      .then([attempted({ ...failed, attempt: 8, outcome: 'given_up' })]);
  });

  it('ends the delivery at a 410 Gone or a refused target, with no retry', () => {
    spec
      .given([webhookDeliveryQueued()])
      .when(record({ status_code: 410, outcome: 'gone', error: 'HTTP 410' }))
      .then([attempted({ attempt: 1, status_code: 410, outcome: 'gone', error: 'HTTP 410' })]);
    spec
      .given([webhookDeliveryQueued()])
      .when(record({ status_code: null, outcome: 'refused', error: 'non-public', duration_ms: -1 }))
      .then([attempted({ attempt: 1, status_code: null, outcome: 'refused', error: 'non-public', duration_ms: 0 })]);
  });

  it('refuses a delivery never queued with 404, and one already finished with 409', () => {
    spec.given([]).when(record()).thenThrows('delivery_not_found', 404);
    spec
      .given([webhookDeliveryQueued(), attempted({ attempt: 1 })])
      .when(record())
      .thenThrows('delivery_finished', 409);
    spec
      .given([webhookDeliveryQueued(), ...failedAttempts(8)])
      .when(record())
      .thenThrows('delivery_finished', 409);
  });
});

describe('commands: webhooks DisableWebhook (agent-<id>)', () => {
  const spec = DeciderSpecification.for<DisableWebhook, AgentState, AgentStreamEvent>({ decide: decideDisableWebhook, ...agentAggregate });

  it("disables the agent's webhook after a 410 Gone, naming the delivery", () => {
    spec
      .given(funded())
      .when({ type: 'DisableWebhook', data: { agent_id: AGENT, delivery_id: DELIVERY }, metadata: { now: NOW } })
      .then([webhookDisabled({ disabled_at: NOW.toISOString() })]);
  });
});
