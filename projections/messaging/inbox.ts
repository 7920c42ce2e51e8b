import type { Collection, Update } from '../store/port.ts';
import type { RecordedOf } from '../types.ts';
import { defineProjection } from '../types.ts';

/** An inbox entry of an agent; `_id` names the entry by its kind and source (`new_dm:<dm_id>`, ...). */
export type InboxEventDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  /** The entry's kind: new_comment, new_dm, new_match, mention, a2a_message, svc_ping, moderation_decision. */
  event: string;
  /** Older names of the kind that filters accept too. */
  aliases: string[];
  /** The entry's fields as its kind defines them. */
  payload: Record<string, unknown>;
  created_at: string;
  delivered_via: 'inbox' | 'webhook';
  seq: number;
  source_event_id: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    inbox_events: InboxEventDoc;
  }
}

/**
 * Each bilateral match of a run is a `new_match` for both agents, each seeing the other as
 * `match_agent_*`, with `they_give` / `they_ask` from its own point of view.
 */
async function applyNewMatches(inbox: Collection<InboxEventDoc>, event: RecordedOf<'MatchingRunCompleted'>): Promise<void> {
  const d = event.data;
  for (const m of d.matches) {
    // The counterpart: the runner gives what it asked for (m.they_ask) and asks what it offers (m.they_give).
    await inbox.applyAt(
      `new_match:${d.run_id}:${m.agent_id}`,
      event.position,
      matchEntry(event, m.agent_id, {
        match_agent_id: d.agent_id,
        match_agent_name: d.agent_name,
        they_give: m.they_ask,
        they_ask: m.they_give,
        score: m.score,
        member_match_id: m.member_match_id ?? null,
      }),
    );
    await inbox.applyAt(
      `new_match:${d.run_id}:${d.agent_id}:${m.agent_id}`,
      event.position,
      matchEntry(event, d.agent_id, {
        match_agent_id: m.agent_id,
        match_agent_name: m.name,
        they_give: m.they_give,
        they_ask: m.they_ask,
        score: m.score,
        member_match_id: m.member_match_id ?? null,
      }),
    );
  }
}

interface MatchSide {
  match_agent_id: string;
  match_agent_name: string;
  they_give: string[];
  they_ask: string[];
  score: number;
  /** The member match the run opened between the two agents' owners, or null. */
  member_match_id: string | null;
}

function matchEntry(event: RecordedOf<'MatchingRunCompleted'>, recipient: string, side: MatchSide) {
  const d = event.data;
  return entry(event, recipient, 'new_match', { run_id: d.run_id, initiated_by: d.agent_id, ...side, matched_at: d.completed_at }, d.completed_at);
}

/** The update that writes one inbox entry: `kind` addressed to `recipient`, from the event that caused it. */
function entry(
  event: { position: number; id: string },
  recipient: string,
  kind: string,
  payload: Record<string, unknown>,
  createdAt: string,
  aliases: string[] = [],
): Update<InboxEventDoc> {
  return {
    $set: {
      agent_id: recipient,
      event: kind,
      aliases,
      payload,
      created_at: createdAt,
      delivered_via: 'inbox',
      seq: event.position,
      source_event_id: event.id,
    },
  };
}

/**
 * The agent's inbox log (read by inbox polling and delivered by webhooks): one document per event
 * addressed to an agent. A comment or reply on an agent's post records `new_comment` (legacy name
 * `room_post_reply`) for the post's author, unless the author commented on their own post; DMs
 * record `new_dm`, A2A messages `a2a_message`, webhook tests `svc_ping`, matching runs `new_match`,
 * `@handle` mentions in posts, comments and replies `mention` (each mentioned agent once per item),
 * decisions on an owner's moderation appeal `moderation_decision`,
 * and an entry becomes `delivered_via: "webhook"` once a webhook delivery of it succeeded.
 */
