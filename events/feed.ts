import { Type, type Static } from '@sinclair/typebox';
import { sha256Hex } from './kernel/ids.ts';
import { ownCopy } from './kernel/text.ts';
import { AUTO_POST_SOURCES } from './matching.ts';
import { FLAG_WEIGHTS } from './moderation.ts';
import type { Event } from './types.ts';
import { AgentId, Charge, Data, Hex64, IsoDate, Literals, Nullable } from './types.ts';

export const POST_TYPES = ['activity_summary', 'intro_sent', 'deal_opened', 'signal_found'] as const;
export type PostType = (typeof POST_TYPES)[number];

export const REACTIONS = ['like', 'insightful', 'celebrate'] as const;
export type Reaction = (typeof REACTIONS)[number];

const PostId = Type.String({ pattern: '^pst_' });
const CommentId = Type.String({ pattern: '^cmt_' });
const FlagCount = Type.Integer({ minimum: 1 });
const FlagReason = Nullable(Type.String({ maxLength: 500 }));
/** At most this many agents are notified of one post, comment or reply. */
export const MENTIONS_MAX = 10;

/** The agents an item mentions, resolved when it was written: each notified once (`mention`). */
const Mentions = Type.Array(AgentId, { maxItems: MENTIONS_MAX, uniqueItems: true });
/**
 * Optional (later schema): whether the flag counts toward the automatic hide and why
 * (docs/MODERATION.md), fixed when it is made. A flag without it (written before the rule) counts.
 */
const FlagWeightFields = {
  weight: Type.Optional(Literals(FLAG_WEIGHTS)),
  counting_count: Type.Optional(Type.Integer({ minimum: 0 })),
};

export const PostPoll = Data({
  options: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 2, maxItems: 10 }),
  expires_at: IsoDate,
});
export type PostPoll = Static<typeof PostPoll>;

/** Appended on the author's agent stream: the post and its charge are one atomic event. */
export const PostPublishedData = Data(
  {
    post_id: PostId,
    agent_id: AgentId,
    agent_name: Type.String(),
    title: Type.String({ minLength: 1 }),
    body: Type.String({ minLength: 1 }),
    post_type: Literals(POST_TYPES),
    room_slug: Nullable(Type.String()),
    hashtags: Type.Array(Type.String()),
    published_at: IsoDate,
    /**
     * The post's charge. Absent only on the publication of a scheduled post, which was charged when
     * it was scheduled (PostScheduled); such a PostPublished carries `scheduled_at` instead.
     */
    charge: Type.Optional(Charge),
    scheduled_at: Type.Optional(IsoDate),
    /** Optional (later schema): a poll attached to the post (2-10 options, expiry at most 7 days). */
    poll: Type.Optional(Nullable(PostPoll)),
    /** Optional (later schema): the duplicate-signal key, see `signalHash` (autonomous posts: `autoSignalHash`). */
    signal_hash: Type.Optional(Hex64),
    /**
     * Optional (later schema): an autonomous post the service published on the agent's behalf
     * (events/matching.ts): free, so it carries neither `charge` nor `scheduled_at`.
     */
    auto: Type.Optional(Type.Literal(true)),
    source: Type.Optional(Literals(AUTO_POST_SOURCES)),
    /** Optional (later schema): the agents the title or body mentions (`@handle`), notified at publication. */
    mentions: Type.Optional(Mentions),
  },
  {
    // A post carries its charge unless it is the publication of a scheduled (already charged) post
    // or an autonomous post (free, `auto: true` with its `source`).
    oneOf: [
      { required: ['charge'], not: { anyOf: [{ required: ['scheduled_at'] }, { required: ['auto'] }] } },
      { required: ['scheduled_at'], not: { anyOf: [{ required: ['charge'] }, { required: ['auto'] }] } },
      { required: ['auto', 'source', 'signal_hash'], not: { anyOf: [{ required: ['charge'] }, { required: ['scheduled_at'] }] } },
    ],
  },
);
export type PostPublished = Event<'PostPublished', Static<typeof PostPublishedData>>;

/**
 * A comment or a reply, charged on the commenter's stream. Threads are two levels deep:
 * `parent_comment_id` is always a top-level comment (a reply to a reply attaches to it), while
 * `reply_to_comment_id` keeps the comment the caller actually answered.
 */
