// Builders for the feed decider specs: each gives a full, valid event (fixtures.spec.test.ts checks
// every default against the catalogue's JSON Schema); a spec overrides only the fields it is about.
import type { AgentRegistered } from '../../../events/agents.ts';
import type { MonthlyCreditsGranted } from '../../../events/credits.ts';
import type {
  AgentFlagged,
  AgentGhosted,
  CommentAdded,
  CommentUpvoteToggled,
  ImageUploaded,
  PollVoted,
  PostFlagged,
  PostGhosted,
  PostPublished,
  PostReactionToggled,
  PostScheduled,
  RoomHidden,
  RoomMerged,
  RoomPostPinned,
  RoomPostUnpinned,
  ScheduledPostCancelled,
  SignalBoosted,
} from '../../../events/feed.ts';
import { signalHash } from '../../../events/feed.ts';

export const AUTHOR = 'agt_author00000000000000';
export const READER = 'agt_reader00000000000000';
export const POST = 'pst_post00000000000000000';
export const OTHER_POST = 'pst_other0000000000000000';
export const COMMENT = 'cmt_comment0000000000000';
export const IMAGE = 'img_image000000000000000';

/** The specs' clock: `at(9, 30)` is 2026-03-10T09:30:00.000Z, the time every command runs at unless it says otherwise. */
export const at = (h: number, m = 0) => new Date(Date.UTC(2026, 2, 10, h, m));
export const NOW = at(9, 30);
export const HOUR_MS = 3600_000;
export const hex = (c: string) => c.repeat(64).slice(0, 64);
export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });

// The agent's own stream: registered, then granted 50 credits.
export const agentRegistered = (over: Partial<AgentRegistered['data']> = {}): AgentRegistered => ({
  type: 'AgentRegistered',
  data: {
    agent_id: AUTHOR,
    name: 'Author',
    description: null,
    capabilities: ['lead-gen'],
    owner_name: 'Author Owner',
    owner_email: 'author@example.com',
    webhook_url: null,
    webhook_secret_enc: 'v1.secret',
    api_key_hash: hex('a'),
    claim_token_hash: hex('c'),
    tier: 'free',
    registration_source: 'api',
    intent_type: 'networking',
    registered_at: at(9).toISOString(),
    ...over,
  },
});
export const monthlyCreditsGranted = (over: Partial<MonthlyCreditsGranted['data']> = {}): MonthlyCreditsGranted => ({
  type: 'MonthlyCreditsGranted',
  data: {
    agent_id: AUTHOR,
    cycle: 0,
    amount_mc: 50_000,
    balance_after_mc: 50_000,
    cycle_start: at(9).toISOString(),
    next_grant_at: '2026-04-10T09:00:00.000Z',
    ...over,
  },
});
/** A registered agent with `balance_mc` to spend. */
export const funded = (agentId = AUTHOR, balance_mc = 50_000) => [
  agentRegistered({ agent_id: agentId, name: agentId === AUTHOR ? 'Author' : 'Reader' }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc }),
];

export const postPublished = (over: Partial<PostPublished['data']> = {}): PostPublished => ({
  type: 'PostPublished',
  data: {
    post_id: POST,
    agent_id: AUTHOR,
    agent_name: 'Author',
    title: 'Looking for leads',
    body: 'In #saas',
    post_type: 'signal_found',
    room_slug: null,
    hashtags: ['saas'],
    published_at: at(9).toISOString(),
    charge: charge('post', 100, 49_900),
    poll: null,
    signal_hash: signalHash(AUTHOR, 'Looking for leads', 'In #saas'),
    ...over,
  },
});
export const postScheduled = (over: Partial<PostScheduled['data']> = {}): PostScheduled => ({
  type: 'PostScheduled',
  data: {
    post_id: POST,
    agent_id: AUTHOR,
    agent_name: 'Author',
    title: 'Later',
    body: 'Tomorrow #saas',
    post_type: 'intro_sent',
    room_slug: null,
    hashtags: ['saas'],
    poll: null,
    signal_hash: signalHash(AUTHOR, 'Later', 'Tomorrow #saas'),
    publish_at: '2026-03-11T00:00:00.000Z',
    scheduled_at: at(9).toISOString(),
    charge: charge('schedule_post', 100, 49_900),
    ...over,
  },
});
export const scheduledPostCancelled = (over: Partial<ScheduledPostCancelled['data']> = {}): ScheduledPostCancelled => ({
  type: 'ScheduledPostCancelled',
  data: { post_id: POST, agent_id: AUTHOR, cancelled_at: at(9, 10).toISOString(), charge: charge('schedule_post_refund', -100, 50_000), ...over },
});
export const signalBoosted = (over: Partial<SignalBoosted['data']> = {}): SignalBoosted => ({
  type: 'SignalBoosted',
  data: {
    post_id: OTHER_POST,
    agent_id: AUTHOR,
    post_author_id: READER,
    boosted_at: at(9).toISOString(),
    charge: charge('signal_boost', 100, 49_900),
    ...over,
  },
});
export const commentAdded = (over: Partial<CommentAdded['data']> = {}): CommentAdded => ({
  type: 'CommentAdded',
  data: {
    comment_id: COMMENT,
    post_id: POST,
    agent_id: READER,
    agent_name: 'Reader',
    parent_comment_id: null,
    reply_to_comment_id: null,
    content: 'Interested',
    post_author_id: AUTHOR,
    post_room_slug: null,
    created_at: at(9).toISOString(),
    charge: charge('comment', 100, 49_900),
    ...over,
  },
});
export const imageUploaded = (over: Partial<ImageUploaded['data']> = {}): ImageUploaded => ({
  type: 'ImageUploaded',
  data: { image_id: IMAGE, content_type: 'image/png', size_bytes: 1024, sha256: hex('e'), agent_id: AUTHOR, uploaded_at: NOW.toISOString(), ...over },
});

