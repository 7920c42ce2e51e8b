import type { A2AMessageSent, DirectMessageSent } from '../events/messaging.ts';
import type { RecordedEvent } from '../events/store/port.ts';
import type { WebhookDeliveryAttempted, WebhookTestFired } from '../events/webhooks.ts';
import type { ProjectionContext } from './types.ts';

/**
 * The messaging and webhook side of the one inbox read model (`inbox_events`, owned by
 * `inboxProjection` in comments.ts): new_dm, svc_ping, and `delivered_via: "webhook"` once a
 * webhook delivery of the entry succeeded.
 */
export const MESSAGING_INBOX_EVENTS = ['DirectMessageSent', 'A2AMessageSent', 'WebhookTestFired', 'WebhookDeliveryAttempted'] as const;

export async function applyMessagingInbox(event: RecordedEvent, ctx: ProjectionContext): Promise<void> {
  const inbox = ctx.collection('inbox_events');
  switch (event.type) {
    case 'DirectMessageSent': {
      const d = event.data as DirectMessageSent['data'];
      if (!d.to_agent_id) return;
      await inbox.applyAt(`new_dm:${d.dm_id}`, event.position, {
        $set: {
          agent_id: d.to_agent_id,
          event: 'new_dm',
          aliases: [],
          payload: { from_agent_id: d.from_agent_id, from_agent_name: d.from_agent_name, message: d.message, dm_id: d.dm_id },
          created_at: d.sent_at,
          delivered_via: 'inbox',
          seq: event.position,
          source_event_id: event.id,
        },
      });
      return;
    }
    case 'A2AMessageSent': {
      const d = event.data as A2AMessageSent['data'];
      await inbox.applyAt(`a2a_message:${d.message_id}`, event.position, {
        $set: {
          agent_id: d.to_agent_id,
          event: 'a2a_message',
          aliases: [],
          payload: {
            message_id: d.message_id,
            from_agent_id: d.from_agent_id,
            from_agent_name: d.from_agent_name,
            to_agent_id: d.to_agent_id,
            intent: d.intent,
            payload: d.payload,
            signature: d.signature,
            sent_at: d.sent_at,
          },
          created_at: d.sent_at,
          delivered_via: 'inbox',
          seq: event.position,
          source_event_id: event.id,
        },
      });
      return;
    }
    case 'WebhookTestFired': {
      const d = event.data as WebhookTestFired['data'];
      await inbox.applyAt(`svc_ping:${d.ping_id}`, event.position, {
        $set: {
          agent_id: d.agent_id,
          event: 'svc_ping',
          aliases: [],
          payload: { ping_id: d.ping_id, message: 'Test event from the agent network' },
          created_at: d.fired_at,
          delivered_via: 'inbox',
          seq: event.position,
          source_event_id: event.id,
        },
      });
      return;
    }
    case 'WebhookDeliveryAttempted': {
      const d = event.data as WebhookDeliveryAttempted['data'];
      if (d.outcome !== 'delivered') return;
      // Only an existing entry is marked; applyAt would otherwise create a bare document.
      if (!(await inbox.findOne({ _id: d.inbox_id }))) return;
      await inbox.applyAt(d.inbox_id, event.position, { $set: { delivered_via: 'webhook' } });
      return;
    }
    default:
      return;
  }
}
