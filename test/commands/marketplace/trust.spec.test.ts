import { expect } from 'chai';
import type { ProviderRecord, RecomputeTrust, TrustRunEvent, TrustRunState } from '../../../commands/marketplace/trust.ts';
import { decideRecomputeTrust, nightOf, trustRunAggregate, trustScores } from '../../../commands/marketplace/trust.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const { BOB, CAROL } = f;
const record = (over: Partial<ProviderRecord> = {}): ProviderRecord => ({
  agent_id: BOB,
  completed: 1,
  ended: 1,
  rating_sum: 4,
  rating_count: 1,
  responses: 2,
  ...over,
});

describe('commands: trust scores (trust-run-<run_id>)', () => {
  it('trust = (average rating / 5) x 100 x completion rate, one decimal', () => {
    // 3 completed (ratings 5, 4, 4), 1 refunded, 1 cancelled after acceptance: completion 3/5, average 13/3.
    const s = trustScores(record({ completed: 3, ended: 5, rating_sum: 13, rating_count: 3, responses: 6 }));
    expect(s.trust_score).to.equal(Math.round((13 / 3 / 5) * 100 * (3 / 5) * 10) / 10);
    expect(s.trust_score).to.equal(52);
    expect(s.completion_rate).to.equal(0.6);
    expect(s.average_rating).to.equal(4.33);
    expect(s.deal_close_rate).to.equal(0.5);
  });
  it('is 0 with contracts_rated 0 while no completed contract has a rating', () => {
    const s = trustScores(record({ rating_sum: 0, rating_count: 0 }));
    expect(s).to.include({ trust_score: 0, contracts_rated: 0, completion_rate: 1 });
  });
  it('is 0 with no ended contract, and deal close is 0 without responses', () =>
    expect(trustScores(record({ completed: 0, ended: 0, rating_sum: 0, rating_count: 0, responses: 0 }))).to.include({
      trust_score: 0,
      completion_rate: 0,
      deal_close_rate: 0,
    }));
  it('names the night of a run by the latest 02:00 UTC', () => {
    expect(nightOf(new Date('2026-03-10T01:59:59.999Z'))).to.equal('2026-03-09');
    expect(nightOf(new Date('2026-03-10T02:00:00.000Z'))).to.equal('2026-03-10');
    expect(nightOf(new Date('2026-03-10T23:00:00.000Z'))).to.equal('2026-03-10');
  });

  const spec = DeciderSpecification.for<RecomputeTrust, TrustRunState, TrustRunEvent>({ decide: decideRecomputeTrust, ...trustRunAggregate });
  const at = f.at(2);
  const run = (agents: RecomputeTrust['data']['agents']): RecomputeTrust => ({
    type: 'RecomputeTrust',
    data: { run_id: 'nightly-2026-03-10', night: '2026-03-10', agents },
    metadata: { now: at },
  });
  it('records the agents whose scores changed, then the completion of the run', () =>
    spec
      .given([])
      .when(
        run([
          { record: record(), current: null },
          { record: record({ agent_id: CAROL }), current: trustScores(record({ agent_id: CAROL })) },
        ]),
      )
      .then([f.trustScoreRecomputed({ computed_at: at.toISOString() }), f.trustRecomputeCompleted({ completed_at: at.toISOString() })]));
  it('decides nothing for a run that already completed (once per night)', () =>
    spec
      .given([f.trustScoreRecomputed(), f.trustRecomputeCompleted()])
      .when(run([{ record: record(), current: null }]))
      .thenNothingHappened());
});
