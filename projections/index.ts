import { adminsProjection, agentsProjection, apiKeysProjection, creditUsageProjection } from './agents.ts';
import { commentsProjection, inboxProjection } from './comments.ts';
import { postsProjection, roomsProjection } from './feed.ts';
import { blocksProjection, memberDmsProjection } from './messaging.ts';
import { meshThreadsProjection, presenceProjection } from './mesh-threads.ts';
import { imagesProjection } from './images.ts';
import { matchProfilesProjection } from './matching.ts';
import { notificationsProjection } from './notifications.ts';
import { roomPinsProjection } from './pins.ts';
import { scheduledPostsProjection } from './scheduling.ts';
import { hashtagsProjection } from './trending.ts';
import type { Projection } from './types.ts';
import { claimTokensProjection, digestsProjection, mailsProjection, matchesProjection, usersProjection } from './users.ts';
import { webhooksProjection } from './webhooks.ts';

/** Every read model of the service, in the order the runner applies them to each event. */
export const allProjections: Projection[] = [
  agentsProjection,
  apiKeysProjection,
  creditUsageProjection,
  adminsProjection,
  roomsProjection,
  postsProjection,
  commentsProjection,
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
];
