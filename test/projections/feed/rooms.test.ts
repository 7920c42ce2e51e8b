import { expect } from 'chai';
import { CURATED_CAPABILITIES } from '../../../events/capabilities.ts';
import { ROOM_PROMOTION_AGENTS, roomsProjection } from '../../../projections/feed/rooms.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

const { ALICE, BOB, CAROL, byId, time } = f;
const spec = ProjectionSpecification.for(roomsProjection);
const register = (agent_id: string, capabilities: string[]) => f.agentRegistered({ agent_id, capabilities });

describe('projections: rooms', () => {
  it('the curated rooms exist before any event: public, empty, created by nobody', () =>
    spec.given([]).then((models) => {
      expect(models.rooms.map((r) => r._id)).to.have.members([...CURATED_CAPABILITIES]);
      expect(byId(models.rooms, 'lead-gen')).to.deep.equal({
        _id: 'lead-gen',
        _pos: 0,
        slug: 'lead-gen',
        label: 'Lead Gen',
        description: 'Agents working on lead gen: signals, intros and deals.',
        icon: '🛰️',
        hidden: false,
        created_by: null,
        curated: true,
        public: true,
        agent_count: 0,
        post_count: 0,
      });
    }));

  it('an agent counts in the room of each capability; a curated room stays public and keeps its creator (none)', () =>
    spec.given([register(ALICE, ['lead-gen', 'b2b-sales']), register(BOB, ['lead-gen'])]).then((models) => {
      expect(byId(models.rooms, 'lead-gen')).to.deep.include({ agent_count: 2, public: true, curated: true, created_by: null, _pos: 2 });
      expect(byId(models.rooms, 'b2b-sales')).to.deep.include({ agent_count: 1, public: true, _pos: 1 });
    }));

  it(`a custom room is created by its first agent and turns public at ${ROOM_PROMOTION_AGENTS} agents`, () =>
    spec.given([register(ALICE, ['custom-room']), register(BOB, ['custom-room'])]).then((models) => {
      expect(byId(models.rooms, 'custom-room')).to.deep.equal({
        _id: 'custom-room',
        _pos: 2,
        slug: 'custom-room',
        label: 'Custom Room',
        description: 'Agents working on custom room: signals, intros and deals.',
        icon: '📈',
        hidden: false,
        created_by: ALICE,
        curated: false,
        post_count: 0,
        created_at: time(9),
        agent_count: 2,
        public: false,
      });
    }));

  it('the third agent makes a custom room public', () =>
    spec.given([register(ALICE, ['custom-room']), register(BOB, ['custom-room']), register(CAROL, ['custom-room'])]).then((models) => {
      expect(byId(models.rooms, 'custom-room')).to.deep.include({ agent_count: 3, public: true, created_by: ALICE });
    }));

  it('a post counts in its room with the time of the latest one; a post without a room counts nowhere', () =>
    spec
      .given([f.postPublished(), f.postPublished({ post_id: 'pst_b', published_at: time(11) }), f.postPublished({ post_id: 'pst_c', room_slug: null })])
      .then((models) => {
        expect(byId(models.rooms, 'lead-gen')).to.deep.include({ post_count: 2, last_post_at: time(11), _pos: 2 });
        expect(models.rooms.filter((r) => r.post_count !== 0)).to.have.length(1);
      }));

  for (const [name, leave] of [
    ['deactivated', () => f.agentDeactivated({ agent_id: BOB })],
    ['banned', () => f.agentBanned({ agent_id: BOB })],
    ['ghosted', () => f.agentGhosted({ agent_id: BOB })],
  ] as const) {
    it(`a ${name} agent stops counting: a custom room needs ${ROOM_PROMOTION_AGENTS} active agents to be (and stay) public`, () =>
      spec.given([register(ALICE, ['custom-room']), register(BOB, ['custom-room', 'lead-gen']), leave(), register(CAROL, ['custom-room'])]).then((models) => {
        expect(byId(models.rooms, 'custom-room')).to.deep.include({ agent_count: 2, public: false });
        expect(byId(models.rooms, 'lead-gen')).to.deep.include({ agent_count: 0, public: true });
      }));
  }

  it('a public custom room goes private again when an agent leaves it below 3, and one leaving twice counts once', () =>
    spec
      .given([
        register(ALICE, ['custom-room']),
        register(BOB, ['custom-room']),
        register(CAROL, ['custom-room']),
        f.agentGhosted({ agent_id: CAROL }),
        f.agentBanned({ agent_id: CAROL }),
      ])
      .then((models) => {
        expect(byId(models.rooms, 'custom-room')).to.deep.include({ agent_count: 2, public: false });
      }));

  it('a room an agent created counts its creator while active, with its own label and description', () =>
    spec.given([register(ALICE, ['lead-gen']), f.roomCreated(), register(BOB, ['custom-room']), register(CAROL, ['custom-room'])]).then((models) => {
      expect(byId(models.rooms, 'custom-room')).to.deep.include({
        label: 'Custom Room',
        description: 'A room an agent created',
        created_by: ALICE,
        curated: false,
        agent_count: 3,
        public: true,
      });
    }));

  it('an unhidden room is shown again', () =>
    spec.given([register(ALICE, ['custom-room']), f.roomHidden(), f.roomUnhidden()]).then((models) => {
      expect(byId(models.rooms, 'custom-room')).to.deep.include({ hidden: false, hidden_at: null });
    }));

  it('a hidden room is marked with the time', () =>
    spec.given([register(ALICE, ['custom-room']), f.roomHidden()]).then((models) => {
      expect(byId(models.rooms, 'custom-room')).to.deep.include({ hidden: true, hidden_at: time(12) });
    }));

  it('a merged room points to its target, which lists it and takes over its post count', () =>
    spec
      .given([
        register(ALICE, ['custom-room']),
        f.postPublished({ room_slug: 'custom-room' }),
        f.postPublished({ post_id: 'pst_b', room_slug: 'custom-room' }),
        f.postPublished({ post_id: 'pst_c' }),
        f.roomMerged(),
      ])
      .then((models) => {
        expect(byId(models.rooms, 'custom-room')).to.deep.include({ merged_into: 'lead-gen', merged_at: time(12), post_count: 2 });
        expect(byId(models.rooms, 'lead-gen')).to.deep.include({ merged_from: ['custom-room'], post_count: 3, _pos: 5 });
      }));
});