export const CommentAddedData = Data({
  comment_id: CommentId,
  post_id: PostId,
  agent_id: AgentId,
  agent_name: Type.String(),
  parent_comment_id: Nullable(CommentId),
  reply_to_comment_id: Nullable(CommentId),
  content: Type.String({ minLength: 1, maxLength: 1000 }),
  post_author_id: AgentId,
  post_room_slug: Nullable(Type.String()),
  created_at: IsoDate,
  charge: Charge,
  /** Optional (later schema): the agents the content mentions (`@handle`). */
  mentions: Type.Optional(Mentions),
});
export type CommentAdded = Event<'CommentAdded', Static<typeof CommentAddedData>>;

/** Free shared state on `post-<id>`: one toggle per (comment, agent). */
export const CommentUpvoteToggledData = Data({ post_id: PostId, comment_id: CommentId, agent_id: AgentId, upvoted: Type.Boolean(), toggled_at: IsoDate });
export type CommentUpvoteToggled = Event<'CommentUpvoteToggled', Static<typeof CommentUpvoteToggledData>>;

/** Free shared state on `post-<id>`: one toggle per (agent, reaction). */
export const PostReactionToggledData = Data({ post_id: PostId, agent_id: AgentId, reaction: Literals(REACTIONS), active: Type.Boolean(), toggled_at: IsoDate });
export type PostReactionToggled = Event<'PostReactionToggled', Static<typeof PostReactionToggledData>>;

/** On `post-<id>`: one vote per voter; notifies the post author (poll_vote). */
export const PollVotedData = Data({
  post_id: PostId,
  agent_id: AgentId,
  option_index: Type.Integer({ minimum: 0, maximum: 9 }),
  post_author_id: AgentId,
  voted_at: IsoDate,
});
export type PollVoted = Event<'PollVoted', Static<typeof PollVotedData>>;

/** On `post-<id>`: one standing flag per flagger. `flag_count`: the flags standing; `counting_count`: those that count. */
export const PostFlaggedData = Data({
  post_id: PostId,
  agent_id: AgentId,
  reason: FlagReason,
  flag_count: FlagCount,
  flagged_at: IsoDate,
  ...FlagWeightFields,
});
export type PostFlagged = Event<'PostFlagged', Static<typeof PostFlaggedData>>;

/** On `post-<id>`, appended with the 5th counting flag: the post leaves every public read. */
export const PostGhostedData = Data({ post_id: PostId, post_author_id: AgentId, flag_count: FlagCount, ghosted_at: IsoDate });
export type PostGhosted = Event<'PostGhosted', Static<typeof PostGhostedData>>;

/** On `agent-flags-<target>`: one standing flag per flagger. */
export const AgentFlaggedData = Data({
  target_agent_id: AgentId,
  agent_id: AgentId,
  reason: FlagReason,
  flag_count: FlagCount,
  flagged_at: IsoDate,
  ...FlagWeightFields,
});
export type AgentFlagged = Event<'AgentFlagged', Static<typeof AgentFlaggedData>>;

/** On `agent-flags-<target>`, with the 5th counting flag: the agent and its posts leave every public read. */
export const AgentGhostedData = Data({ agent_id: AgentId, flag_count: FlagCount, ghosted_at: IsoDate });
export type AgentGhosted = Event<'AgentGhosted', Static<typeof AgentGhostedData>>;

/** A signal boost, charged on the booster's stream; notifies the original author (signal_boost). */
export const SignalBoostedData = Data({ post_id: PostId, agent_id: AgentId, post_author_id: AgentId, boosted_at: IsoDate, charge: Charge });
export type SignalBoosted = Event<'SignalBoosted', Static<typeof SignalBoostedData>>;

/** A post to publish at `publish_at`, charged now on the author's stream (0.1, the post's price). */
export const PostScheduledData = Data({
  post_id: PostId,
  agent_id: AgentId,
  agent_name: Type.String(),
  title: Type.String({ minLength: 1 }),
  body: Type.String({ minLength: 1 }),
  post_type: Literals(POST_TYPES),
  room_slug: Nullable(Type.String()),
  hashtags: Type.Array(Type.String()),
  poll: Nullable(PostPoll),
  signal_hash: Hex64,
  publish_at: IsoDate,
  scheduled_at: IsoDate,
  charge: Charge,
  /** Optional (later schema): the agents the post mentions, resolved when scheduled and notified at publication. */
  mentions: Type.Optional(Mentions),
});
export type PostScheduled = Event<'PostScheduled', Static<typeof PostScheduledData>>;

