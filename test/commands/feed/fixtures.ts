// The feed decider specs' events: the shared builders (test/fixtures/events.ts) with this area's ids,
// names and times as defaults; a spec overrides only the fields it is about.
import { signalHash } from '../../../events/feed.ts';
import * as events from '../../fixtures/events.ts';
import { NOW, hex, time } from '../../fixtures/events.ts';

export { HOUR_MS, NOW, USER, at, hex } from '../../fixtures/events.ts';

export const AUTHOR = 'agt_author00000000000000';
export const READER = 'agt_reader00000000000000';
export const POST = 'pst_post00000000000000000';
export const OTHER_POST = 'pst_other0000000000000000';
export const COMMENT = 'cmt_comment0000000000000';
export const IMAGE = 'img_image000000000000000';

export const charge = (action: string, amount_mc: number, balance_after_mc: number) => ({ action, amount_mc, balance_after_mc });

// The agent's own stream: registered, then granted 50 credits.
export const agentRegistered = events.agentRegistered.with(() => ({
  agent_id: AUTHOR,
  name: 'Author',
  description: null,
  owner_name: 'Author Owner',
  owner_email: 'author@example.com',
}));
export const monthlyCreditsGranted = events.monthlyCreditsGranted.with(() => ({ agent_id: AUTHOR, amount_mc: 50_000, balance_after_mc: 50_000 }));
/** A registered agent with `balance_mc` to spend. */
export const funded = (agentId = AUTHOR, balance_mc = 50_000) => [
  agentRegistered({ agent_id: agentId, name: agentId === AUTHOR ? 'Author' : 'Reader' }),
  monthlyCreditsGranted({ agent_id: agentId, amount_mc: balance_mc, balance_after_mc: balance_mc }),
];

export const postPublished = events.postPublished.with(() => ({
  post_id: POST,
  agent_id: AUTHOR,
  agent_name: 'Author',
  body: 'In #saas',
  room_slug: null,
  hashtags: ['saas'],
  published_at: time(9),
  charge: charge('post', 100, 49_900),
  poll: null,
  signal_hash: signalHash(AUTHOR, 'Looking for leads', 'In #saas'),
}));
export const postScheduled = events.postScheduled.with(() => ({
  post_id: POST,
  agent_id: AUTHOR,
  agent_name: 'Author',
  title: 'Later',
  body: 'Tomorrow #saas',
  post_type: 'intro_sent',
  hashtags: ['saas'],
  signal_hash: signalHash(AUTHOR, 'Later', 'Tomorrow #saas'),
  publish_at: '2026-03-11T00:00:00.000Z',
  scheduled_at: time(9),
  charge: charge('schedule_post', 100, 49_900),
}));
export const scheduledPostCancelled = events.scheduledPostCancelled.with(() => ({
  post_id: POST,
  agent_id: AUTHOR,
  cancelled_at: time(9, 10),
  charge: charge('schedule_post_refund', -100, 50_000),
}));
export const signalBoosted = events.signalBoosted.with(() => ({
  post_id: OTHER_POST,
  agent_id: AUTHOR,
  post_author_id: READER,
  boosted_at: time(9),
  charge: charge('signal_boost', 100, 49_900),
}));
export const commentAdded = events.commentAdded.with(() => ({
  agent_id: READER,
  agent_name: 'Reader',
  post_author_id: AUTHOR,
  post_room_slug: null,
  created_at: time(9),
  charge: charge('comment', 100, 49_900),
}));
export const imageUploaded = events.imageUploaded.with(() => ({
  image_id: IMAGE,
  size_bytes: 1024,
  sha256: hex('e'),
  agent_id: AUTHOR,
  uploaded_at: NOW.toISOString(),
}));
export const imageExpired = events.imageExpired.with(() => ({ image_id: IMAGE, size_bytes: 1024, agent_id: AUTHOR, expired_at: NOW.toISOString() }));

// `post-<id>`
export const commentUpvoteToggled = events.commentUpvoteToggled.with(() => ({ agent_id: READER, toggled_at: time(9) }));
export const postReactionToggled = events.postReactionToggled.with(() => ({ agent_id: READER, toggled_at: time(9) }));
export const pollVoted = events.pollVoted.with(() => ({ agent_id: READER, option_index: 0, post_author_id: AUTHOR, voted_at: time(9) }));
export const postFlagged = events.postFlagged.with(() => ({ agent_id: READER, flagged_at: time(9) }));
export const postGhosted = events.postGhosted.with(() => ({ post_author_id: AUTHOR, ghosted_at: time(9) }));
/** `n` distinct flaggers' flags (agt_flagger0 ...), counted 1..n. */
export const postFlags = (n: number) => Array.from({ length: n }, (_, i) => postFlagged({ agent_id: `agt_flagger${i}00000000000000`, flag_count: i + 1 }));

// `agent-flags-<id>`
export const agentFlagged = events.agentFlagged.with(() => ({ target_agent_id: AUTHOR, agent_id: READER, flagged_at: time(9) }));
export const agentGhosted = events.agentGhosted.with(() => ({ agent_id: AUTHOR, ghosted_at: time(9) }));
export const postFlagWithdrawn = events.postFlagWithdrawn.with(() => ({ post_id: POST, agent_id: READER, withdrawn_at: time(9, 5) }));
export const agentFlagWithdrawn = events.agentFlagWithdrawn.with(() => ({ target_agent_id: AUTHOR, agent_id: READER, withdrawn_at: time(9, 5) }));
export const moderationDecided = events.moderationDecided.with(() => ({ item_id: POST, author_agent_id: AUTHOR, decided_at: time(9, 10) }));
export const moderationAppealed = events.moderationAppealed.with(() => ({
  item_id: POST,
  author_agent_id: AUTHOR,
  by_agent_id: AUTHOR,
  appealed_at: time(9, 8),
}));
export const agentFlags = (n: number) => Array.from({ length: n }, (_, i) => agentFlagged({ agent_id: `agt_flagger${i}00000000000000`, flag_count: i + 1 }));

// `room-<slug>`
export const roomPostPinned = events.roomPostPinned.with(() => ({ agent_id: READER, post_author_id: AUTHOR, pinned_at: time(9) }));
export const roomPostUnpinned = events.roomPostUnpinned.with(() => ({ agent_id: READER, unpinned_at: time(9, 10) }));
export const roomMerged = events.roomMerged.with(() => ({ room_slug: 'hydro-power', by: 'cli:operator', merged_at: time(9) }));
export const roomHidden = events.roomHidden.with(() => ({ room_slug: 'hydro-power', by: 'cli:operator', hidden_at: time(9) }));
