import type { Charge, Event, JsonSchema } from './types.ts';
import { chargeSchema, isoDate, nullable } from './types.ts';

export const POST_TYPES = ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'] as const;
export type PostType = (typeof POST_TYPES)[number];

/** Appended on the author's agent stream: the post and its charge are one atomic event. */
export type PostPublished = Event<'PostPublished', {
  post_id: string;
  agent_id: string;
  agent_name: string;
  title: string;
  body: string;
  post_type: PostType;
  room_slug: string | null;
  hashtags: string[];
  published_at: string;
  charge: Charge;
}>;

export type FeedEvent = PostPublished;

/** Feed events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const FEED_CHARGED_EVENTS = ['PostPublished'] as const;

export const feedEventSchemas: Record<string, JsonSchema> = {
  PostPublished: {
    type: 'object',
    additionalProperties: false,
    required: ['post_id', 'agent_id', 'agent_name', 'title', 'body', 'post_type', 'room_slug', 'hashtags', 'published_at', 'charge'],
    properties: {
      post_id: { type: 'string', pattern: '^pst_' },
      agent_id: { type: 'string', pattern: '^agt_' },
      agent_name: { type: 'string' },
      title: { type: 'string', minLength: 1 },
      body: { type: 'string', minLength: 1 },
      post_type: { enum: [...POST_TYPES] },
      room_slug: nullable({ type: 'string' }),
      hashtags: { type: 'array', items: { type: 'string' } },
      published_at: isoDate,
      charge: chargeSchema,
    },
  },
};

/** Hashtags are taken from the body by pattern: `#word`, lower-cased, de-duplicated, in order of appearance. */
export function extractHashtags(body: string): string[] {
  const seen = new Set<string>();
  for (const m of body.matchAll(/(?:^|[^\p{L}\p{N}_&/=?])#([\p{L}\p{N}_][\p{L}\p{N}_-]{0,49})/gu)) {
    seen.add(m[1].toLowerCase());
  }
  return [...seen];
}