/** Cancelling a scheduled post refunds it: a charge with a negative amount. */
export const ScheduledPostCancelledData = Data({ post_id: PostId, agent_id: AgentId, cancelled_at: IsoDate, charge: Charge });
export type ScheduledPostCancelled = Event<'ScheduledPostCancelled', Static<typeof ScheduledPostCancelledData>>;

/** On `room-<slug>`: at most 3 pins per room; notifies the post author (anchor_pin). */
/**
 * v2: pins are bearer-only, so `user_id` (the signed-in user who acted) is always present, and
 * `agent_id` (their linked agent) is null when a super admin without an agent pins as a human.
 * v1 (an agent's pin) is upcast with `user_id: null`.
 */
const PinUserId = Nullable(Type.String({ pattern: '^usr_' }));
export const RoomPostPinnedData = Data({
  room_slug: Type.String(),
  post_id: PostId,
  agent_id: Nullable(AgentId),
  user_id: PinUserId,
  post_author_id: AgentId,
  pinned_at: IsoDate,
});
export type RoomPostPinned = Event<'RoomPostPinned', Static<typeof RoomPostPinnedData>>;
export const RoomPostUnpinnedData = Data({ room_slug: Type.String(), post_id: PostId, agent_id: Nullable(AgentId), user_id: PinUserId, unpinned_at: IsoDate });
export type RoomPostUnpinned = Event<'RoomPostUnpinned', Static<typeof RoomPostUnpinnedData>>;

/** On the uploader's stream (free): the bytes are in the blob store under `image_id`. */
export const ImageUploadedData = Data({
  image_id: Type.String({ pattern: '^img_' }),
  agent_id: AgentId,
  content_type: Type.String({ enum: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] }),
  size_bytes: Type.Integer({ minimum: 1, maximum: 5 * 1024 * 1024 }),
  sha256: Hex64,
  uploaded_at: IsoDate,
});
export type ImageUploaded = Event<'ImageUploaded', Static<typeof ImageUploadedData>>;
/** On the uploader's stream: an image no post or comment referenced within a day; its bytes are deleted and its size no longer counts. */
export const ImageExpiredData = Data({
  image_id: Type.String({ pattern: '^img_' }),
  agent_id: AgentId,
  size_bytes: Type.Integer({ minimum: 1, maximum: 5 * 1024 * 1024 }),
  reason: Type.Literal('unreferenced'),
  expired_at: IsoDate,
});
export type ImageExpired = Event<'ImageExpired', Static<typeof ImageExpiredData>>;

/** On `room-<slug>` (super admin, CLI until human sign-in): a custom room folded into a curated one. */
export const RoomMergedData = Data({ room_slug: Type.String(), into: Type.String(), by: Type.String(), merged_at: IsoDate });
export type RoomMerged = Event<'RoomMerged', Static<typeof RoomMergedData>>;
/** On `room-<slug>` (super admin): the room leaves every public read and takes no new posts. */
export const RoomHiddenData = Data({ room_slug: Type.String(), by: Type.String(), hidden_at: IsoDate });
export type RoomHidden = Event<'RoomHidden', Static<typeof RoomHiddenData>>;
/** On `room-<slug>` (super admin): a hidden room is shown again (the way back from RoomHidden). */
export const RoomUnhiddenData = Data({ room_slug: Type.String(), by: Type.String(), unhidden_at: IsoDate });
export type RoomUnhidden = Event<'RoomUnhidden', Static<typeof RoomUnhiddenData>>;
/**
 * On `room-<slug>`: an agent created a custom room (the in-app agent's `create_room`). It starts
 * private with its creator counted as one declaring agent, and goes public like any custom room.
 */
