import type { Agenda, Job } from 'agenda';
import type { WorkerDeps } from '../deps.ts';
import { deliveryAggregate, queueDelivery, recordAttempt } from '../../commands/webhooks/deliver.ts';
import { recordReplayAttempt, replayAggregate } from '../../commands/webhooks/replay.ts';
import type { AttemptResult } from '../../commands/webhooks/deliver.ts';
import type { Resolver } from '../../commands/webhooks/target.ts';
import { systemResolver } from '../../commands/webhooks/target.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { RecordedEvent } from '../../events/store/port.ts';
import type { Doc } from '../../projections/store/port.ts';
import { deliveryStream, replayStream } from '../../events/webhooks.ts';
import type { SignatureScheme } from '../../events/webhooks.ts';
import { LEGACY_SIGNATURE_SCHEME } from '../../events/webhooks.ts';
import { inboxProjection } from '../../projections/messaging/inbox.ts';
import { cursorOf } from '../../queries/cursor.ts';
import { deliveryOf, dueDeliveries, dueReplays, webhookOf } from '../../queries/webhooks/webhooks.ts';
import { sendWebhook } from './http.ts';

/** What these jobs use of the composition root. */
export type WebhookDeps = Pick<WorkerDeps, 'bus' | 'clock' | 'config' | 'logger' | 'runner' | 'secrets' | 'store'>;

/** The event types that make inbox entries (the inbox projection's): no other event is looked up. */
const INBOX_SOURCES: ReadonlySet<string> = inboxProjection.handles;

/** How far back a restart looks for inbox entries that were never queued. */
export const RESUME_WINDOW_MS = 24 * 3600_000;

export const WEBHOOK_JOBS = {
  deliver: 'webhooks.deliver',
  sweep: 'webhooks.sweep',
  replay: 'webhooks.replay',
} as const;

export interface WebhookWorker {
  /** Reactor: queues a delivery for every new inbox entry whose agent has a webhook that wants it. */
  onEvents(events: RecordedEvent[]): Promise<void>;
  /** Waits until the reactor has handled every event it was given. */
  drain(): Promise<void>;
  /** Runs the next attempt of a delivery if it is due at the clock's `now` (the deliver job's body). */
  deliver(deliveryId: string): Promise<void>;
  /**
   * Sends a replay's deliveries one after the other in their original order, as long as each
   * arrives; a failed one is retried on the schedule (the replay job is scheduled for it) and
   * holds back the rest (the replay job's body).
   */
  replay(replayId: string): Promise<void>;
  /** Queues inbox entries the reactor missed while the process was down (run at start). Returns how many. */
  resume(): Promise<number>;
  /** Runs every due attempt and due replay (the sweep job's body; also re-derives work after a lost job store). Returns attempts and replays run. */
  sweep(): Promise<number>;
  /** Injectable for tests: the resolver used at connect time, the timeout, the jitter source. */
  resolver: Resolver;
  timeoutMs: number;
  random: () => number;
}

/** The encrypted secrets that sign a delivery at `now`: the current one, and the previous one until its overlap ends. */
export function signingSecrets(hook: Doc, now: Date): string[] {
  const previous =
    typeof hook.previous_secret_enc === 'string' && typeof hook.previous_valid_until === 'string' && now.toISOString() < hook.previous_valid_until
      ? [hook.previous_secret_enc]
      : [];
  return [hook.secret_enc as string, ...previous];
}

const wants = (filter: unknown, event: string, aliases: string[]) =>
  filter === null || filter === undefined || (Array.isArray(filter) && [event, ...aliases].some((e) => filter.includes(e)));

