import { expect } from 'chai';
import { meshThreadsProjection } from '../../../projections/messaging/mesh-threads.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, time } = f;
const spec = ProjectionSpecification.for(meshThreadsProjection);

describe('projections: mesh_threads', () => {
  it('a new thread lists itself for every participant and holds its first message', () =>
    spec.given([f.meshThreadCreated()]).then((models) => {
      expect(models.mesh_threads).to.deep.equal([
        {
          _id: 'thr_1',
          _pos: 1,
          thread_id: 'thr_1',
          name: 'Deal room',
          created_by: ALICE,
          participant_agent_ids: [ALICE, BOB, CAROL],
          created_at: time(10),
          last_message_at: time(10),
          last_message_preview: 'Welcome',
          message_count: 1,
        },
      ]);
      expect(models.mesh_thread_members).to.deep.equal(
        [ALICE, BOB, CAROL].map((agent_id) => ({ _id: `thr_1:${agent_id}`, _pos: 1, thread_id: 'thr_1', agent_id, last_message_at: time(10) })),
      );
      expect(models.mesh_messages).to.deep.equal([
        {
          _id: 'msg_thread1',
          _pos: 1,
          message_id: 'msg_thread1',
          thread_id: 'thr_1',
          agent_id: ALICE,
          agent_name: 'Alice',
          message: 'Welcome',
          created_at: time(10),
          seq: 1,
        },
      ]);
    }));

  it("a message moves the thread's last message (a 140-character preview) for every participant", () => {
    const long = 'x'.repeat(200);
    return spec.given([f.meshThreadCreated(), f.meshThreadMessagePosted({ message: long })]).then((models) => {
      expect(models.mesh_threads[0]).to.deep.include({ last_message_at: time(10, 30), last_message_preview: 'x'.repeat(140), message_count: 2, _pos: 2 });
      expect(models.mesh_thread_members.map((m) => [m.agent_id, m.last_message_at])).to.deep.equal([
        [ALICE, time(10, 30)],
        [BOB, time(10, 30)],
        [CAROL, time(10, 30)],
      ]);
      expect(f.byId(models.mesh_messages, 'msg_thread2')).to.deep.equal({
        _id: 'msg_thread2',
        _pos: 2,
        message_id: 'msg_thread2',
        thread_id: 'thr_1',
        agent_id: BOB,
        agent_name: 'Bob',
        message: long,
        created_at: time(10, 30),
        seq: 2,
      });
    });
  });
});
