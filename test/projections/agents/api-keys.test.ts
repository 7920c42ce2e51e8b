import { expect } from 'chai';
import { apiKeysProjection } from '../../../projections/agents/api-keys.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const spec = ProjectionSpecification.for(apiKeysProjection);

describe('projections: api_keys', () => {
  it('keys the registration API key hash to its agent', () =>
    spec.given([f.agentRegistered()]).then((models) => {
      expect(models.api_keys).to.deep.equal([{ _id: f.hex('a'), _pos: 1, agent_id: f.ALICE, created_at: f.time(9) }]);
    }));

  it('a replaced key is revoked and the new one keyed to the agent', () =>
    spec.given([f.agentRegistered(), f.apiKeyReplaced()]).then((models) => {
      expect(models.api_keys).to.deep.equal([
        { _id: f.hex('a'), _pos: 2, agent_id: f.ALICE, created_at: f.time(9), revoked: true, revoked_at: f.time(11) },
        { _id: f.hex('b'), _pos: 2, agent_id: f.ALICE, created_at: f.time(11) },
      ]);
    }));
});
