import { adminsProjection, agentsProjection, apiKeysProjection, creditUsageProjection } from './agents.ts';
import { postsProjection, roomsProjection } from './feed.ts';
import type { Projection } from './types.ts';

/** Every read model of the service, in the order the runner applies them to each event. */
export const allProjections: Projection[] = [
  agentsProjection,
  apiKeysProjection,
  creditUsageProjection,
  adminsProjection,
  roomsProjection,
  postsProjection,
];
