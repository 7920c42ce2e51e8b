import { FEED_CHARGED_EVENTS } from '../../events/feed.ts';
import { MATCHING_CHARGED_EVENTS } from '../../events/matching.ts';
import { MESSAGING_CHARGED_EVENTS } from '../../events/messaging.ts';
import { SOCIAL_CHARGED_EVENTS } from '../../events/social.ts';
import { MARKETPLACE_CHARGED_EVENTS } from '../../events/marketplace.ts';

/**
 * Every event type that carries a `charge` (events/catalogue.ts CHARGED_EVENT_TYPES, as a typed
 * list): the agents and credit-usage read models follow balances through these, and a projection
 * that handles them must name each one in its `switch`.
 */
export const CHARGED_EVENTS = [
  ...FEED_CHARGED_EVENTS,
  ...MESSAGING_CHARGED_EVENTS,
  ...MATCHING_CHARGED_EVENTS,
  ...SOCIAL_CHARGED_EVENTS,
  ...MARKETPLACE_CHARGED_EVENTS,
] as const;
