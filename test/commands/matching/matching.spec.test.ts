import { expect } from 'chai';
import type { AgentState, AgentStreamEvent } from '../../../commands/agents/agent.ts';
import { agentAggregate } from '../../../commands/agents/agent.ts';
import { AUTO_POST_WINDOW_MS, mixerDraft } from '../../../commands/matching/auto-post.ts';
import type { RunMatching } from '../../../commands/matching/matching.ts';
import { decideRunMatching } from '../../../commands/matching/matching.ts';
import { autoSignalHash } from '../../../events/matching.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import {
  AGENT,
  MIXER_POST,
  NOW,
  RUN,
  THIRD,
  autoPostPrefsChanged,
  autoPostPublished,
  bilateralMatch,
  charge,
  funded,
  later,
  matchingRunCompleted,
} from './fixtures.ts';

describe('commands: matching RunMatching (agent-<id>)', () => {
  const spec = DeciderSpecification.for<RunMatching, AgentState, AgentStreamEvent>({ decide: decideRunMatching, ...agentAggregate });
  const run = (over: Partial<RunMatching['data']> = {}, now = NOW): RunMatching => ({
    type: 'RunMatching',
    data: { agent_id: AGENT, gives: ['lead-gen'], asks: ['b2b-sales'], limit: 10, matches: [], room_slug: null, ...over },
    metadata: { now, run_id: RUN, post_id: MIXER_POST },
  });
  const completed = (over: Parameters<typeof matchingRunCompleted>[0] = {}) => matchingRunCompleted({ completed_at: NOW.toISOString(), ...over });
  const matches = [bilateralMatch()];
  const mixerHash = autoSignalHash(AGENT, 'mixer', mixerDraft(matches, ['b2b-sales'], null).signal_key);

  it('records the run with its 1-credit charge; without matches there is no auto-post', () => {
    spec.given(funded()).when(run()).then([completed()]);
  });

  it('publishes the mixer activity summary in the same append when the run has matches (free, marked auto)', () => {
    const draft = mixerDraft(matches, ['b2b-sales'], 'b2b-sales');
    spec
      .given(funded())
      .when(run({ matches, room_slug: 'b2b-sales' }))
      .then([
        completed({ matches, auto_post: { status: 'published', post_id: MIXER_POST } }),
        autoPostPublished({
          post_id: MIXER_POST,
          title: draft.title,
          body: draft.body,
          post_type: 'activity_summary',
          room_slug: 'b2b-sales',
          hashtags: ['b2b-sales', 'lead-gen', 'bilateral-matching'],
          published_at: NOW.toISOString(),
          signal_hash: mixerHash,
          source: 'mixer',
        }),
      ]);
  });

  it("records why the mixer post was suppressed: the owner's toggle, the 4 h window, the 48 h signal", () => {
    const skipped = (reason: 'toggle_off' | 'rate_limited' | 'duplicate_signal') => [completed({ matches, auto_post: { status: 'skipped', reason } })];
    spec
      .given([...funded(), autoPostPrefsChanged({ auto_post_on_scout: undefined, auto_post_on_mixer: false })])
      .when(run({ matches }))
      .then(skipped('toggle_off'));
    spec
      .given([...funded(), autoPostPublished({ published_at: later(1 - AUTO_POST_WINDOW_MS).toISOString() })])
      .when(run({ matches }))
      .then(skipped('rate_limited'));
    spec
      .given([...funded(), autoPostPublished({ source: 'mixer', signal_hash: mixerHash, published_at: later(-5 * 3600_000).toISOString() })])
      .when(run({ matches }))
      .then(skipped('duplicate_signal'));
  });

  it('appends nothing for a run this agent already recorded in the last 24 h (a retried command)', () => {
    spec
      .given([...funded(), matchingRunCompleted({ completed_at: later(-3600_000).toISOString() })])
      .when(run({ matches: [bilateralMatch({ agent_id: THIRD })] }))
      .thenNothingHappened();
  });

  it('refuses an agent that does not exist with 404, and a balance under 1 credit with 402', () => {
    spec.given([]).when(run()).thenThrows('agent_not_found', 404);
    spec.given(funded(AGENT, 900)).when(run()).thenThrows('insufficient_credits', 402);
  });

  it('charges an unlimited tier nothing from its balance', () => {
    spec
      .given(funded(AGENT, 0).map((e) => (e.type === 'AgentRegistered' ? { ...e, data: { ...e.data, tier: 'enterprise' as const } } : e)))
      .when(run())
      .thenMatches((events) => expect(events).to.deep.equal([completed({ charge: charge('matching_run', 1000, 0) })]));
  });
});
