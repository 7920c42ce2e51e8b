import type { ReadModel, ReadStore } from '../../projections/store/port.ts';
import type { Cursor } from '../cursor.ts';
import { cursorOf, listPage } from '../cursor.ts';

export function webhookOf(store: ReadStore, agentId: string) {
  return store.collection('webhooks').findOne({ _id: agentId });
}

export function deliveryOf(store: ReadStore, deliveryId: string) {
  return store.collection('webhook_deliveries').findOne({ _id: deliveryId });
}

/** Pending deliveries whose next attempt is due at `now` (index-served by status and due time). */
export async function dueDeliveries(store: ReadStore, now: Date, limit = 500): Promise<string[]> {
  const docs = await store
    .collection('webhook_deliveries')
    .find({ status: 'pending', next_attempt_at: { $lte: now.toISOString() } }, { sort: { next_attempt_at: 1 }, limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}

function attemptView(a: ReadModel<'webhook_attempts'>) {
  return {
    delivery_id: a.delivery_id,
    attempt: a.attempt,
    url: a.url,
    status_code: a.status_code,
    outcome: a.outcome,
    error: a.error,
    duration_ms: a.duration_ms,
    attempted_at: a.attempted_at,
    next_attempt_at: a.next_attempt_at,
    /** The replay this attempt belongs to (null: the original delivery). */
    replay_id: typeof a.replay_id === 'string' ? a.replay_id : null,
  };
}

/**
 * The delivery log: every attempt to deliver to the agent's webhook, by the one cursor (oldest
 * first after `after`; without it the newest page, newest first). Index-served by agent and (seq, _id).
 */
export async function deliveryLog(store: ReadStore, agentId: string, opts: { after?: Cursor; limit: number; skip: number }) {
  const page = await listPage(store.collection('webhook_attempts'), { agent_id: agentId }, opts);
  return {
    attempts: page.docs.map((a) => ({ ...attemptView(a), cursor: cursorOf(a) })),
    next_cursor: page.next_cursor,
    has_more: page.has_more,
    poll_cursor: page.poll_cursor,
  };
}

/** The health view: recent attempts, success rate over them, last error, the next retry. */
export async function webhookHealth(store: ReadStore, agentId: string, recent = 50) {
  const attempts = await store.collection('webhook_attempts').find({ agent_id: agentId }, { sort: { seq: -1 }, limit: recent });
  const pending = await store.collection('webhook_deliveries').find({ agent_id: agentId }, { sort: { seq: -1 }, limit: 200 });
  const ok = attempts.filter((a) => a.outcome === 'delivered').length;
  const lastError = attempts.find((a) => a.outcome !== 'delivered');
  const next = pending
    .filter((d) => d.status === 'pending' && typeof d.next_attempt_at === 'string')
    .map((d) => d.next_attempt_at)
    .sort()[0];
  return {
    attempts: attempts.map(attemptView),
    success_rate: attempts.length ? Math.round((ok / attempts.length) * 10000) / 100 : null,
    last_error: lastError ? { error: lastError.error, status_code: lastError.status_code, at: lastError.attempted_at } : null,
    next_retry_at: next ?? null,
    pending_deliveries: pending.filter((d) => d.status === 'pending').length,
  };
}

/** Pending replays whose next send is due at `now` (index-served by status and due time). */
export async function dueReplays(store: ReadStore, now: Date, limit = 500): Promise<string[]> {
  const docs = await store
    .collection('webhook_replays')
    .find({ status: 'pending', next_attempt_at: { $lte: now.toISOString() } }, { sort: { next_attempt_at: 1 }, limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}

/** The delivery id a delivery-log cursor key names (`dlv_x:n`, or `dlv_x:rpl_y:n` for a replayed attempt); null for any other key. */
export function deliveryIdOfLogKey(key: string): string | null {
  const id = key.split(':')[0];
  return /^dlv_[0-9a-z]+$/.test(id) && key.includes(':') ? id : null;
}

/**
 * The agent's deliveries in a replay range, oldest first (original queue order), at most `limit`:
 * from the delivery at log position `fromSeq` (included), or queued at or after `fromTime`; before
 * `toTime` when given. Index-served by agent and position, or agent and queue time.
 */
export async function replayRange(
  store: ReadStore,
  agentId: string,
  range: { fromSeq?: number; fromTime?: string; toTime?: string | null; limit: number },
): Promise<string[]> {
  const queued: Record<string, string> = {};
  if (range.fromTime !== undefined) queued.$gte = range.fromTime;
  if (range.toTime) queued.$lt = range.toTime;
  const filter = {
    agent_id: agentId,
    ...(range.fromSeq !== undefined ? { seq: { $gte: range.fromSeq } } : {}),
    ...(Object.keys(queued).length ? { queued_at: queued } : {}),
  };
  const docs = await store.collection('webhook_deliveries').find(filter, { sort: { seq: 1 }, limit: range.limit, projection: { _id: 1 } });
  return docs.map((d) => d._id);
}
