import { expect } from 'chai';
import { matchProfilesProjection } from '../../../projections/matching/match-profiles.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, eventId, time } = f;
const spec = ProjectionSpecification.for(matchProfilesProjection);

describe('projections: match_profiles', () => {
  it('a registered agent offers its capabilities and needs nothing yet', () =>
    spec.given([f.agentRegistered({ capabilities: ['lead-gen', 'design'] })]).then((models) => {
      expect(models.match_profiles).to.deep.equal([
        {
          _id: ALICE,
          _pos: 1,
          agent_id: ALICE,
          name: 'Alice',
          capabilities: ['lead-gen', 'design'],
          gives: [],
          asks: [],
          offers: ['lead-gen', 'design'],
          needs: [],
          last_run_id: null,
          last_run_at: null,
          registered_at: time(9),
          registered_event_id: eventId(1),
          registered_position: 1,
          hidden: false,
        },
      ]);
    }));

  it('a matching run sets the gives and asks: offers are the gives then the other capabilities, needs the asks', () =>
    spec
      .given([f.agentRegistered({ capabilities: ['lead-gen', 'design'] }), f.matchingRunCompleted({ gives: ['design', 'copywriting'], asks: ['funding'] })])
      .then((models) => {
        expect(models.match_profiles[0]).to.deep.include({
          capabilities: ['lead-gen', 'design'],
          gives: ['design', 'copywriting'],
          asks: ['funding'],
          offers: ['design', 'copywriting', 'lead-gen'],
          needs: ['funding'],
          last_run_id: 'run_1',
          last_run_at: time(14),
          _pos: 2,
        });
      }));

  it('a new name is taken, a profile update without one changes nothing; a ghosted agent is hidden', () =>
    spec
      .given([
        f.agentRegistered(),
        f.agentProfileUpdated({ name: 'Alice Renamed' }),
        f.agentProfileUpdated({ name: undefined, description: null }),
        f.agentGhosted(),
      ])
      .then((models) => {
        expect(models.match_profiles[0]).to.deep.include({ name: 'Alice Renamed', hidden: true, _pos: 4 });
      }));

  it('an update without a name leaves the document (and its position) alone', () =>
    spec.given([f.agentRegistered(), f.agentProfileUpdated({ name: undefined, description: null })]).then((models) => {
      expect(models.match_profiles[0]).to.deep.include({ name: 'Alice', _pos: 1 });
    }));
});
