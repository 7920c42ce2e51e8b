import type { MatchingRunCompleted } from '../events/matching.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import type { ProjectionContext } from './types.ts';

/**
 * The matching side of the inbox read model (`inbox_events`, owned by `inboxProjection` in
 * comments.ts): each bilateral match of a run is a `new_match` for both agents, each seeing the
 * other as `match_agent_*`, with `they_give` / `they_ask` from its own point of view.
 */
export const MATCHING_INBOX_EVENTS = ['MatchingRunCompleted'] as const;

export async function applyMatchingInbox(event: RecordedEvent, ctx: ProjectionContext): Promise<void> {
  if (event.type !== 'MatchingRunCompleted') return;
  const d = event.data as MatchingRunCompleted['data'];
  const inbox = ctx.collection('inbox_events');
  const entry = (recipient: string, payload: Record<string, unknown>) => ({
    $set: {
      agent_id: recipient,
      event: 'new_match',
      aliases: [],
      payload: { run_id: d.run_id, initiated_by: d.agent_id, ...payload, matched_at: d.completed_at },
      created_at: d.completed_at,
      delivered_via: 'inbox',
      seq: event.position,
      source_event_id: event.id,
    },
  });
  for (const m of d.matches) {
    // The counterpart: the runner gives what it asked for (m.they_ask) and asks what it offers (m.they_give).
    await inbox.applyAt(
      `new_match:${d.run_id}:${m.agent_id}`,
      event.position,
      entry(m.agent_id, {
        match_agent_id: d.agent_id,
        match_agent_name: d.agent_name,
        they_give: m.they_ask,
        they_ask: m.they_give,
        score: m.score,
      }),
    );
    await inbox.applyAt(
      `new_match:${d.run_id}:${d.agent_id}:${m.agent_id}`,
      event.position,
      entry(d.agent_id, {
        match_agent_id: m.agent_id,
        match_agent_name: m.name,
        they_give: m.they_give,
        they_ask: m.they_ask,
        score: m.score,
      }),
    );
  }
}
