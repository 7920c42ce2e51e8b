import type { MatchCreated, MatchMessageDeleted, MatchMessageReported, MatchMessageSent, MatchMessagesRead } from '../../events/humans.ts';
import { matchStream } from '../../events/humans.ts';
import { DomainError, forbidden, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Event } from '../../events/types.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

export interface MatchState {
  exists: boolean;
  members: readonly string[];
  messages: Readonly<Record<string, { sender_id: string; recipient_id: string; deleted: boolean; read: boolean; reported_by: readonly string[] }>>;
}

export const matchAggregate: Aggregate<MatchState> = {
  initialState: () => ({ exists: false, members: [], messages: {} }),
  evolve(state, event: Event<string, unknown>) {
    switch (event.type) {
      case 'MatchCreated': {
        const d = event.data as MatchCreated['data'];
        return { ...state, exists: true, members: [d.user_a_id, d.user_b_id] };
      }
      case 'MatchMessageSent': {
        const d = event.data as MatchMessageSent['data'];
        return {
          ...state,
          messages: {
            ...state.messages,
            [d.message_id]: { sender_id: d.sender_id, recipient_id: d.recipient_id, deleted: false, read: false, reported_by: [] },
          },
        };
      }
      case 'MatchMessageDeleted': {
        const d = event.data as MatchMessageDeleted['data'];
        const m = state.messages[d.message_id];
        return m ? { ...state, messages: { ...state.messages, [d.message_id]: { ...m, deleted: true } } } : state;
      }
      case 'MatchMessageReported': {
        const d = event.data as MatchMessageReported['data'];
        const m = state.messages[d.message_id];
        return m ? { ...state, messages: { ...state.messages, [d.message_id]: { ...m, reported_by: [...m.reported_by, d.reported_by] } } } : state;
      }
      case 'MatchMessagesRead': {
        const d = event.data as MatchMessagesRead['data'];
        const messages = { ...state.messages };
        for (const id of d.message_ids) if (messages[id]) messages[id] = { ...messages[id], read: true };
        return { ...state, messages };
      }
      default:
        return state;
    }
  },
};

const notMember = () => forbidden('Only the two members of a match can read or write it', 'not_match_member');

/** A super admin creates a match between two users (operations and tests). */
export async function createMatch(bus: CommandBus, input: { user_a_id: string; user_b_id: string; reason: string | null }, ctx: CommandContext) {
  if (input.user_a_id === input.user_b_id) throw new DomainError(400, 'same_user', 'A match needs two different users');
  const matchId = deriveId('mtc', ctx.commandId);
  const created: MatchCreated = {
    type: 'MatchCreated',
    data: {
      match_id: matchId,
      user_a_id: input.user_a_id,
      user_b_id: input.user_b_id,
      reason: input.reason,
      created_by: ctx.actor ?? 'unknown',
      created_at: ctx.now.toISOString(),
    },
  };
  const r = await bus.handle(matchStream(matchId), matchAggregate, (state) => (state.exists ? [] : [created]), ctx);
  return { match_id: matchId, position: r.position, created: created.data };
}

export async function sendMatchMessage(bus: CommandBus, userId: string, matchId: string, content: string, ctx: CommandContext) {
  const messageId = deriveId('msg', ctx.commandId);
  let sent: MatchMessageSent | null = null;
  const r = await bus.handle(
    matchStream(matchId),
    matchAggregate,
    (state) => {
      if (!state.exists) throw notFound('Match', 'match_not_found');
      if (!state.members.includes(userId)) throw notMember();
      if (state.messages[messageId]) return [];
      const recipient = state.members.find((m) => m !== userId) ?? userId;
      sent = {
        type: 'MatchMessageSent',
        data: { match_id: matchId, message_id: messageId, sender_id: userId, recipient_id: recipient, content, sent_at: ctx.now.toISOString() },
      };
      return [sent];
    },
    ctx,
  );
  return { message_id: messageId, position: r.position, sent };
}

/** Only the sender may delete a message. */
export function deleteMatchMessage(bus: CommandBus, userId: string, matchId: string, messageId: string, ctx: CommandContext) {
  return bus.handle(
    matchStream(matchId),
    matchAggregate,
    (state) => {
      const m = state.messages[messageId];
      if (!state.exists || !m || m.deleted || !state.members.includes(userId)) throw notFound('Message', 'message_not_found');
      if (m.sender_id !== userId) throw forbidden('Only the sender may delete a message', 'not_sender');
      return [
        {
          type: 'MatchMessageDeleted',
          data: { match_id: matchId, message_id: messageId, deleted_by: userId, deleted_at: ctx.now.toISOString() },
        } satisfies MatchMessageDeleted,
      ];
    },
    ctx,
  );
}

/** The recipient reports a message (once; a repeat appends nothing). */
export function reportMatchMessage(
  bus: CommandBus,
  userId: string,
  matchId: string,
  messageId: string,
  input: { reason: string; details: string | null },
  ctx: CommandContext,
) {
  return bus.handle(
    matchStream(matchId),
    matchAggregate,
    (state) => {
      const m = state.messages[messageId];
      if (!state.exists || !m || !state.members.includes(userId)) throw notFound('Message', 'message_not_found');
      if (m.sender_id === userId) throw new DomainError(400, 'cannot_report_own', 'You cannot report your own message');
      if (m.reported_by.includes(userId)) return [];
      return [
        {
          type: 'MatchMessageReported',
          data: {
            match_id: matchId,
            message_id: messageId,
            reported_by: userId,
            reason: input.reason,
            details: input.details,
            reported_at: ctx.now.toISOString(),
          },
        } satisfies MatchMessageReported,
      ];
    },
    ctx,
  );
}

/** Reading a conversation marks the messages received in it as read. */
export function markMatchRead(bus: CommandBus, userId: string, matchId: string, ctx: CommandContext) {
  return bus.handle(
    matchStream(matchId),
    matchAggregate,
    (state) => {
      if (!state.exists) throw notFound('Match', 'match_not_found');
      if (!state.members.includes(userId)) throw notMember();
      const unread = Object.entries(state.messages)
        .filter(([, m]) => m.recipient_id === userId && !m.read && !m.deleted)
        .map(([id]) => id);
      if (unread.length === 0) return [];
      return [
        {
          type: 'MatchMessagesRead',
          data: { match_id: matchId, user_id: userId, message_ids: unread, read_at: ctx.now.toISOString() },
        } satisfies MatchMessagesRead,
      ];
    },
    ctx,
  );
}