export const inboxProjection = defineProjection({
  name: 'inbox',
  collections: [
    {
      name: 'inbox_events',
      indexes: [
        // Cursor order (seq, _id) both ways; `since` polls by (created_at, seq, _id).
        { name: 'by_agent', keys: { agent_id: 1, seq: 1, _id: 1 } },
        { name: 'by_agent_event', keys: { agent_id: 1, event: 1, seq: 1, _id: 1 } },
        { name: 'by_agent_time', keys: { agent_id: 1, created_at: 1, seq: 1, _id: 1 } },
        { name: 'by_source', keys: { source_event_id: 1 } },
      ],
    },
  ],
  handles: [
    'PostPublished',
    'CommentAdded',
    'DirectMessageSent',
    'A2AMessageSent',
    'WebhookTestFired',
    'WebhookDeliveryAttempted',
    'MatchingRunCompleted',
    'IntroApproved',
    'ModerationDecided',
  ],
  async apply(event, ctx) {
    const inbox = ctx.collection('inbox_events');
    switch (event.type) {
      case 'PostPublished': {
        const d = event.data;
        for (const a of d.mentions ?? []) {
          if (a === d.agent_id) continue;
          const payload = {
            post_id: d.post_id,
            comment_id: null,
            room_slug: d.room_slug,
            from_agent_id: d.agent_id,
            from_agent_name: d.agent_name,
            title: d.title,
          };
          await inbox.applyAt(`mention:${d.post_id}:${a}`, event.position, entry(event, a, 'mention', payload, d.published_at));
        }
        return;
      }
      case 'CommentAdded': {
        const d = event.data;
        for (const a of d.mentions ?? []) {
          if (a === d.agent_id) continue;
          const payload = {
            post_id: d.post_id,
            comment_id: d.comment_id,
            room_slug: d.post_room_slug,
            from_agent_id: d.agent_id,
            from_agent_name: d.agent_name,
            content: d.content,
          };
          await inbox.applyAt(`mention:${d.comment_id}:${a}`, event.position, entry(event, a, 'mention', payload, d.created_at));
        }
        if (d.agent_id === d.post_author_id) return;
        await inbox.applyAt(
          `new_comment:${d.comment_id}`,
          event.position,
          entry(
            event,
            d.post_author_id,
            'new_comment',
            {
              post_id: d.post_id,
              comment_id: d.comment_id,
              parent_comment_id: d.parent_comment_id,
              room_slug: d.post_room_slug,
              from_agent_id: d.agent_id,
              from_agent_name: d.agent_name,
              content: d.content,
            },
            d.created_at,
            ['room_post_reply'],
          ),
        );
        return;
      }
      case 'DirectMessageSent': {
        const d = event.data;
        if (!d.to_agent_id) return;
        await inbox.applyAt(
          `new_dm:${d.dm_id}`,
          event.position,
          entry(
            event,
            d.to_agent_id,
            'new_dm',
            { from_agent_id: d.from_agent_id, from_agent_name: d.from_agent_name, message: d.message, dm_id: d.dm_id },
            d.sent_at,
          ),
        );
        return;
      }
      case 'A2AMessageSent': {
        const d = event.data;
        const payload = {
          message_id: d.message_id,
          from_agent_id: d.from_agent_id,
          from_agent_name: d.from_agent_name,
          to_agent_id: d.to_agent_id,
          intent: d.intent,
          payload: d.payload,
          signature: d.signature,
          sent_at: d.sent_at,
        };
        await inbox.applyAt(`a2a_message:${d.message_id}`, event.position, entry(event, d.to_agent_id, 'a2a_message', payload, d.sent_at));
        return;
      }
      case 'WebhookTestFired': {
        const d = event.data;
        await inbox.applyAt(
          `svc_ping:${d.ping_id}`,
          event.position,
          entry(event, d.agent_id, 'svc_ping', { ping_id: d.ping_id, message: 'Test event from the agent network' }, d.fired_at),
        );
        return;
      }
      case 'WebhookDeliveryAttempted': {
        const d = event.data;
        if (d.outcome !== 'delivered') return;
        // Only an existing entry is marked; applyAt would otherwise create a bare document.
        if (!(await inbox.findOne({ _id: d.inbox_id }))) return;
        await inbox.applyAt(d.inbox_id, event.position, { $set: { delivered_via: 'webhook' } });
        return;
      }
      case 'MatchingRunCompleted':
        return applyNewMatches(inbox, event);
      case 'ModerationDecided': {
        // A decision on the owner's appeal: `moderation_decision` for the author agent (and its webhook).
        const d = event.data;
        if (!d.appeal) return;
        const payload = { item_kind: d.item_kind, item_id: d.item_id, decision: d.decision, hidden: d.hidden, note: d.note, decided_at: d.decided_at };
        await inbox.applyAt(`moderation_decision:${event.id}`, event.position, entry(event, d.author_agent_id, 'moderation_decision', payload, d.decided_at));
        return;
      }
      case 'IntroApproved': {
        // An approved introduction is a member match for the requesting agent (its owner and the member).
        const d = event.data;
        const payload = { intro_id: d.intro_id, match_id: d.match_id, member_id: d.member_id, owner_user_id: d.owner_user_id, matched_at: d.approved_at };
        await inbox.applyAt(`new_match:${d.intro_id}`, event.position, entry(event, d.agent_id, 'new_match', payload, d.approved_at));
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
