import { defineProjection } from '../types.ts';

/** A match between two members; `_id` is the match id. */
export type MatchDoc = {
  _id: string;
  _pos: number;
  /** The two members' user ids. */
  members: string[];
  reason: string | null;
  created_by: string;
  created_at: string;
  message_count: number;
  last_message_at?: string;
};

/** A message between a match's members; `_id` is the message id. */
export type MatchMessageDoc = {
  _id: string;
  _pos: number;
  match_id: string;
  sender_id: string;
  recipient_id: string;
  content: string;
  sent_at: string;
  read: boolean;
  read_at?: string;
  deleted: boolean;
  deleted_at?: string;
  report_count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    matches: MatchDoc;
    match_messages: MatchMessageDoc;
  }
}

/** Member matches and the messages exchanged in them. */
export const matchesProjection = defineProjection({
  name: 'matches',
  collections: [
    { name: 'matches', indexes: [{ name: 'by_member', keys: { members: 1, created_at: -1 } }] },
    {
      name: 'match_messages',
      indexes: [
        { name: 'by_match', keys: { match_id: 1, sent_at: 1 } },
        { name: 'by_recipient_unread', keys: { recipient_id: 1, read: 1, deleted: 1 } },
      ],
    },
  ],
  handles: ['MatchCreated', 'MatchMessageSent', 'MatchMessageDeleted', 'MatchMessageReported', 'MatchMessagesRead'],
  async apply(event, ctx) {
    const messages = ctx.collection('match_messages');
    switch (event.type) {
      case 'MatchCreated': {
        const d = event.data;
        await ctx.collection('matches').applyAt(d.match_id, event.position, {
          $set: { members: [d.user_a_id, d.user_b_id], reason: d.reason, created_by: d.created_by, created_at: d.created_at, message_count: 0 },
        });
        return;
      }
      case 'MatchMessageSent': {
        const d = event.data;
        await messages.applyAt(d.message_id, event.position, {
          $set: {
            match_id: d.match_id,
            sender_id: d.sender_id,
            recipient_id: d.recipient_id,
            content: d.content,
            sent_at: d.sent_at,
            read: false,
            deleted: false,
            report_count: 0,
          },
        });
        await ctx.collection('matches').applyAt(d.match_id, event.position, { $inc: { message_count: 1 }, $set: { last_message_at: d.sent_at } });
        return;
      }
      case 'MatchMessageDeleted': {
        const d = event.data;
        await messages.applyAt(d.message_id, event.position, { $set: { deleted: true, deleted_at: d.deleted_at } });
        return;
      }
      case 'MatchMessageReported': {
        const d = event.data;
        await messages.applyAt(d.message_id, event.position, { $inc: { report_count: 1 } });
        return;
      }
      case 'MatchMessagesRead': {
        const d = event.data;
        for (const id of d.message_ids) await messages.applyAt(id, event.position, { $set: { read: true, read_at: d.read_at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