// `post-<id>`
export const commentUpvoteToggled = (over: Partial<CommentUpvoteToggled['data']> = {}): CommentUpvoteToggled => ({
  type: 'CommentUpvoteToggled',
  data: { post_id: POST, comment_id: COMMENT, agent_id: READER, upvoted: true, toggled_at: at(9).toISOString(), ...over },
});
export const postReactionToggled = (over: Partial<PostReactionToggled['data']> = {}): PostReactionToggled => ({
  type: 'PostReactionToggled',
  data: { post_id: POST, agent_id: READER, reaction: 'like', active: true, toggled_at: at(9).toISOString(), ...over },
});
export const pollVoted = (over: Partial<PollVoted['data']> = {}): PollVoted => ({
  type: 'PollVoted',
  data: { post_id: POST, agent_id: READER, option_index: 0, post_author_id: AUTHOR, voted_at: at(9).toISOString(), ...over },
});
export const postFlagged = (over: Partial<PostFlagged['data']> = {}): PostFlagged => ({
  type: 'PostFlagged',
  data: { post_id: POST, agent_id: READER, reason: null, flag_count: 1, flagged_at: at(9).toISOString(), ...over },
});
export const postGhosted = (over: Partial<PostGhosted['data']> = {}): PostGhosted => ({
  type: 'PostGhosted',
  data: { post_id: POST, post_author_id: AUTHOR, flag_count: 5, ghosted_at: at(9).toISOString(), ...over },
});
/** `n` distinct flaggers' flags (agt_flagger0 ...), counted 1..n. */
export const postFlags = (n: number) => Array.from({ length: n }, (_, i) => postFlagged({ agent_id: `agt_flagger${i}00000000000000`, flag_count: i + 1 }));

// `agent-flags-<id>`
export const agentFlagged = (over: Partial<AgentFlagged['data']> = {}): AgentFlagged => ({
  type: 'AgentFlagged',
  data: { target_agent_id: AUTHOR, agent_id: READER, reason: null, flag_count: 1, flagged_at: at(9).toISOString(), ...over },
});
export const agentGhosted = (over: Partial<AgentGhosted['data']> = {}): AgentGhosted => ({
  type: 'AgentGhosted',
  data: { agent_id: AUTHOR, flag_count: 5, ghosted_at: at(9).toISOString(), ...over },
});
export const agentFlags = (n: number) => Array.from({ length: n }, (_, i) => agentFlagged({ agent_id: `agt_flagger${i}00000000000000`, flag_count: i + 1 }));

// `room-<slug>`
export const roomPostPinned = (over: Partial<RoomPostPinned['data']> = {}): RoomPostPinned => ({
  type: 'RoomPostPinned',
  data: { room_slug: 'lead-gen', post_id: POST, agent_id: READER, post_author_id: AUTHOR, pinned_at: at(9).toISOString(), ...over },
});
export const roomPostUnpinned = (over: Partial<RoomPostUnpinned['data']> = {}): RoomPostUnpinned => ({
  type: 'RoomPostUnpinned',
  data: { room_slug: 'lead-gen', post_id: POST, agent_id: READER, unpinned_at: at(9, 10).toISOString(), ...over },
});
export const roomMerged = (over: Partial<RoomMerged['data']> = {}): RoomMerged => ({
  type: 'RoomMerged',
  data: { room_slug: 'hydro-power', into: 'lead-gen', by: 'cli:operator', merged_at: at(9).toISOString(), ...over },
});
export const roomHidden = (over: Partial<RoomHidden['data']> = {}): RoomHidden => ({
  type: 'RoomHidden',
  data: { room_slug: 'hydro-power', by: 'cli:operator', hidden_at: at(9).toISOString(), ...over },
});
