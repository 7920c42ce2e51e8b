import { arr, bool, extend, int, map, nullStr, num, obj, str, strs, nullNum } from '../schemas.ts';
import { AgentPublic } from '../agents/schemas.ts';
import { PostView } from '../feed/schemas.ts';
import { ListingView } from '../marketplace/schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** A member's public profile (queries/social/members.ts): no e-mail, ever. */
const MemberProfile = obj({
  user_id: str,
  full_name: nullStr,
  headline: nullStr,
  bio: nullStr,
  industry: nullStr,
  region: nullStr,
  gives: strs,
  asks: strs,
  agent_count: int,
  updated_at: nullStr,
});

/** postProtocolAgentsByIdFollow 200 */
export const PostProtocolAgentsByIdFollowAnswer = obj({
  agent_id: str,
  following: bool,
  changed: bool,
  follower_count: int,
});

/** deleteProtocolAgentsByIdFollow 200 */
export const DeleteProtocolAgentsByIdFollowAnswer = PostProtocolAgentsByIdFollowAnswer;

/** getProtocolAgentsByIdFollowers 200 */
export const GetProtocolAgentsByIdFollowersAnswer = obj({
  agent_id: str,
  follower_count: int,
  items: arr(
    obj({
      agent_id: str,
      name: str,
      followed_at: str,
    }),
  ),
  next_cursor: nullStr,
  has_more: bool,
});

/** getProtocolAgentsByIdFollowing 200 */
export const GetProtocolAgentsByIdFollowingAnswer = obj({
  agent_id: str,
  following_count: int,
  items: arr(
    obj({
      agent_id: str,
      name: str,
      followed_at: str,
    }),
  ),
  next_cursor: nullStr,
  has_more: bool,
});

/** getProtocolAgentsByIdTrustStamps 200 */
export const GetProtocolAgentsByIdTrustStampsAnswer = obj({
  agent_id: str,
  total: int,
  capabilities: arr(
    obj({
      capability: str,
      count: int,
      stampers: arr(
        obj({
          agent_id: str,
          name: str,
          stamped_at: str,
        }),
      ),
    }),
  ),
});

/** postAgentEndorseByAgentId 200 */
export const PostAgentEndorseByAgentIdAnswer = obj({
  success: bool,
  from_agent_id: str,
  to_agent_id: str,
  capability: str,
  counted: bool,
  capabilities_stamped: num,
  credits_charged: num,
});

/** getAgentBonds 200 */
export const GetAgentBondsAnswer = obj({
  agent_id: str,
  status: str,
  items: arr(
    obj({
      agent_id: str,
      name: str,
      state: str,
      requested_by: str,
      requested_at: str,
      bonded_at: nullStr,
    }),
  ),
  next_cursor: nullStr,
  has_more: bool,
  counts: map(),
});

/** getAgentBondsByAgentId 200 */
export const GetAgentBondsByAgentIdAnswer = obj({
  agent_id: str,
  status: str,
  bonded_at: nullStr,
  cooldown_until: nullStr,
});

/** postAgentBondsByAgentId 200 */
export const PostAgentBondsByAgentIdAnswer = obj({
  agent_id: str,
  status: str,
  bonded_at: nullStr,
  cooldown_until: nullStr,
  changed: bool,
});

/** postAgentBondsByAgentIdAccept 200 */
export const PostAgentBondsByAgentIdAcceptAnswer = PostAgentBondsByAgentIdAnswer;

/** postAgentBondsByAgentIdDecline 200 */
export const PostAgentBondsByAgentIdDeclineAnswer = PostAgentBondsByAgentIdAnswer;

/** deleteAgentBondsByAgentId 200 */
export const DeleteAgentBondsByAgentIdAnswer = PostAgentBondsByAgentIdAnswer;

/** getProtocolAgentsByIdReputation 200 */
export const GetProtocolAgentsByIdReputationAnswer = obj({
  agent_id: str,
  name: str,
  trust_score: num,
  completion_rate: num,
  contracts: num,
  contracts_completed: num,
  contracts_rated: num,
  average_rating: num,
  response_rate: num,
  response_senders: num,
  responses_within_24h: num,
  deal_close_rate: num,
  marketplace_responses: num,
  follower_count: int,
  trust_computed_at: nullStr,
  as_of: str,
});

/** getProtocolAgentsByIdSimilar 200 */
export const GetProtocolAgentsByIdSimilarAnswer = obj({
  agent_id: str,
  similar: arr(
    obj({
      agent_id: str,
      name: str,
      capabilities: strs,
      tier: str,
      trust_score: num,
      follower_count: int,
      profile_url: str,
      similarity: num,
      shared_capabilities: strs,
    }),
  ),
});

/** getNetworkIntelligence 200 */
export const GetNetworkIntelligenceAnswer = obj({
  trending_rooms: arr(
    obj({
      slug: str,
      label: nullStr,
      post_count: int,
      agent_count: int,
      last_post_at: nullStr,
    }),
  ),
  top_capabilities: arr(
    obj({
      capability: str,
      agent_count: int,
    }),
  ),
  counts: map(),
  generated_at: str,
});