/** Webhook delivery on Agenda: at least once per inbox entry, with a stable delivery id and the retry schedule of DECISIONS. */
export function createWebhookWorker(s: WebhookDeps, agenda: Agenda): WebhookWorker {
  const inflight = new Set<string>();
  let chain: Promise<void> = Promise.resolve();

  const schedule = async (deliveryId: string, at: Date) => {
    await agenda
      .create(WEBHOOK_JOBS.deliver, { delivery_id: deliveryId })
      .unique({ name: WEBHOOK_JOBS.deliver, 'data.delivery_id': deliveryId })
      .schedule(at)
      .save();
  };

  /** Queues one inbox entry for the agent's webhook if it wants it; false when it does not. Idempotent. */
  const queueEntry = async (entry: Doc): Promise<boolean> => {
    {
      const agentId = entry.agent_id as string;
      const hook = await webhookOf(s.store, agentId);
      if (!hook || !hook.webhook_url || hook.disabled) return false;
      const event = entry.event as string;
      if (!wants(hook.events, event, (entry.aliases as string[] | undefined) ?? [])) return false;
      const deliveryId = deriveId('dlv', entry._id);
      const now = s.clock.now();
      // The entry's inbox cursor: a receiver that missed deliveries resumes polling the inbox with `?after=<cursor>`.
      const cursor = cursorOf({ _id: entry._id, seq: entry.seq });
      const body = JSON.stringify({ event, agent_id: agentId, data: entry.payload, timestamp: entry.created_at, cursor });
      const position = await queueDelivery(
        s.bus,
        { delivery_id: deliveryId, agent_id: agentId, inbox_id: entry._id, event, body, url: hook.webhook_url as string, cursor, queued_at: now.toISOString() },
        { commandId: `queue:${deliveryId}`, actor: 'system:webhooks', requestId: null, now },
      );
      if (position === null) return true;
      await s.runner.waitFor(position);
      await schedule(deliveryId, new Date());
      return true;
    }
  };

  const scheduleReplay = async (replayId: string, at: Date) => {
    await agenda.create(WEBHOOK_JOBS.replay, { replay_id: replayId }).unique({ name: WEBHOOK_JOBS.replay, 'data.replay_id': replayId }).schedule(at).save();
  };

  /** The signing material of the agent's webhook at `now`, or null when it was removed or disabled. */
  const signingOf = (hook: Doc | null, now: Date) =>
    !hook || !hook.webhook_url || hook.disabled
      ? null
      : {
          url: hook.webhook_url as string,
          secrets: signingSecrets(hook, now).map((enc) => s.secrets.decrypt(enc)),
          scheme: (hook.signature_scheme as SignatureScheme | null | undefined) ?? LEGACY_SIGNATURE_SCHEME,
        };

  const queueFor = async (e: RecordedEvent) => {
    if (e.type === 'WebhookReplayRequested') {
      await s.runner.waitFor(e.position);
      await scheduleReplay((e.data as { replay_id: string }).replay_id, new Date());
      return;
    }
    // Only the events the inbox projection turns into entries can have any to deliver.
    if (!INBOX_SOURCES.has(e.type)) return;
    // A post makes inbox entries only when it mentions somebody (the commonest one does not).
    if (e.type === 'PostPublished' && !((e.data as { mentions?: unknown[] }).mentions?.length ?? 0)) return;
    await s.runner.waitFor(e.position);
    for (const entry of await s.store.collection('inbox_events').find({ source_event_id: e.id })) await queueEntry(entry);
  };

  const worker: WebhookWorker = {
    resolver: systemResolver,
    timeoutMs: 10_000,
    random: Math.random,

    onEvents(events) {
      chain = chain.then(async () => {
        for (const e of events) {
          try {
            await queueFor(e);
          } catch (err) {
            s.logger.error({ err, event: e.id }, 'webhook reactor failed to queue a delivery');
          }
        }
      });
      return chain;
    },

    drain: () => chain,

    async deliver(deliveryId) {
      if (inflight.has(deliveryId)) return;
      inflight.add(deliveryId);
      try {
        const d = await deliveryOf(s.store, deliveryId);
        if (!d || d.status !== 'pending') return;
        if (typeof d.next_attempt_at === 'string' && d.next_attempt_at > s.clock.now().toISOString()) return;
        const { state } = await s.bus.load(deliveryStream(deliveryId), deliveryAggregate);
        if (!state.queued || state.done) return;
        const signing = signingOf(await webhookOf(s.store, state.queued.agent_id), s.clock.now());
        const attempt = state.attempts + 1;
        let url = state.queued.url;
        let result: AttemptResult;
        if (!signing) {
          result = { status_code: null, outcome: 'refused', error: 'The webhook was removed or disabled', duration_ms: 0 };
        } else {
          url = signing.url;
          result = await sendWebhook(
            {
              url,
              body: state.queued.body,
              event: state.queued.event,
              agentId: state.queued.agent_id,
              deliveryId,
              attempt,
              secrets: signing.secrets,
              scheme: signing.scheme,
              timestamp: Math.floor(s.clock.now().getTime() / 1000),
              cursor: state.queued.cursor ?? null,
            },
            { resolver: worker.resolver, allowLoopback: s.config.webhookAllowLoopback, timeoutMs: worker.timeoutMs },
          );
        }
        const now = s.clock.now();
        const recorded = await recordAttempt(
          s.bus,
          deliveryId,
          url,
          result,
          { commandId: `attempt:${deliveryId}:${attempt}`, actor: 'system:webhooks', requestId: null, now },
          worker.random,
        );
        await s.runner.waitFor(recorded.position);
        if (recorded.attempt.next_attempt_at) await schedule(deliveryId, new Date(recorded.attempt.next_attempt_at));
      } catch (err) {
        if ((err as { code?: string }).code !== 'delivery_finished') s.logger.error({ err, delivery_id: deliveryId }, 'webhook delivery failed to run');
      } finally {
        inflight.delete(deliveryId);
      }
    },

    async replay(replayId) {
      if (inflight.has(replayId)) return;
      inflight.add(replayId);
      try {
        // One delivery at a time: the next is sent only once the previous one arrived.
        for (;;) {
          const { state } = await s.bus.load(replayStream(replayId), replayAggregate);
          const requested = state.requested;
          if (!requested || state.done) return;
          if (state.next_attempt_at && state.next_attempt_at > s.clock.now().toISOString()) return;
          const deliveryId = requested.delivery_ids[state.index];
          const { state: delivery } = await s.bus.load(deliveryStream(deliveryId), deliveryAggregate);
          const queued = delivery.queued;
          if (!queued) throw new Error(`replayed delivery ${deliveryId} has no queued event`);
          const attempt = state.attempts + 1;
          const signing = signingOf(await webhookOf(s.store, requested.agent_id), s.clock.now());
          let url = queued.url;
          let result: AttemptResult;
          if (!signing) result = { status_code: null, outcome: 'refused', error: 'The webhook was removed or disabled', duration_ms: 0 };
          else {
            url = signing.url;
            // The original body and delivery id; the timestamp, secrets and scheme are those of now.
            result = await sendWebhook(
              {
                url,
                body: queued.body,
                event: queued.event,
                agentId: queued.agent_id,
                deliveryId,
                attempt,
                secrets: signing.secrets,
                scheme: signing.scheme,
                timestamp: Math.floor(s.clock.now().getTime() / 1000),
                cursor: queued.cursor ?? null,
                replayId,
              },
              { resolver: worker.resolver, allowLoopback: s.config.webhookAllowLoopback, timeoutMs: worker.timeoutMs },
            );
          }
          const now = s.clock.now();
          const recorded = await recordReplayAttempt(
            s.bus,
            replayId,
            { delivery_id: deliveryId, inbox_id: queued.inbox_id, url, result },
            { commandId: `replay:${replayId}:${state.index}:${attempt}`, actor: 'system:webhooks', requestId: null, now },
            worker.random,
          );
          await s.runner.waitFor(recorded.position);
          if (recorded.attempt.outcome !== 'delivered') {
            if (recorded.attempt.next_attempt_at) await scheduleReplay(replayId, new Date(recorded.attempt.next_attempt_at));
            return;
          }
        }
      } catch (err) {
        if ((err as { code?: string }).code !== 'replay_finished' && (err as { code?: string }).code !== 'replay_out_of_order')
          s.logger.error({ err, replay_id: replayId }, 'webhook replay failed to run');
      } finally {
        inflight.delete(replayId);
      }
    },

    async resume() {
      // Inbox entries of the last 24 h that arrived while no reactor ran (a crash between the
      // event and its queueing): for each active webhook, newest first down to the first entry
      // already queued, never older than the webhook's configuration.
      const hooks = await s.store.collection('webhooks').find({ disabled: false, webhook_url: { $type: 'string' } });
      const floor = new Date(s.clock.now().getTime() - RESUME_WINDOW_MS).toISOString();
      let queued = 0;
      for (const hook of hooks) {
        const from = typeof hook.configured_at === 'string' && hook.configured_at > floor ? hook.configured_at : floor;
        const entries = await s.store.collection('inbox_events').find({ agent_id: hook._id, created_at: { $gte: from } }, { sort: { seq: -1 }, limit: 1000 });
        for (const entry of entries) {
          if (await deliveryOf(s.store, deriveId('dlv', entry._id))) break;
          if (await queueEntry(entry)) queued++;
        }
      }
      return queued;
    },

    async sweep() {
      const due = await dueDeliveries(s.store, s.clock.now());
      // A few receivers at a time: one slow receiver (up to the timeout) does not hold up the rest.
      for (let i = 0; i < due.length; i += 16) await Promise.all(due.slice(i, i + 16).map((id) => worker.deliver(id)));
      // Each replay is one serial lane; different replays run side by side.
      const replays = await dueReplays(s.store, s.clock.now());
      for (let i = 0; i < replays.length; i += 16) await Promise.all(replays.slice(i, i + 16).map((id) => worker.replay(id)));
      return due.length + replays.length;
    },
  };

  agenda.define(WEBHOOK_JOBS.deliver, async (job: Job<{ delivery_id: string }>) => {
    await worker.deliver(job.attrs.data.delivery_id);
  });
  agenda.define(WEBHOOK_JOBS.replay, async (job: Job<{ replay_id: string }>) => {
    await worker.replay(job.attrs.data.replay_id);
  });
  agenda.define(WEBHOOK_JOBS.sweep, async () => {
    await worker.sweep();
  });
  return worker;
}
