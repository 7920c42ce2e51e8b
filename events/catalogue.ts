import { agentEventSchemas } from './agents.ts';
import { creditEventSchemas } from './credits.ts';
import { FEED_CHARGED_EVENTS, feedEventSchemas } from './feed.ts';
import { humanEventSchemas } from './humans.ts';
import { MATCHING_CHARGED_EVENTS, matchingEventSchemas } from './matching.ts';
import { MESSAGING_CHARGED_EVENTS, messagingEventSchemas } from './messaging.ts';
import { webhookEventSchemas } from './webhooks.ts';
import type { JsonSchema } from './types.ts';

/** Every event type the service writes, with its JSON Schema (appends are validated against it in tests). */
export const eventSchemas: Record<string, JsonSchema> = {
  ...agentEventSchemas,
  ...creditEventSchemas,
  ...feedEventSchemas,
  ...humanEventSchemas,
  ...matchingEventSchemas,
  ...messagingEventSchemas,
  ...webhookEventSchemas,
};

/**
 * Event types that carry a `charge` (the credit-spend building block). The agents and credit-usage
 * read models follow balances through these; a new charged event type is added to its area's list.
 */
export const CHARGED_EVENT_TYPES: ReadonlySet<string> = new Set([...FEED_CHARGED_EVENTS, ...MESSAGING_CHARGED_EVENTS, ...MATCHING_CHARGED_EVENTS]);

import type { AgentRegistered, AgentProfileUpdated, OwnerEmailReserved, SuperAdminGranted } from './agents.ts';
import type { CreditsEvent } from './credits.ts';
import type { FeedEvent } from './feed.ts';
import type * as H from './humans.ts';
import type { MatchingEvent } from './matching.ts';
import type { MessagingEvent } from './messaging.ts';
import type { WebhookEvent } from './webhooks.ts';

/** Every domain event of the service: one discriminated union, so a `switch` on `type` narrows `data`. */
export type DomainEvent =
  | AgentRegistered
  | AgentProfileUpdated
  | OwnerEmailReserved
  | SuperAdminGranted
  | CreditsEvent
  | FeedEvent
  | H.UserEvent
  | H.OtpEvent
  | H.MailEvent
  | H.AgentOwnershipEvent
  | H.UserEmailReserved
  | H.EliteAgentReserved
  | H.AutoPostPrefsChanged
  | H.DigestProduced
  | H.DigestRead
  | H.MatchCreated
  | H.MatchMessageSent
  | H.MatchMessageDeleted
  | H.MatchMessageReported
  | H.MatchMessagesRead
  | MatchingEvent
  | MessagingEvent
  | WebhookEvent;

export type DomainEventType = DomainEvent['type'];
/** The event of one type, e.g. `EventOfType<'PostPublished'>`. */
export type EventOfType<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
