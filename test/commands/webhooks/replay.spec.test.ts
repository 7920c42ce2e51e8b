import type { AttemptResult } from '../../../commands/webhooks/deliver.ts';
import type { RecordReplayAttempt, ReplayEvent, ReplayState, RequestWebhookReplay } from '../../../commands/webhooks/replay.ts';
import { decideRecordReplayAttempt, decideRequestWebhookReplay, replayAggregate } from '../../../commands/webhooks/replay.ts';
import { expect } from 'chai';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AGENT, DELIVERY, DELIVERY_2, NOW, REPLAY, URL_, webhookReplayAttempted, webhookReplayRequested } from './fixtures.ts';

const OTHER = 'agt_other0000000000000000';
const FROM = '2026-03-10T08:00:00.000Z';

describe('commands: webhooks RequestWebhookReplay (replay-<id>)', () => {
  const spec = DeciderSpecification.for<RequestWebhookReplay, ReplayState, ReplayEvent>({ decide: decideRequestWebhookReplay, ...replayAggregate });
  const request = (over: Partial<RequestWebhookReplay['data']> = {}): RequestWebhookReplay => ({
    type: 'RequestWebhookReplay',
    data: {
      agent_id: AGENT,
      requested_by: AGENT,
      requested_by_role: 'agent',
      from_cursor: null,
      from_time: FROM,
      to_time: null,
      limit: 1000,
      agent_exists: true,
      webhook: 'active',
      from_delivery_agent_id: null,
      candidates: [DELIVERY, DELIVERY_2],
      ...over,
    },
    metadata: { now: NOW, replay_id: REPLAY },
  });
  const requested = (over: Parameters<typeof webhookReplayRequested>[0] = {}) =>
    webhookReplayRequested({ from_time: FROM, requested_at: NOW.toISOString(), ...over });

  it('records who asked, the range and the deliveries in their original order, with the replay id', () => {
    spec.given([]).when(request()).then([requested()]);
  });

  it('records an admin request with the admin as the requester', () => {
    spec
      .given([])
      .when(request({ requested_by: 'usr_admin0000000000000000', requested_by_role: 'admin' }))
      .then([requested({ requested_by: 'usr_admin0000000000000000', requested_by_role: 'admin' })]);
  });

  it('keeps the first `limit` deliveries of a longer range and says more exist', () => {
    spec
      .given([])
      .when(request({ limit: 1 }))
      .then([requested({ limit: 1, delivery_ids: [DELIVERY], deliveries: 1, has_more: true })]);
  });

  it('records a range with nothing as a replay of 0 deliveries', () => {
    spec
      .given([])
      .when(request({ candidates: [] }))
      .then([requested({ delivery_ids: [], deliveries: 0 })]);
  });

  it('takes a delivery cursor of the agent itself instead of a time', () => {
    spec
      .given([])
      .when(request({ from_cursor: 'abc', from_time: null, from_delivery_agent_id: AGENT }))
      .then([requested({ from_cursor: 'abc', from_time: null })]);
  });

  it('refuses neither or both of from and from_time, to_time not after from_time, and a limit out of 1..1000 with 422', () => {
    spec
      .given([])
      .when(request({ from_time: null }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(request({ from_cursor: 'abc' }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(request({ to_time: FROM }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(request({ limit: 0 }))
      .thenThrows('validation_failed', 422);
    spec
      .given([])
      .when(request({ limit: 1001 }))
      .thenThrows('validation_failed', 422);
  });

  it("refuses an unknown agent with 404 and a cursor naming another agent's delivery with 403", () => {
    spec
      .given([])
      .when(request({ agent_exists: false }))
      .thenThrows('agent_not_found', 404);
    spec
      .given([])
      .when(request({ from_cursor: 'abc', from_time: null, from_delivery_agent_id: OTHER }))
      .thenThrows('forbidden', 403);
  });

  it('refuses without a webhook URL (409 webhook_not_configured) and with a webhook disabled by a 410 (409 webhook_disabled)', () => {
    spec
      .given([])
      .when(request({ webhook: 'not_configured' }))
      .thenThrows('webhook_not_configured', 409);
    spec
      .given([])
      .when(request({ webhook: 'disabled' }))
      .thenThrows('webhook_disabled', 409);
  });

  it('decides nothing for a replay already requested (a retried command)', () => {
    spec.given([requested()]).when(request()).thenNothingHappened();
  });
});

describe('commands: webhooks RecordReplayAttempt (replay-<id>)', () => {
  const spec = DeciderSpecification.for<RecordReplayAttempt, ReplayState, ReplayEvent>({ decide: decideRecordReplayAttempt, ...replayAggregate });
  const record = (deliveryId: string, result: Partial<AttemptResult> = {}): RecordReplayAttempt => ({
    type: 'RecordReplayAttempt',
    data: {
      delivery_id: deliveryId,
      inbox_id: 'ntf_inbox000000000000000',
      url: URL_,
      result: { status_code: 200, outcome: 'delivered', error: null, duration_ms: 7.6, ...result },
    },
    metadata: { now: NOW, jitter: 0.5 },
  });
  const attempted = (over: Parameters<typeof webhookReplayAttempted>[0] = {}) =>
    webhookReplayAttempted({ attempted_at: NOW.toISOString(), duration_ms: 8, ...over });
  const failed = (attempt: number, over: Parameters<typeof webhookReplayAttempted>[0] = {}) =>
    attempted({ attempt, status_code: 500, outcome: 'failed', error: 'HTTP 500', next_attempt_at: NOW.toISOString(), ...over });

  it('sends the first delivery first, then the next one, each attempt counted within the replay', () => {
    spec.given([webhookReplayRequested()]).when(record(DELIVERY)).then([attempted()]);
    spec
      .given([webhookReplayRequested(), attempted()])
      .when(record(DELIVERY_2))
      .then([attempted({ delivery_id: DELIVERY_2, index: 1 })]);
  });

  it('refuses any other delivery than the next one with 409 replay_out_of_order', () => {
    spec.given([webhookReplayRequested()]).when(record(DELIVERY_2)).thenThrows('replay_out_of_order', 409);
    spec.given([webhookReplayRequested(), attempted()]).when(record(DELIVERY)).thenThrows('replay_out_of_order', 409);
  });

  it('retries a failed delivery on the schedule and holds the next one back until it arrives', () => {
    spec
      .given([webhookReplayRequested()])
      .when(record(DELIVERY, { status_code: 503, outcome: 'failed', error: 'HTTP 503' }))
      .then([failed(1, { status_code: 503, error: 'HTTP 503', next_attempt_at: new Date(NOW.getTime() + 30_000).toISOString() })]);
    spec
      .given([webhookReplayRequested(), failed(1)])
      .when(record(DELIVERY_2))
      .thenThrows('replay_out_of_order', 409);
    spec
      .given([webhookReplayRequested(), failed(1)])
      .when(record(DELIVERY))
      .then([attempted({ attempt: 2 })]);
  });

  it('gives a delivery up after the 8th failed attempt, which stops the replay (409 replay_finished afterwards)', () => {
    const seven = Array.from({ length: 7 }, (_, i) => failed(i + 1));
    spec
      .given([webhookReplayRequested(), ...seven])
      .when(record(DELIVERY, { status_code: 500, outcome: 'failed', error: 'HTTP 500' }))
      .then([failed(8, { outcome: 'given_up', next_attempt_at: null })]);
    spec
      .given([webhookReplayRequested(), ...seven, failed(8, { outcome: 'given_up', next_attempt_at: null })])
      .when(record(DELIVERY_2))
      .thenThrows('replay_finished', 409);
  });

  it('stops at a refused target without retrying it', () => {
    spec
      .given([webhookReplayRequested()])
      .when(record(DELIVERY, { status_code: null, outcome: 'refused', error: 'not public' }))
      .then([attempted({ status_code: null, outcome: 'refused', error: 'not public' })]);
    const state = [webhookReplayRequested(), attempted({ status_code: null, outcome: 'refused', error: 'not public' })].reduce(
      replayAggregate.evolve,
      replayAggregate.initialState(),
    );
    expect(state).to.include({ done: true, stopped: true, index: 0 });
  });

  it('refuses an attempt once every delivery arrived (409 replay_finished) and without a replay (404)', () => {
    spec
      .given([webhookReplayRequested(), attempted(), attempted({ delivery_id: DELIVERY_2, index: 1 })])
      .when(record(DELIVERY_2))
      .thenThrows('replay_finished', 409);
    spec.given([]).when(record(DELIVERY)).thenThrows('replay_not_found', 404);
  });

  it('is done at once for a replay of 0 deliveries', () => {
    spec
      .given([webhookReplayRequested({ delivery_ids: [], deliveries: 0 })])
      .when(record(DELIVERY))
      .thenThrows('replay_finished', 409);
  });
});
