import type { Static, TSchema } from '@sinclair/typebox';
import type { AgentEvent, OwnerEmailReserved, SuperAdminGranted } from './agents.ts';
import { agentEventSchemas } from './agents.ts';
import type { CirclePostEvent, CircleUserEvent, CommunityEvent } from './communities.ts';
import { communityEventSchemas } from './communities.ts';
import type { SiteEvent } from './site.ts';
import { siteEventSchemas } from './site.ts';
import type { CreditsEvent } from './credits.ts';
import { creditEventSchemas } from './credits.ts';
import type { FeedEvent } from './feed.ts';
import { FEED_CHARGED_EVENTS, feedEventSchemas } from './feed.ts';
import type * as H from './humans.ts';
import { humanEventSchemas } from './humans.ts';
import type { MatchingEvent } from './matching.ts';
import { MATCHING_CHARGED_EVENTS, matchingEventSchemas } from './matching.ts';
import type { ModerationEvent } from './moderation.ts';
import { moderationEventSchemas } from './moderation.ts';
import type { MessagingEvent } from './messaging.ts';
import { MESSAGING_CHARGED_EVENTS, messagingEventSchemas } from './messaging.ts';
import type { FederationEvent } from './federation.ts';
import { federationEventSchemas } from './federation.ts';
import type { MarketplaceEvent } from './marketplace.ts';
import { MARKETPLACE_CHARGED_EVENTS, marketplaceEventSchemas } from './marketplace.ts';
import type { SocialEvent } from './social.ts';
import { SOCIAL_CHARGED_EVENTS, socialEventSchemas } from './social.ts';
import type { Event } from './types.ts';
import type { WebhookEvent } from './webhooks.ts';
import { webhookEventSchemas } from './webhooks.ts';

/** Every event type the service writes, with the TypeBox schema of its data: the one source of both its type and its JSON Schema. */
const catalogue = {
  ...agentEventSchemas,
  ...creditEventSchemas,
  ...feedEventSchemas,
  ...humanEventSchemas,
  ...matchingEventSchemas,
  ...messagingEventSchemas,
  ...socialEventSchemas,
  ...federationEventSchemas,
  ...webhookEventSchemas,
  ...marketplaceEventSchemas,

  ...communityEventSchemas,
  ...siteEventSchemas,
  ...moderationEventSchemas,
};
export type EventCatalogue = typeof catalogue;

/**
 * The JSON Schema of each event type's data (appends are validated against it in tests). Typed by
 * key (`eventSchemas.PostPublished`), and indexable by a type name read from the log.
 */
export const eventSchemas: EventCatalogue & Readonly<Record<string, TSchema>> = catalogue;

export type DomainEventType = keyof EventCatalogue;
/** Every domain event of the service: one discriminated union, so a `switch` on `type` narrows `data`. */
export type DomainEvent = { [K in DomainEventType]: Event<K, Static<EventCatalogue[K]>> }[DomainEventType];
/** The event of one type, e.g. `EventOfType<'PostPublished'>`. */
export type EventOfType<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;

/**
 * Event types that carry a `charge` (the credit-spend building block). The agents and credit-usage
 * read models follow balances through these; a new charged event type is added to its area's list.
 */
export const CHARGED_EVENT_TYPES: ReadonlySet<string> = new Set<DomainEventType>([
  ...FEED_CHARGED_EVENTS,
  ...MESSAGING_CHARGED_EVENTS,
  ...MATCHING_CHARGED_EVENTS,
  ...SOCIAL_CHARGED_EVENTS,
  ...MARKETPLACE_CHARGED_EVENTS,
]);

// Compile-time: every area union and each event type declared beside its schema is a member of
// DomainEvent (a misspelt type or a data type that drifted from the catalogue fails here).
type Member<E extends DomainEvent> = E;
type _AreaUnionsAreDomainEvents = [
  Member<AgentEvent | OwnerEmailReserved | SuperAdminGranted>,
  Member<CreditsEvent>,
  Member<FeedEvent>,
  Member<H.UserEvent | H.OtpEvent | H.MailEvent | H.AgentOwnershipEvent>,
  Member<H.UserEmailReserved | H.EliteAgentReserved | H.AutoPostPrefsChanged | H.DigestProduced | H.DigestRead>,
  Member<H.MatchCreated | H.MatchMessageSent | H.MatchMessageDeleted | H.MatchMessageReported | H.MatchMessagesRead>,
  Member<MatchingEvent>,
  Member<MessagingEvent>,
  Member<SocialEvent>,
  Member<FederationEvent>,
  Member<WebhookEvent>,
  Member<MarketplaceEvent>,

  Member<CommunityEvent | CirclePostEvent | CircleUserEvent>,
  Member<SiteEvent>,
  Member<ModerationEvent>,
];
