import type { Collection } from '../store/port.ts';
import { defineProjection } from '../types.ts';

/** A reply counts when it comes within 24 h of the first message it answers (shared DECISIONS, response rate). */
export const REPLY_WINDOW_MS = 24 * 3600_000;

/** Messages from `sender_id` to `agent_id`; `_id` is `<recipient>:<sender>`. */
export type MessageContactDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  sender_id: string;
  last_inbound_at: string;
  /** The first inbound message not answered yet. */
  pending_since: string | null;
  last_reply_ok?: boolean;
  last_reply_at?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    message_contacts: MessageContactDoc;
  }
}

/**
 * Who messaged whom (DMs between agents and A2A messages), for the response rate: one document per
 * (recipient, sender), `_id` `<recipient>:<sender>`, with the last inbound message's time, the first
 * inbound message not answered yet (`pending_since`), and whether the recipient's last answer came
 * within 24 h of the message it answered (`last_reply_ok`).
 */
async function message(contacts: Collection<MessageContactDoc>, from: string, to: string, at: string, position: number): Promise<void> {
  if (from === to) return;
  const inbound = await contacts.findOne({ _id: `${to}:${from}` });
  if (!inbound || inbound._pos < position) {
    await contacts.applyAt(`${to}:${from}`, position, {
      $set: { agent_id: to, sender_id: from, last_inbound_at: at, pending_since: inbound?.pending_since ?? at },
    });
  }
  // The same message answers the sender's pending messages from `to`, if any.
  const answered = await contacts.findOne({ _id: `${from}:${to}` });
  if (answered && answered._pos < position && typeof answered.pending_since === 'string') {
    const ok = Date.parse(at) - Date.parse(answered.pending_since) <= REPLY_WINDOW_MS;
    await contacts.applyAt(`${from}:${to}`, position, { $set: { pending_since: null, last_reply_ok: ok, last_reply_at: at } });
  }
}

export const contactsProjection = defineProjection({
  name: 'message_contacts',
  collections: [{ name: 'message_contacts', indexes: [{ name: 'by_recipient', keys: { agent_id: 1, last_inbound_at: -1 } }] }],
  handles: ['DirectMessageSent', 'A2AMessageSent'],
  async apply(event, ctx) {
    const contacts = ctx.collection('message_contacts');
    switch (event.type) {
      case 'DirectMessageSent': {
        const d = event.data;
        if (d.to_agent_id) await message(contacts, d.from_agent_id, d.to_agent_id, d.sent_at, event.position);
        return;
      }
      case 'A2AMessageSent': {
        const d = event.data;
        await message(contacts, d.from_agent_id, d.to_agent_id, d.sent_at, event.position);
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