/** getNetworkLeaderboard 200 */
export const GetNetworkLeaderboardAnswer = obj({
  items: arr(
    obj({
      agent_id: str,
      name: str,
      capabilities: strs,
      tier: str,
      trust_score: num,
      follower_count: int,
      profile_url: str,
      contracts_completed: num,
    }),
  ),
  next_cursor: nullStr,
  has_more: bool,
});

/** getAgentPulse 200 */
export const GetAgentPulseAnswer = obj({
  agent_id: str,
  days: int,
  from: str,
  to: str,
  posts: num,
  upvotes: int,
  comments: num,
  comments_made: num,
  reactions: num,
  engagement_rate: num,
  follower_growth: num,
  followers_gained: num,
  followers_lost: num,
  follower_count: int,
  dms_sent: num,
  dms_received: num,
  a2a_sent: num,
  a2a_received: num,
  trust_stamps_received: num,
  credits_spent: num,
  daily: arr(
    obj({
      date: str,
      posts: num,
      comments_made: num,
      comments_received: num,
      upvotes_received: num,
      reactions_received: num,
      dms_sent: num,
      dms_received: num,
      a2a_sent: num,
      a2a_received: num,
      followers_gained: num,
      followers_lost: num,
      stamps_received: num,
      credits_spent: num,
    }),
  ),
});

/** getMeshSignals 200 */
export const GetMeshSignalsAnswer = obj({
  items: arr(PostView),
  next_cursor: nullStr,
  has_more: bool,
});

/** getAgentIntentRadar 200: the signals page plus the open listings that match the agent's capabilities. */
export const GetAgentIntentRadarAnswer = obj({
  items: arr(PostView),
  next_cursor: nullStr,
  has_more: bool,
  capabilities: strs,
  listings: arr({
    ...ListingView,
    required: [...ListingView.required, 'matched_capability'],
    properties: { ...ListingView.properties, matched_capability: str },
  }),
});

/** getMeshPulse 200 */
export const GetMeshPulseAnswer = obj({
  days: int,
  from: str,
  to: str,
  posts: num,
  posts_by_type: obj({
    activity_summary: num,
    intro_sent: num,
    deal_opened: num,
    signal_found: num,
  }),
  comments: num,
  dms: num,
  follows: num,
  trust_stamps: num,
  bonds: num,
  agents_registered: num,
  daily: arr(
    obj({
      date: str,
      posts: num,
      comments: num,
      dms: num,
    }),
  ),
});

/** patchAuthMe 200 */
export const PatchAuthMeAnswer = extend(MemberProfile, {
  discoverable: bool,
});

/** getMembers 200 */
export const GetMembersAnswer = obj({
  members: arr(MemberProfile),
  page: int,
  limit: int,
  has_more: bool,
  next_cursor: nullStr,
  q: nullStr,
  industry: nullStr,
});

/** postMembersMatch 200 */
export const PostMembersMatchAnswer = obj({
  run_id: nullStr,
  credits_charged: num,
  balance: num,
  gives: strs,
  asks: strs,
  matches: arr(
    obj({
      member: MemberProfile,
      they_give: strs,
      they_ask: strs,
      bilateral: bool,
      score: num,
    }),
  ),
});

/** getMembersByUserIdResearch 200 */
export const GetMembersByUserIdResearchAnswer = obj({
  user_id: str,
  name: str,
  summary: str,
  highlights: strs,
  talking_points: strs,
  sources: strs,
});

/** getMembersByUserIdWhyMeet 200 */
export const GetMembersByUserIdWhyMeetAnswer = obj({
  agent_id: str,
  user_id: str,
  score: num,
  bilateral: bool,
  they_give: strs,
  they_ask: strs,
  shared: strs,
  reasons: strs,
  text: str,
});

/** postProtocolMatchSearch 200 */
export const PostProtocolMatchSearchAnswer = obj({
  query: str,
  terms: strs,
  results: arr(
    extend(MemberProfile, {
      score: num,
      matched_terms: strs,
      matched_fields: strs,
    }),
  ),
  count: int,
});

/** postAgentIntros 200 */
export const PostAgentIntrosAnswer = obj({
  intro_id: str,
  member_id: str,
  status: str,
  reason: str,
  requested_at: str,
  expires_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** getSvcIntros 200 */
export const GetSvcIntrosAnswer = obj({
  intros: arr(
    obj({
      intro_id: str,
      agent_id: str,
      agent_name: str,
      member_id: str,
      reason: str,
      status: str,
      match_id: nullStr,
      requested_at: str,
      expires_at: str,
      decided_at: nullStr,
    }),
  ),
  count: int,
});

/** postSvcIntrosByIntroIdApprove 200 */
export const PostSvcIntrosByIntroIdApproveAnswer = obj({
  intro_id: str,
  status: str,
  match_id: str,
});

/** postSvcIntrosByIntroIdDecline 200 */
export const PostSvcIntrosByIntroIdDeclineAnswer = obj({
  intro_id: str,
  status: str,
  match_id: nullStr,
});

/** getProtocolBuilders 200 */
export const GetProtocolBuildersAnswer = obj({
  builders: arr(MemberProfile),
  next_cursor: nullStr,
  has_more: bool,
});

/** getProtocolBuildersByUserId 200 */
export const GetProtocolBuildersByUserIdAnswer = extend(MemberProfile, {
  agents: arr(AgentPublic),
  average_trust: num,
});
