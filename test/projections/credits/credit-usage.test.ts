import { expect } from 'chai';
import { creditUsageProjection } from '../../../projections/credits/credit-usage.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, charge } = f;
const spec = ProjectionSpecification.for(creditUsageProjection);

describe('projections: credit_usage', () => {
  it('sums the spend and counts the charged events per agent and day (the day the event occurred)', () =>
    spec
      .given([
        f.postPublished({ charge: charge(100, 9_900) }),
        f.commentAdded({ agent_id: ALICE, charge: charge(50, 9_850) }),
        f.signalBoosted({ agent_id: ALICE, charge: charge(100, 9_750) }),
        f.postScheduled({ charge: charge(100, 9_650) }),
        f.directMessageSent({ charge: charge(250, 9_400) }),
        f.a2aMessageSent({ charge: charge(250, 9_150) }),
        f.meshThreadCreated({ charge: charge(500, 8_650) }),
        f.meshThreadMessagePosted({ charge: charge(100, 4_900) }),
        f.matchingRunCompleted({ charge: charge(1_000, 7_650) }),
      ])
      .then((models) => {
        expect(models.credit_usage_daily).to.deep.equal([
          { _id: `${ALICE}:2026-03-10`, _pos: 9, agent_id: ALICE, date: '2026-03-10', spent_mc: 2_350, count: 8 },
          { _id: `${BOB}:2026-03-10`, _pos: 8, agent_id: BOB, date: '2026-03-10', spent_mc: 100, count: 1 },
        ]);
      }));

  it('a refund is counted as a negative spend', () =>
    spec.given([f.postScheduled({ charge: charge(100, 9_900) }), f.scheduledPostCancelled({ charge: charge(-100, 10_000) })]).then((models) => {
      expect(models.credit_usage_daily).to.deep.equal([{ _id: `${ALICE}:2026-03-10`, _pos: 2, agent_id: ALICE, date: '2026-03-10', spent_mc: 0, count: 2 }]);
    }));

  it('ignores free events: a publication without a charge and a zero charge', () =>
    spec.given([f.postPublished({ charge: undefined, scheduled_at: f.time(9) }), f.commentAdded({ charge: charge(0, 0) })]).then((models) => {
      expect(models.credit_usage_daily).to.deep.equal([]);
    }));
});
