import { expect } from 'chai';
import { presenceProjection } from '../../../projections/messaging/presence.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: presence', () => {
  it("keeps an agent's last heartbeat", () =>
    ProjectionSpecification.for(presenceProjection)
      .given([f.agentHeartbeatReceived(), f.agentHeartbeatReceived({ status: 'degraded', capacity: null, received_at: f.time(11) })])
      .then((models) => {
        expect(models.agent_presence).to.deep.equal([
          { _id: f.ALICE, _pos: 2, agent_id: f.ALICE, status: 'degraded', capacity: null, heartbeat_at: f.time(11) },
        ]);
      }));
});
