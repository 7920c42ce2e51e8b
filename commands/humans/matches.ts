import type { MatchCreated, MatchMessageDeleted, MatchMessageReported, MatchMessageSent, MatchMessagesRead } from '../../events/humans.ts';
import { matchStream, userStream } from '../../events/humans.ts';
import { DomainError, forbidden, notFound, ValidationFailed } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';
import { userAggregate } from './user.ts';

export interface MatchMessageState {
  sender_id: string;
  recipient_id: string;
  deleted: boolean;
  read: boolean;
  reported_by: readonly string[];
}

export interface MatchState {
  exists: boolean;
  members: readonly string[];
  /** The creation, as recorded (a retried CreateMatch answers with it). */
  created: MatchCreated['data'] | null;
  messages: Readonly<Record<string, MatchMessageState>>;
}

/** Every event a `match-<id>` stream holds. */
export type MatchEvent = MatchCreated | MatchMessageSent | MatchMessageDeleted | MatchMessageReported | MatchMessagesRead;

export const matchAggregate: Aggregate<MatchState, MatchEvent> = {
  initialState: () => ({ exists: false, members: [], created: null, messages: {} }),
  evolve(state, event) {
    switch (event.type) {
      case 'MatchCreated':
        return { ...state, exists: true, members: [event.data.user_a_id, event.data.user_b_id], created: event.data };
      case 'MatchMessageSent': {
        const d = event.data;
        return {
          ...state,
          messages: {
            ...state.messages,
            [d.message_id]: { sender_id: d.sender_id, recipient_id: d.recipient_id, deleted: false, read: false, reported_by: [] },
          },
        };
      }
      case 'MatchMessageDeleted': {
        const m = state.messages[event.data.message_id];
        return m ? { ...state, messages: { ...state.messages, [event.data.message_id]: { ...m, deleted: true } } } : state;
      }
      case 'MatchMessageReported': {
        const d = event.data;
        const m = state.messages[d.message_id];
        return m ? { ...state, messages: { ...state.messages, [d.message_id]: { ...m, reported_by: [...m.reported_by, d.reported_by] } } } : state;
      }
      case 'MatchMessagesRead': {
        const messages = { ...state.messages };
        for (const id of event.data.message_ids) if (messages[id]) messages[id] = { ...messages[id], read: true };
        return { ...state, messages };
      }
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

const notMember = () => forbidden('Only the two members of a match can read or write it', 'not_match_member');
const matchNotFound = () => notFound('Match', 'match_not_found');
const messageNotFound = () => notFound('Message', 'message_not_found');

/** CreateMatch: the two users (whether each is registered, read from their streams) and the reason; the match id in the metadata. */
export type CreateMatch = Command<
  'CreateMatch',
  { user_a_id: string; user_b_id: string; reason: string | null; users_exist: boolean; created_by: string },
  { now: Date; match_id: string }
>;

/** Both users must exist (404) and differ (400); a retried creation appends nothing. */
export function decideCreateMatch(command: CreateMatch, state: MatchState): MatchCreated[] {
  const { user_a_id, user_b_id, reason, users_exist, created_by } = command.data;
  if (!users_exist) throw notFound('User', 'user_not_found');
  if (user_a_id === user_b_id) throw new DomainError(400, 'same_user', 'A match needs two different users');
  if (state.exists) return [];
  return [
    {
      type: 'MatchCreated',
      data: { match_id: command.metadata.match_id, user_a_id, user_b_id, reason, created_by, created_at: command.metadata.now.toISOString() },
    },
  ];
}

/** A super admin creates a match between two users (operations and tests). */
export async function createMatch(bus: CommandBus, input: { user_a_id: string; user_b_id: string; reason: string | null }, ctx: CommandContext) {
  const registered = async (id: string) => (await bus.load(userStream(id), userAggregate)).state.exists;
  const users_exist = (await registered(input.user_a_id)) && (await registered(input.user_b_id));
  const command: CreateMatch = {
    type: 'CreateMatch',
    data: { ...input, users_exist, created_by: ctx.actor ?? 'unknown' },
    metadata: { now: ctx.now, match_id: deriveId('mtc', ctx.commandId) },
  };
  const r = await bus.handle<MatchState, MatchCreated>(
    matchStream(command.metadata.match_id),
    matchAggregate,
    (state) => decideCreateMatch(command, state),
    ctx,
  );
  const created = r.events[0]?.data ?? r.state.created;
  if (!created) throw matchNotFound();
  return { match_id: created.match_id, position: r.position, created };
}

/** SendMatchMessage: the sender and the text; the message id in the metadata. */
export type SendMatchMessage = Command<'SendMatchMessage', { match_id: string; user_id: string; content: string }, { now: Date; message_id: string }>;

/** Text must not be blank (422; it is stored trimmed); only the two members may write (404 / 403); a retry appends nothing. */
export function decideSendMatchMessage(command: SendMatchMessage, state: MatchState): MatchMessageSent[] {
  const { match_id, user_id, content } = command.data;
  const { now, message_id } = command.metadata;
  const text = content.trim();
  if (!text) throw new ValidationFailed([{ loc: ['body', 'content'], msg: 'content must not be blank', type: 'value_error.blank' }]);
  if (!state.exists) throw matchNotFound();
  if (!state.members.includes(user_id)) throw notMember();
  if (state.messages[message_id]) return [];
  const recipient = state.members.find((m) => m !== user_id) ?? user_id;
  return [{ type: 'MatchMessageSent', data: { match_id, message_id, sender_id: user_id, recipient_id: recipient, content: text, sent_at: now.toISOString() } }];
}

export async function sendMatchMessage(bus: CommandBus, userId: string, matchId: string, content: string, ctx: CommandContext) {
  const command: SendMatchMessage = {
    type: 'SendMatchMessage',
    data: { match_id: matchId, user_id: userId, content },
    metadata: { now: ctx.now, message_id: deriveId('msg', ctx.commandId) },
  };
  const r = await bus.handle<MatchState, MatchMessageSent>(matchStream(matchId), matchAggregate, (state) => decideSendMatchMessage(command, state), ctx);
  return { message_id: command.metadata.message_id, position: r.position };
}

/** The message of a match command, if it exists and the caller is a member (404 for a missing one, 403 for a stranger). */
function memberMessage(state: MatchState, userId: string, messageId: string): MatchMessageState {
  const m = state.messages[messageId];
  if (!state.exists || !m) throw messageNotFound();
  if (!state.members.includes(userId)) throw notMember();
  return m;
}

/** DeleteMatchMessage: one message of the match, by the caller. */
export type DeleteMatchMessage = Command<'DeleteMatchMessage', { match_id: string; message_id: string; user_id: string }, { now: Date }>;

/** Only the sender may delete a message (403 `not_sender`); a deleted one is gone (404). */
export function decideDeleteMatchMessage(command: DeleteMatchMessage, state: MatchState): MatchMessageDeleted[] {
  const { match_id, message_id, user_id } = command.data;
  if (state.messages[message_id]?.deleted) throw messageNotFound();
  const m = memberMessage(state, user_id, message_id);
  if (m.sender_id !== user_id) throw forbidden('Only the sender may delete a message', 'not_sender');
  return [{ type: 'MatchMessageDeleted', data: { match_id, message_id, deleted_by: user_id, deleted_at: command.metadata.now.toISOString() } }];
}

export function deleteMatchMessage(bus: CommandBus, userId: string, matchId: string, messageId: string, ctx: CommandContext) {
  const command: DeleteMatchMessage = {
    type: 'DeleteMatchMessage',
    data: { match_id: matchId, message_id: messageId, user_id: userId },
    metadata: { now: ctx.now },
  };
  return bus.handle<MatchState, MatchMessageDeleted>(matchStream(matchId), matchAggregate, (state) => decideDeleteMatchMessage(command, state), ctx);
}

/** ReportMatchMessage: a message of the match, the caller's reason and details. */
export type ReportMatchMessage = Command<
  'ReportMatchMessage',
  { match_id: string; message_id: string; user_id: string; reason: string; details: string | null },
  { now: Date }
>;

/** The recipient reports a message, once (a repeat appends nothing); one's own message cannot be reported (400). */
export function decideReportMatchMessage(command: ReportMatchMessage, state: MatchState): MatchMessageReported[] {
  const { match_id, message_id, user_id, reason, details } = command.data;
  const m = memberMessage(state, user_id, message_id);
  if (m.sender_id === user_id) throw new DomainError(400, 'cannot_report_own', 'You cannot report your own message');
  if (m.reported_by.includes(user_id)) return [];
  return [
    { type: 'MatchMessageReported', data: { match_id, message_id, reported_by: user_id, reason, details, reported_at: command.metadata.now.toISOString() } },
  ];
}

export function reportMatchMessage(
  bus: CommandBus,
  userId: string,
  matchId: string,
  messageId: string,
  input: { reason: string; details: string | null },
  ctx: CommandContext,
) {
  const command: ReportMatchMessage = {
    type: 'ReportMatchMessage',
    data: { match_id: matchId, message_id: messageId, user_id: userId, ...input },
    metadata: { now: ctx.now },
  };
  return bus.handle<MatchState, MatchMessageReported>(matchStream(matchId), matchAggregate, (state) => decideReportMatchMessage(command, state), ctx);
}

/** MarkMatchRead: the caller read the conversation. */
export type MarkMatchRead = Command<'MarkMatchRead', { match_id: string; user_id: string }, { now: Date }>;

/** Reading a conversation marks the messages received in it as read; members only (404 / 403); nothing unread appends nothing. */
export function decideMarkMatchRead(command: MarkMatchRead, state: MatchState): MatchMessagesRead[] {
  const { match_id, user_id } = command.data;
  if (!state.exists) throw matchNotFound();
  if (!state.members.includes(user_id)) throw notMember();
  const unread = Object.entries(state.messages)
    .filter(([, m]) => m.recipient_id === user_id && !m.read && !m.deleted)
    .map(([id]) => id);
  if (unread.length === 0) return [];
  return [{ type: 'MatchMessagesRead', data: { match_id, user_id, message_ids: unread, read_at: command.metadata.now.toISOString() } }];
}

export function markMatchRead(bus: CommandBus, userId: string, matchId: string, ctx: CommandContext) {
  const command: MarkMatchRead = { type: 'MarkMatchRead', data: { match_id: matchId, user_id: userId }, metadata: { now: ctx.now } };
  return bus.handle<MatchState, MatchMessagesRead>(matchStream(matchId), matchAggregate, (state) => decideMarkMatchRead(command, state), ctx);
}
