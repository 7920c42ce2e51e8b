import { expect } from 'chai';
import { claimTokensProjection } from '../../../projections/humans/claim-tokens.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: claim_tokens', () => {
  it("keys each agent's claim token hash to the agent", () =>
    ProjectionSpecification.for(claimTokensProjection)
      .given([f.agentRegistered(), f.agentRegistered({ agent_id: f.BOB, claim_token_hash: f.hex('e') })])
      .then((models) => {
        expect(models.claim_tokens).to.deep.equal([
          { _id: f.hex('c'), _pos: 1, agent_id: f.ALICE },
          { _id: f.hex('e'), _pos: 2, agent_id: f.BOB },
        ]);
      }));
});
