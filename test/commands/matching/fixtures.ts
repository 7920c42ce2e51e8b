// The matching decider specs' events: the shared builders (test/fixtures/events.ts) with this area's
// ids, names and times as defaults. The agent's own stream comes from the agents fixtures.
import type { BilateralMatch } from '../../../events/matching.ts';
import * as events from '../../fixtures/events.ts';
import { time } from '../../fixtures/events.ts';
import { AGENT, OTHER, charge, postPublished } from '../agents/fixtures.ts';

export { AGENT, HOUR_MS, NOW, OTHER, agentRegistered, at, autoPostPrefsChanged, charge, funded, later } from '../agents/fixtures.ts';

export const RUN = 'run_run00000000000000000';
export const MIXER_POST = 'pst_mixer000000000000000';
export const SCOUT_POST = 'pst_scout000000000000000';
export const THIRD = 'agt_third000000000000000';

export const bilateralMatch = (over: Partial<BilateralMatch> = {}): BilateralMatch => ({
  agent_id: OTHER,
  name: 'Other',
  they_give: ['b2b-sales'],
  they_ask: ['lead-gen'],
  score: 2,
  ...over,
});
export const matchingRunCompleted = events.matchingRunCompleted.with(() => ({
  run_id: RUN,
  agent_id: AGENT,
  agent_name: 'Agent',
  gives: ['lead-gen'],
  asks: ['b2b-sales'],
  matches: [],
  auto_post: { status: 'skipped', reason: 'no_matches' },
  completed_at: time(9),
  charge: charge('matching_run', 1000, 49_000),
}));
/** An autonomous post (free, marked auto) with the given signal hash. */
export const autoPostPublished = postPublished.with(() => ({
  post_id: SCOUT_POST,
  title: 'New agent for #b2b-sales: Other',
  body: 'Scout signal #b2b-sales',
  hashtags: ['b2b-sales'],
  published_at: time(9),
  charge: undefined,
  signal_hash: 'f'.repeat(64),
  auto: true,
  source: 'scout',
}));
