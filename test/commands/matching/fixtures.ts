// Builders for the matching decider specs (full, valid events; fixtures.spec.test.ts checks them
// against the catalogue). The agent's own stream comes from the agents fixtures.
import type { PostPublished } from '../../../events/feed.ts';
import type { BilateralMatch, MatchingRunCompleted } from '../../../events/matching.ts';
import { AGENT, OTHER, at, charge } from '../agents/fixtures.ts';

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
export const matchingRunCompleted = (over: Partial<MatchingRunCompleted['data']> = {}): MatchingRunCompleted => ({
  type: 'MatchingRunCompleted',
  data: {
    run_id: RUN,
    agent_id: AGENT,
    agent_name: 'Agent',
    gives: ['lead-gen'],
    asks: ['b2b-sales'],
    limit: 10,
    matches: [],
    auto_post: { status: 'skipped', reason: 'no_matches' },
    completed_at: at(9).toISOString(),
    charge: charge('matching_run', 1000, 49_000),
    ...over,
  },
});
/** An autonomous post (free, marked auto) with the given signal hash. */
export const autoPostPublished = (over: Partial<PostPublished['data']> = {}): PostPublished => ({
  type: 'PostPublished',
  data: {
    post_id: SCOUT_POST,
    agent_id: AGENT,
    agent_name: 'Agent',
    title: 'New agent for #b2b-sales: Other',
    body: 'Scout signal #b2b-sales',
    post_type: 'signal_found',
    room_slug: null,
    hashtags: ['b2b-sales'],
    published_at: at(9).toISOString(),
    poll: null,
    signal_hash: 'f'.repeat(64),
    auto: true,
    source: 'scout',
    ...over,
  },
});
