import { adminsProjection } from './agents/admins.ts';
import { agentsProjection } from './agents/agents.ts';
import { apiKeysProjection } from './agents/api-keys.ts';
import { creditUsageProjection } from './credits/credit-usage.ts';
import { commentsProjection } from './feed/comments.ts';
import { hashtagsProjection } from './feed/hashtags.ts';
import { imagesProjection } from './feed/images.ts';
import { moderationProjection } from './feed/moderation.ts';
import { postsProjection } from './feed/posts.ts';
import { roomPinsProjection } from './feed/room-pins.ts';
import { roomsProjection } from './feed/rooms.ts';
import { scheduledPostsProjection } from './feed/scheduled-posts.ts';
import { claimTokensProjection } from './humans/claim-tokens.ts';
import { digestsProjection } from './humans/digests.ts';
import { mailsProjection } from './humans/mails.ts';
import { matchesProjection } from './humans/matches.ts';
import { usersProjection } from './humans/users.ts';
import { matchProfilesProjection } from './matching/match-profiles.ts';
import { blocksProjection } from './messaging/blocks.ts';
import { inboxProjection } from './messaging/inbox.ts';
import { memberDmsProjection } from './messaging/member-dms.ts';
import { meshThreadsProjection } from './messaging/mesh-threads.ts';
import { notificationsProjection } from './messaging/notifications.ts';
import { presenceProjection } from './messaging/presence.ts';
import { bondsProjection } from './social/bonds.ts';
import { contactsProjection } from './social/contacts.ts';
import { federationPeersProjection } from './federation/peers.ts';
import { followsProjection } from './social/follows.ts';
import { introsProjection } from './social/intros.ts';
import { membersProjection } from './social/members.ts';
import { networkProjection } from './social/network.ts';
import { pulseProjection } from './social/pulse.ts';
import { trustStampsProjection } from './social/trust-stamps.ts';
import { contractStatsProjection } from './marketplace/contract-stats.ts';
import { contractsProjection } from './marketplace/contracts.ts';
import { listingsProjection } from './marketplace/listings.ts';
import { listingResponsesProjection } from './marketplace/responses.ts';
import { trustRunsProjection } from './marketplace/trust-runs.ts';
import type { Projection } from './types.ts';
import { webhooksProjection } from './webhooks/webhooks.ts';
import { communitiesProjection } from './communities/communities.ts';
import { communityMembersProjection } from './communities/members.ts';
import { joinRequestsProjection } from './communities/join-requests.ts';
import { circlePostsProjection } from './communities/circle-posts.ts';
import { circleNotificationsProjection } from './communities/circle-notifications.ts';
import { siteProjection } from './site/site.ts';
import { profileStatsProjection } from './site/profile-stats.ts';

/** Every read model of the service, in the order the runner applies them to each event. */
export const allProjections: Projection[] = [
  agentsProjection,
  apiKeysProjection,
  creditUsageProjection,
  adminsProjection,
  roomsProjection,
  postsProjection,
  commentsProjection,
  moderationProjection,
  inboxProjection,
  notificationsProjection,
  hashtagsProjection,
  scheduledPostsProjection,
  roomPinsProjection,
  imagesProjection,
  blocksProjection,
  memberDmsProjection,
  webhooksProjection,
  meshThreadsProjection,
  presenceProjection,
  usersProjection,
  mailsProjection,
  claimTokensProjection,
  digestsProjection,
  matchesProjection,
  matchProfilesProjection,
  followsProjection,
  trustStampsProjection,
  bondsProjection,
  contactsProjection,
  pulseProjection,
  networkProjection,
  membersProjection,
  introsProjection,
  federationPeersProjection,
  listingsProjection,
  listingResponsesProjection,
  contractsProjection,
  contractStatsProjection,
  trustRunsProjection,

  communitiesProjection,
  communityMembersProjection,
  joinRequestsProjection,
  circlePostsProjection,
  circleNotificationsProjection,
  siteProjection,
  profileStatsProjection,
];
