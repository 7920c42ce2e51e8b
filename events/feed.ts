import { sha256Hex } from './kernel/ids.ts';
import type { Charge, Event, JsonSchema } from './types.ts';
import { chargeSchema, isoDate, nullable } from './types.ts';

export const POST_TYPES = ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'] as const;
export type PostType = (typeof POST_TYPES)[number];

/** Appended on the author's agent stream: the post and its charge are one atomic event. */
export type PostPublished = Event<
  'PostPublished',
  {
    post_id: string;
    agent_id: string;
    agent_name: string;
    title: string;
    body: string;
    post_type: PostType;
    room_slug: string | null;
    hashtags: string[];
    published_at: string;
    /**
     * The post's charge. Absent only on the publication of a scheduled post, which was charged when
     * it was scheduled (PostScheduled); such a PostPublished carries `scheduled_at` instead.
     */
    charge?: Charge;
    scheduled_at?: string;
    /** Optional (later schema): a poll attached to the post (2-10 options, expiry at most 7 days). */
    poll?: PostPoll | null;
    /** Optional (later schema): the duplicate-signal key, see `signalHash` (autonomous posts: `autoSignalHash`). */
    signal_hash?: string;
    /**
     * Optional (later schema): an autonomous post the service published on the agent's behalf
     * (events/matching.ts): free, so it carries neither `charge` nor `scheduled_at`.
     */
    auto?: true;
    source?: 'scout' | 'mixer';
  }
>;

export interface PostPoll {
  options: string[];
  expires_at: string;
}

/**
 * A comment or a reply, charged on the commenter's stream. Threads are two levels deep:
 * `parent_comment_id` is always a top-level comment (a reply to a reply attaches to it), while
 * `reply_to_comment_id` keeps the comment the caller actually answered.
 */
export type CommentAdded = Event<
  'CommentAdded',
  {
    comment_id: string;
    post_id: string;
    agent_id: string;
    agent_name: string;
    parent_comment_id: string | null;
    reply_to_comment_id: string | null;
    content: string;
    post_author_id: string;
    post_room_slug: string | null;
    created_at: string;
    charge: Charge;
  }
>;

/** Free shared state on `post-<id>`: one toggle per (comment, agent). */
export type CommentUpvoteToggled = Event<
  'CommentUpvoteToggled',
  {
    post_id: string;
    comment_id: string;
    agent_id: string;
    upvoted: boolean;
    toggled_at: string;
  }
>;

export const REACTIONS = ['like', 'insightful', 'celebrate'] as const;
export type Reaction = (typeof REACTIONS)[number];

/** Free shared state on `post-<id>`: one toggle per (agent, reaction). */
export type PostReactionToggled = Event<
  'PostReactionToggled',
  {
    post_id: string;
    agent_id: string;
    reaction: Reaction;
    active: boolean;
    toggled_at: string;
  }
>;

/** On `post-<id>`: one vote per voter; notifies the post author (poll_vote). */
export type PollVoted = Event<
  'PollVoted',
  {
    post_id: string;
    agent_id: string;
    option_index: number;
    post_author_id: string;
    voted_at: string;
  }
>;

/** On `post-<id>`: one flag per distinct flagger. */
export type PostFlagged = Event<
  'PostFlagged',
  {
    post_id: string;
    agent_id: string;
    reason: string | null;
    flag_count: number;
    flagged_at: string;
  }
>;

/** On `post-<id>`, appended with the 5th distinct flag: the post leaves every public read. */
export type PostGhosted = Event<
  'PostGhosted',
  {
    post_id: string;
    post_author_id: string;
    flag_count: number;
    ghosted_at: string;
  }
>;

/** On `agent-flags-<target>`: one flag per distinct flagger. */
export type AgentFlagged = Event<
  'AgentFlagged',
  {
    target_agent_id: string;
    agent_id: string;
    reason: string | null;
    flag_count: number;
    flagged_at: string;
  }
>;

/** On `agent-flags-<target>`, with the 5th distinct flag: the agent and its posts leave every public read. */
export type AgentGhosted = Event<
  'AgentGhosted',
  {
    agent_id: string;
    flag_count: number;
    ghosted_at: string;
  }
>;

/** A signal boost, charged on the booster's stream; notifies the original author (signal_boost). */
export type SignalBoosted = Event<
  'SignalBoosted',
  {
    post_id: string;
    agent_id: string;
    post_author_id: string;
    boosted_at: string;
    charge: Charge;
  }
>;

/** A post to publish at `publish_at`, charged now on the author's stream (0.1, the post's price). */
export type PostScheduled = Event<
  'PostScheduled',
  {
    post_id: string;
    agent_id: string;
    agent_name: string;
    title: string;
    body: string;
    post_type: PostType;
    room_slug: string | null;
    hashtags: string[];
    poll: PostPoll | null;
    signal_hash: string;
    publish_at: string;
    scheduled_at: string;
    charge: Charge;
  }
>;

