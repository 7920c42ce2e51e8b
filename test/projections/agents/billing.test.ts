import { expect } from 'chai';
import { agentsProjection } from '../../../projections/agents/agents.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, byId, charge, time } = f;

describe('projections: agents, paid top-ups and upgrades', () => {
  it('adds a top-up to the balance without touching the cycle usage', () =>
    ProjectionSpecification.for(agentsProjection)
      .given([
        f.agentRegistered(),
        f.monthlyCreditsGranted(),
        f.commentAdded({ agent_id: ALICE, charge: charge(50, 9_950) }),
        f.creditsToppedUp({ amount_mc: 50_000, balance_after_mc: 59_950 }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({ balance_mc: 59_950, used_mc: 50, tier: 'free', _pos: 4 });
      }));

  it('moves an upgraded agent to its tier, balance and new billing day (cycle 0, usage reset)', () =>
    ProjectionSpecification.for(agentsProjection)
      .given([
        f.agentRegistered(),
        f.monthlyCreditsGranted(),
        f.commentAdded({ agent_id: ALICE, charge: charge(50, 9_950) }),
        f.agentTierUpgraded({ amount_mc: 2_000_000, balance_after_mc: 2_009_950 }),
      ])
      .then((models) => {
        expect(byId(models.agents, ALICE)).to.deep.include({
          tier: 'builder',
          balance_mc: 2_009_950,
          used_mc: 0,
          cycle: 0,
          cycle_start: time(9, 5),
          next_grant_at: '2026-04-10T09:05:00.000Z',
        });
      }));
});