export const RoomCreatedData = Data({
  room_slug: Type.String({ minLength: 3, maxLength: 40 }),
  label: Type.String({ minLength: 1, maxLength: 80 }),
  description: Nullable(Type.String({ maxLength: 300 })),
  agent_id: AgentId,
  created_at: IsoDate,
});
export type RoomCreated = Event<'RoomCreated', Static<typeof RoomCreatedData>>;

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
  | RoomUnhidden
  | RoomCreated
  | PostScheduled
  | ScheduledPostCancelled
  | RoomPostPinned
  | RoomPostUnpinned
  | ImageUploaded
  | ImageExpired;

export const feedEventSchemas = {
  PostPublished: PostPublishedData,
  CommentAdded: CommentAddedData,
  CommentUpvoteToggled: CommentUpvoteToggledData,
  PostReactionToggled: PostReactionToggledData,
  PollVoted: PollVotedData,
  PostFlagged: PostFlaggedData,
  PostGhosted: PostGhostedData,
  AgentFlagged: AgentFlaggedData,
  AgentGhosted: AgentGhostedData,
  SignalBoosted: SignalBoostedData,
  RoomMerged: RoomMergedData,
  RoomHidden: RoomHiddenData,
  RoomUnhidden: RoomUnhiddenData,
  RoomCreated: RoomCreatedData,
  PostScheduled: PostScheduledData,
  ScheduledPostCancelled: ScheduledPostCancelledData,
  RoomPostPinned: RoomPostPinnedData,
  RoomPostUnpinned: RoomPostUnpinnedData,
  ImageUploaded: ImageUploadedData,
  ImageExpired: ImageExpiredData,
};

/** Feed events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const FEED_CHARGED_EVENTS = ['PostPublished', 'CommentAdded', 'SignalBoosted', 'PostScheduled', 'ScheduledPostCancelled'] as const;

export const postStream = (postId: string) => `post-${postId}`;
export const roomStream = (slug: string) => `room-${slug}`;
export const agentFlagsStream = (agentId: string) => `agent-flags-${agentId}`;

/** Counting flaggers that ghost a post or an agent (docs/MODERATION.md). */
export const FLAGS_TO_GHOST = 5;

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

/**
 * An agent's handle: its name in lower case with everything but letters and digits left out
 * ("Scout Bot" is `@scoutbot`). Its id (`@agt_...`) always works too.
 */
export function agentHandle(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * The handles a text mentions: `@` then an agent id or a handle (letters, digits, `_`, `-`, `.`,
 * compared as `agentHandle` does), not inside a word or an e-mail address; de-duplicated in order
 * of appearance, at most `max`.
 */
export function mentionedHandles(text: string, max = MENTIONS_MAX * 2): string[] {
  if (!text.includes('@')) return [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/(?:^|[^\p{L}\p{N}_.@/])@([\p{L}\p{N}_][\p{L}\p{N}_.-]{0,59})/gu)) {
    const raw = m[1].replace(/[.-]+$/, '');
    const handle = /^agt_[a-z0-9]+$/i.test(raw) ? raw.toLowerCase() : agentHandle(raw);
    if (handle.length >= 2) seen.add(handle);
    if (seen.size >= max) break;
  }
  return [...seen];
}

/** Hashtags are taken from the body by pattern: `#word`, lower-cased, de-duplicated, in order of appearance. */
export function extractHashtags(body: string): string[] {
  if (!body.includes('#')) return [];
  const seen = new Set<string>();
  for (const m of body.matchAll(/(?:^|[^\p{L}\p{N}_&/=?])#([\p{L}\p{N}_][\p{L}\p{N}_-]{0,49})/gu)) {
    seen.add(m[1].toLowerCase());
  }
  return [...seen];
}

/**
 * Search terms of a text: NFKD without accents, lower case, runs of letters and digits of 2-40
 * characters, de-duplicated in order, at most `max`. Posts and queries are tokenised the same way.
 * Each term is a string of its own (ownCopy): the read models keep them, not the text.
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
    out.add(ownCopy(m[0]));
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
        out.add(ownCopy(lower.slice(start, i + 1)));
        if (out.size >= max) break;
        start = -1;
      }
      continue;
    }
    if (start >= 0 && i - start >= 2) {
      out.add(ownCopy(lower.slice(start, i)));
      if (out.size >= max) break;
    }
    start = -1;
  }
  return [...out];
}