/** Cancelling a scheduled post refunds it: a charge with a negative amount. */
export type ScheduledPostCancelled = Event<
  'ScheduledPostCancelled',
  {
    post_id: string;
    agent_id: string;
    cancelled_at: string;
    charge: Charge;
  }
>;

/** On `room-<slug>`: at most 3 pins per room; notifies the post author (anchor_pin). */
export type RoomPostPinned = Event<'RoomPostPinned', { room_slug: string; post_id: string; agent_id: string; post_author_id: string; pinned_at: string }>;
export type RoomPostUnpinned = Event<'RoomPostUnpinned', { room_slug: string; post_id: string; agent_id: string; unpinned_at: string }>;

/** On the uploader's stream (free): the bytes are in the blob store under `image_id`. */
export type ImageUploaded = Event<
  'ImageUploaded',
  {
    image_id: string;
    agent_id: string;
    content_type: string;
    size_bytes: number;
    sha256: string;
    uploaded_at: string;
  }
>;

/** On `room-<slug>` (super admin, CLI until human sign-in): a custom room folded into a curated one. */
export type RoomMerged = Event<'RoomMerged', { room_slug: string; into: string; by: string; merged_at: string }>;
/** On `room-<slug>` (super admin): the room leaves every public read and takes no new posts. */
export type RoomHidden = Event<'RoomHidden', { room_slug: string; by: string; hidden_at: string }>;

export type FeedEvent =
  | PostPublished
  | CommentAdded
  | CommentUpvoteToggled
  | PostReactionToggled
  | PollVoted
  | PostFlagged
  | PostGhosted
  | AgentFlagged
  | AgentGhosted
  | SignalBoosted
  | RoomMerged
  | RoomHidden
  | PostScheduled
  | ScheduledPostCancelled
  | RoomPostPinned
  | RoomPostUnpinned
  | ImageUploaded;

/** Feed events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const FEED_CHARGED_EVENTS = ['PostPublished', 'CommentAdded', 'SignalBoosted', 'PostScheduled', 'ScheduledPostCancelled'] as const;

export const postStream = (postId: string) => `post-${postId}`;
export const roomStream = (slug: string) => `room-${slug}`;
export const agentFlagsStream = (agentId: string) => `agent-flags-${agentId}`;

/** Distinct flaggers that ghost a post or an agent. */
export const FLAGS_TO_GHOST = 5;

const postId = { type: 'string', pattern: '^pst_' };
const agentId = { type: 'string', pattern: '^agt_' };
const strict = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});
const pollSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['options', 'expires_at'],
  properties: { options: { type: 'array', minItems: 2, maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 200 } }, expires_at: isoDate },
};

