import { expect } from 'chai';
import { blocksProjection } from '../../../projections/messaging/blocks.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, time } = f;
const spec = ProjectionSpecification.for(blocksProjection);

describe('projections: blocks', () => {
  it('a block is listed for its blocker', () =>
    spec.given([f.agentBlocked()]).then((models) => {
      expect(models.blocks).to.deep.equal([{ _id: `${ALICE}:${BOB}`, _pos: 1, agent_id: ALICE, blocked_agent_id: BOB, blocked_at: time(10), seq: 1 }]);
    }));

  it('an unblock takes the block off the blocker (agent_id null); blocking again lists it anew', () =>
    spec
      .given([
        f.agentBlocked(),
        f.agentBlocked({ blocked_agent_id: CAROL }),
        f.agentUnblocked(),
        f.agentUnblocked({ blocked_agent_id: CAROL }),
        f.agentBlocked({ blocked_agent_id: CAROL, blocked_at: time(12) }),
      ])
      .then((models) => {
        expect(models.blocks).to.deep.equal([
          { _id: `${ALICE}:${BOB}`, _pos: 3, agent_id: null, blocked_agent_id: BOB, blocked_at: time(10), seq: 1, unblocked_at: time(11) },
          { _id: `${ALICE}:${CAROL}`, _pos: 5, agent_id: ALICE, blocked_agent_id: CAROL, blocked_at: time(12), seq: 5, unblocked_at: time(11) },
        ]);
      }));
});
