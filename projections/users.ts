import type { AgentRegistered } from '../events/agents.ts';
import type {
  AgentClaimed,
  AgentOwnerLinked,
  DigestProduced,
  DigestRead,
  MailQueued,
  MailSendFailed,
  MailSent,
  MatchCreated,
  MatchMessageDeleted,
  MatchMessageReported,
  MatchMessageSent,
  MatchMessagesRead,
  UserRegistered,
} from '../events/humans.ts';
import type { Projection } from './types.ts';

/** Users: the account and the agents linked to it (the dashboard). Never a password hash. */
export const usersProjection: Projection = {
  name: 'users',
  collections: [{ name: 'users', indexes: [{ name: 'by_email', keys: { email: 1 } }] }],
  handles: new Set(['UserRegistered', 'AgentClaimed', 'AgentOwnerLinked']),
  async apply(event, ctx) {
    const users = ctx.collection('users');
    switch (event.type) {
      case 'UserRegistered': {
        const d = event.data as UserRegistered['data'];
        await users.applyAt(d.user_id, event.position, {
          $set: { user_id: d.user_id, email: d.email, full_name: d.full_name, created_at: d.registered_at },
          $setOnInsert: { agent_ids: [], agent_id: null },
        });
        return;
      }
      case 'AgentClaimed':
      case 'AgentOwnerLinked': {
        const d = event.data as AgentClaimed['data'] | AgentOwnerLinked['data'];
        if (!d.user_id) return;
        // The most recently linked agent acts for the user on K|J routes.
        await users.applyAt(d.user_id, event.position, { $addToSet: { agent_ids: d.agent_id }, $set: { agent_id: d.agent_id } });
        return;
      }
    }
  },
};

/** Mail delivery state: what the mail worker still has to send (parameters stay encrypted). */
export const mailsProjection: Projection = {
  name: 'mails',
  collections: [{ name: 'mails', indexes: [{ name: 'by_status', keys: { status: 1, queued_at: 1 } }] }],
  handles: new Set(['MailQueued', 'MailSent', 'MailSendFailed']),
  async apply(event, ctx) {
    const mails = ctx.collection('mails');
    switch (event.type) {
      case 'MailQueued': {
        const d = event.data as MailQueued['data'];
        await mails.applyAt(d.mail_id, event.position, {
          $set: { template: d.template, to: d.to, params_enc: d.params_enc, queued_at: d.queued_at, stream: event.stream },
          $setOnInsert: { status: 'queued', attempts: 0 },
        });
        return;
      }
      case 'MailSent': {
        const d = event.data as MailSent['data'];
        await mails.applyAt(d.mail_id, event.position, { $set: { status: 'sent', attempts: d.attempt, sent_at: d.sent_at, transport: d.transport } });
        return;
      }
      case 'MailSendFailed': {
        const d = event.data as MailSendFailed['data'];
        await mails.applyAt(d.mail_id, event.position, {
          $set: { status: d.final ? 'failed' : 'retrying', attempts: d.attempt, last_error: d.error, failed_at: d.failed_at },
        });
        return;
      }
    }
  },
};

/** Claim tokens by keyed hash: the full claim finds its agent from the token alone. */
export const claimTokensProjection: Projection = {
  name: 'claim_tokens',
  collections: [{ name: 'claim_tokens', indexes: [] }],
  handles: new Set(['AgentRegistered']),
  async apply(event, ctx) {
    const d = event.data as AgentRegistered['data'];
    await ctx.collection('claim_tokens').applyAt(d.claim_token_hash, event.position, { $set: { agent_id: d.agent_id } });
  },
};

/** Passive match digests per user (the owner's `/api/svc/digests`). */
export const digestsProjection: Projection = {
  name: 'digests',
  collections: [{ name: 'digests', indexes: [{ name: 'by_user', keys: { user_id: 1, produced_at: -1 } }] }],
  handles: new Set(['DigestProduced', 'DigestRead']),
  async apply(event, ctx) {
    const digests = ctx.collection('digests');
    if (event.type === 'DigestProduced') {
      const d = event.data as DigestProduced['data'];
      await digests.applyAt(d.digest_id, event.position, {
        $set: { user_id: d.user_id, agent_id: d.agent_id, items: d.items, since: d.since, produced_at: d.produced_at, read: false, read_at: null },
      });
      return;
    }
    const d = event.data as DigestRead['data'];
    await digests.applyAt(d.digest_id, event.position, { $set: { read: true, read_at: d.read_at } });
  },
};

/** Member matches and the messages exchanged in them. */
export const matchesProjection: Projection = {
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
  handles: new Set(['MatchCreated', 'MatchMessageSent', 'MatchMessageDeleted', 'MatchMessageReported', 'MatchMessagesRead']),
  async apply(event, ctx) {
    const messages = ctx.collection('match_messages');
    switch (event.type) {
      case 'MatchCreated': {
        const d = event.data as MatchCreated['data'];
        await ctx.collection('matches').applyAt(d.match_id, event.position, {
          $set: { members: [d.user_a_id, d.user_b_id], reason: d.reason, created_by: d.created_by, created_at: d.created_at, message_count: 0 },
        });
        return;
      }
      case 'MatchMessageSent': {
        const d = event.data as MatchMessageSent['data'];
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
        const d = event.data as MatchMessageDeleted['data'];
        await messages.applyAt(d.message_id, event.position, { $set: { deleted: true, deleted_at: d.deleted_at } });
        return;
      }
      case 'MatchMessageReported': {
        const d = event.data as MatchMessageReported['data'];
        await messages.applyAt(d.message_id, event.position, { $inc: { report_count: 1 } });
        return;
      }
      case 'MatchMessagesRead': {
        const d = event.data as MatchMessagesRead['data'];
        for (const id of d.message_ids) await messages.applyAt(id, event.position, { $set: { read: true, read_at: d.read_at } });
        return;
      }
    }
  },
};