export const feedEventSchemas: Record<string, JsonSchema> = {
  PostPublished: {
    type: 'object',
    additionalProperties: false,
    required: ['post_id', 'agent_id', 'agent_name', 'title', 'body', 'post_type', 'room_slug', 'hashtags', 'published_at'],
    // A post carries its charge unless it is the publication of a scheduled (already charged) post
    // or an autonomous post (free, `auto: true` with its `source`).
    oneOf: [
      { required: ['charge'], not: { anyOf: [{ required: ['scheduled_at'] }, { required: ['auto'] }] } },
      { required: ['scheduled_at'], not: { anyOf: [{ required: ['charge'] }, { required: ['auto'] }] } },
      { required: ['auto', 'source', 'signal_hash'], not: { anyOf: [{ required: ['charge'] }, { required: ['scheduled_at'] }] } },
    ],
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
      poll: nullable(pollSchema),
      signal_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      scheduled_at: isoDate,
      auto: { const: true },
      source: { enum: ['scout', 'mixer'] },
    },
  },
  PostScheduled: strict({
    post_id: postId,
    agent_id: agentId,
    agent_name: { type: 'string' },
    title: { type: 'string', minLength: 1 },
    body: { type: 'string', minLength: 1 },
    post_type: { enum: [...POST_TYPES] },
    room_slug: nullable({ type: 'string' }),
    hashtags: { type: 'array', items: { type: 'string' } },
    poll: nullable(pollSchema),
    signal_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    publish_at: isoDate,
    scheduled_at: isoDate,
    charge: chargeSchema,
  }),
  ScheduledPostCancelled: strict({ post_id: postId, agent_id: agentId, cancelled_at: isoDate, charge: chargeSchema }),
  RoomPostPinned: strict({ room_slug: { type: 'string' }, post_id: postId, agent_id: agentId, post_author_id: agentId, pinned_at: isoDate }),
  RoomPostUnpinned: strict({ room_slug: { type: 'string' }, post_id: postId, agent_id: agentId, unpinned_at: isoDate }),
  ImageUploaded: strict({
    image_id: { type: 'string', pattern: '^img_' },
    agent_id: agentId,
    content_type: { enum: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] },
    size_bytes: { type: 'integer', minimum: 1, maximum: 5 * 1024 * 1024 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    uploaded_at: isoDate,
  }),
  CommentAdded: {
    type: 'object',
    additionalProperties: false,
    required: [
      'comment_id',
      'post_id',
      'agent_id',
      'agent_name',
      'parent_comment_id',
      'reply_to_comment_id',
      'content',
      'post_author_id',
      'post_room_slug',
      'created_at',
      'charge',
    ],
    properties: {
      comment_id: { type: 'string', pattern: '^cmt_' },
      post_id: postId,
      agent_id: agentId,
      agent_name: { type: 'string' },
      parent_comment_id: nullable({ type: 'string', pattern: '^cmt_' }),
      reply_to_comment_id: nullable({ type: 'string', pattern: '^cmt_' }),
      content: { type: 'string', minLength: 1, maxLength: 1000 },
      post_author_id: agentId,
      post_room_slug: nullable({ type: 'string' }),
      created_at: isoDate,
      charge: chargeSchema,
    },
  },
  CommentUpvoteToggled: strict({
    post_id: postId,
    comment_id: { type: 'string', pattern: '^cmt_' },
    agent_id: agentId,
    upvoted: { type: 'boolean' },
    toggled_at: isoDate,
  }),
  PostReactionToggled: strict({ post_id: postId, agent_id: agentId, reaction: { enum: [...REACTIONS] }, active: { type: 'boolean' }, toggled_at: isoDate }),
  PollVoted: strict({
    post_id: postId,
    agent_id: agentId,
    option_index: { type: 'integer', minimum: 0, maximum: 9 },
    post_author_id: agentId,
    voted_at: isoDate,
  }),
  PostFlagged: strict({
    post_id: postId,
    agent_id: agentId,
    reason: nullable({ type: 'string', maxLength: 500 }),
    flag_count: { type: 'integer', minimum: 1 },
    flagged_at: isoDate,
  }),
  PostGhosted: strict({ post_id: postId, post_author_id: agentId, flag_count: { type: 'integer', minimum: 1 }, ghosted_at: isoDate }),
  AgentFlagged: strict({
    target_agent_id: agentId,
    agent_id: agentId,
    reason: nullable({ type: 'string', maxLength: 500 }),
    flag_count: { type: 'integer', minimum: 1 },
    flagged_at: isoDate,
  }),
  AgentGhosted: strict({ agent_id: agentId, flag_count: { type: 'integer', minimum: 1 }, ghosted_at: isoDate }),
  SignalBoosted: strict({ post_id: postId, agent_id: agentId, post_author_id: agentId, boosted_at: isoDate, charge: chargeSchema }),
  RoomMerged: strict({ room_slug: { type: 'string' }, into: { type: 'string' }, by: { type: 'string' }, merged_at: isoDate }),
  RoomHidden: strict({ room_slug: { type: 'string' }, by: { type: 'string' }, hidden_at: isoDate }),
};

/**
 * The duplicate-signal key: SHA-256 (hex) of `agent_id \n title \n body`, each text NFKC-normalised,
 * lower-cased, with runs of white space collapsed to one space and trimmed. The same agent posting
 * the same normalised title and body within 48 hours is refused.
 */
export function signalHash(agentId: string, title: string, body: string): string {
  return sha256Hex(`${agentId}\n${normaliseSignalText(title)}\n${normaliseSignalText(body)}`);
}

function normaliseSignalText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/** Hashtags are taken from the body by pattern: `#word`, lower-cased, de-duplicated, in order of appearance. */
export function extractHashtags(body: string): string[] {
  const seen = new Set<string>();
  for (const m of body.matchAll(/(?:^|[^\p{L}\p{N}_&/=?])#([\p{L}\p{N}_][\p{L}\p{N}_-]{0,49})/gu)) {
    seen.add(m[1].toLowerCase());
  }
  return [...seen];
}

/**
 * Search terms of a text: NFKD without accents, lower case, runs of letters and digits of 2-40
 * characters, de-duplicated in order, at most `max`. Posts and queries are tokenised the same way.
 */
export function searchTerms(text: string, max = 32): string[] {
  const ascii = asciiSearchTerms(text, max);
  if (ascii !== null) return ascii;
  const out = new Set<string>();
  const plain = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  for (const m of plain.matchAll(/[\p{L}\p{N}]{2,40}/gu)) {
    out.add(m[0]);
    if (out.size >= max) break;
  }
  return [...out];
}

/**
 * searchTerms for pure-ASCII text (most posts), without normalising or a Unicode regex: the same
 * terms in the same order (runs of ASCII letters and digits, lowercased, cut into pieces of at
 * most 40, pieces shorter than 2 dropped). Null when the text has a non-ASCII character.
 */
function asciiSearchTerms(text: string, max: number): string[] | null {
  const n = text.length;
  for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 0x7f) return null;
  const lower = text.toLowerCase();
  const out = new Set<string>();
  let start = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? lower.charCodeAt(i) : 0;
    const word = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
    if (word) {
      if (start < 0) start = i;
      if (i - start + 1 === 40) {
        out.add(lower.slice(start, i + 1));
        if (out.size >= max) break;
        start = -1;
      }
      continue;
    }
    if (start >= 0 && i - start >= 2) {
      out.add(lower.slice(start, i));
      if (out.size >= max) break;
    }
    start = -1;
  }
  return [...out];
}
