import type {
  CreateRoom,
  HideRoom,
  MergeRoom,
  PinPost,
  RoomModeration,
  RoomState,
  RoomStreamEvent,
  UnhideRoom,
  UnpinPost,
} from '../../../commands/feed/rooms.ts';
import {
  decideCreateRoom,
  decideHideRoom,
  decideMergeRoom,
  decidePinPost,
  decideUnhideRoom,
  decideUnpinPost,
  roomAggregate,
} from '../../../commands/feed/rooms.ts';
import { ALICE, BOB, roomCreated, roomUnhidden } from '../../fixtures/events.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import { AUTHOR, NOW, OTHER_POST, POST, READER, USER, roomHidden, roomMerged, roomPostPinned, roomPostUnpinned } from './fixtures.ts';

const ADMIN: RoomModeration = { room_created_by: null, super_admin: true };
const CREATOR: RoomModeration = { room_created_by: READER, super_admin: false };
const NOBODY: RoomModeration = { room_created_by: 'agt_creator0000000000000', super_admin: false };

describe('commands: feed rooms (room-<slug>)', () => {
  describe('MergeRoom', () => {
    const spec = DeciderSpecification.for<MergeRoom, RoomState, RoomStreamEvent>({ decide: decideMergeRoom, ...roomAggregate });
    const CUSTOM = { curated: false };
    const CURATED = { curated: true };
    const merge = (into = 'lead-gen', source: MergeRoom['data']['source'] = CUSTOM, target: MergeRoom['data']['target'] = CURATED): MergeRoom => ({
      type: 'MergeRoom',
      data: { room_slug: 'hydro-power', into, by: 'cli:operator', source, target },
      metadata: { now: NOW },
    });

    it('merges a room into another', () => {
      spec
        .given([])
        .when(merge())
        .then([roomMerged({ merged_at: NOW.toISOString() })]);
    });

    it('refuses a second merge with 409 room_already_merged', () => {
      spec.given([roomMerged()]).when(merge('b2b-sales')).thenThrows('room_already_merged', 409);
    });

    it('refuses an unknown room (404), a curated source (422 room_not_mergeable), a target that is missing, custom or itself (422)', () => {
      spec.given([]).when(merge('lead-gen', null)).thenThrows('room_not_found', 404);
      spec.given([]).when(merge('lead-gen', CURATED)).thenThrows('room_not_mergeable', 422);
      spec
        .given([])
        .when(merge('nowhere', CUSTOM, null))
        .thenThrows('merge_target_not_curated', 422);
      spec
        .given([])
        .when(merge('other-custom', CUSTOM, CUSTOM))
        .thenThrows('merge_target_not_curated', 422);
      spec
        .given([])
        .when(merge('hydro-power', CUSTOM, CURATED))
        .thenThrows('merge_target_not_curated', 422);
    });
  });

  describe('HideRoom', () => {
    const spec = DeciderSpecification.for<HideRoom, RoomState, RoomStreamEvent>({ decide: decideHideRoom, ...roomAggregate });
    const hide: HideRoom = { type: 'HideRoom', data: { room_slug: 'hydro-power', by: 'cli:operator', room: { curated: false } }, metadata: { now: NOW } };

    it('hides a room', () => {
      spec
        .given([])
        .when(hide)
        .then([roomHidden({ hidden_at: NOW.toISOString() })]);
    });

    it('appends nothing for a room already hidden', () => {
      spec.given([roomHidden()]).when(hide).thenNothingHappened();
    });

    it('refuses an unknown room with 404 room_not_found', () => {
      spec
        .given([])
        .when({ ...hide, data: { ...hide.data, room: null } })
        .thenThrows('room_not_found', 404);
    });

    it('refuses a curated room with 422 room_not_hideable (curated rooms always exist)', () => {
      spec
        .given([])
        .when({ ...hide, data: { ...hide.data, room_slug: 'lead-gen', room: { curated: true } } })
        .thenThrows('room_not_hideable', 422);
    });
  });

  describe('UnhideRoom', () => {
    const spec = DeciderSpecification.for<UnhideRoom, RoomState, RoomStreamEvent>({ decide: decideUnhideRoom, ...roomAggregate });
    const unhide: UnhideRoom = { type: 'UnhideRoom', data: { room_slug: 'custom-room', by: 'admin@example.com', exists: true }, metadata: { now: NOW } };

    it('shows a hidden room again', () => {
      spec
        .given([roomHidden()])
        .when(unhide)
        .then([roomUnhidden({ unhidden_at: NOW.toISOString() })]);
    });

    it('appends nothing for a room that is not hidden, and refuses an unknown room with 404', () => {
      spec.given([]).when(unhide).thenNothingHappened();
      spec
        .given([])
        .when({ ...unhide, data: { ...unhide.data, exists: false } })
        .thenThrows('room_not_found', 404);
    });
  });

  describe('CreateRoom', () => {
    const spec = DeciderSpecification.for<CreateRoom, RoomState, RoomStreamEvent>({ decide: decideCreateRoom, ...roomAggregate });
    const create: CreateRoom = {
      type: 'CreateRoom',
      data: { room_slug: 'custom-room', label: 'Custom Room', description: 'A room an agent created', agent_id: ALICE, exists: false },
      metadata: { now: NOW },
    };

    it('creates a room that does not exist', () => {
      spec
        .given([])
        .when(create)
        .then([roomCreated({ created_at: NOW.toISOString() })]);
    });

    it('refuses a room that exists (in the read model, or created by another agent) with 409 room_exists; a retry by its creator appends nothing', () => {
      spec
        .given([])
        .when({ ...create, data: { ...create.data, exists: true } })
        .thenThrows('room_exists', 409);
      spec
        .given([roomCreated({ agent_id: BOB })])
        .when(create)
        .thenThrows('room_exists', 409);
      spec.given([roomCreated()]).when(create).thenNothingHappened();
    });
  });

  describe('PinPost', () => {
    const spec = DeciderSpecification.for<PinPost, RoomState, RoomStreamEvent>({ decide: decidePinPost, ...roomAggregate });
    const pin = (over: Partial<PinPost['data']> = {}): PinPost => ({
      type: 'PinPost',
      data: {
        room_slug: 'lead-gen',
        user_id: USER,
        agent_id: READER,
        moderation: ADMIN,
        post: { post_id: POST, agent_id: AUTHOR, room_slug: 'lead-gen' },
        ...over,
      },
      metadata: { now: NOW },
    });
    const pinned = (n: number) => Array.from({ length: n }, (_, i) => roomPostPinned({ post_id: `pst_pinned${i}00000000000000` }));

    it('lets a super admin pin a post of the room', () => {
      spec
        .given(pinned(2))
        .when(pin())
        .then([roomPostPinned({ pinned_at: NOW.toISOString() })]);
    });

    it('lets a super admin without a linked agent pin, as a human (agent_id null)', () => {
      spec
        .given([])
        .when(pin({ agent_id: null }))
        .then([roomPostPinned({ agent_id: null, pinned_at: NOW.toISOString() })]);
    });

    it('refuses a user without a linked agent who is not a super admin with 403 not_room_moderator', () => {
      spec
        .given([])
        .when(pin({ agent_id: null, moderation: { room_created_by: null, super_admin: false } }))
        .thenThrows('not_room_moderator', 403);
    });

    it("lets the room's creator pin", () => {
      spec
        .given([])
        .when(pin({ moderation: CREATOR }))
        .then([roomPostPinned({ pinned_at: NOW.toISOString() })]);
    });

    it('refuses anyone else with 403 not_room_moderator, before looking at the post', () => {
      spec
        .given([])
        .when(pin({ moderation: NOBODY }))
        .thenThrows('not_room_moderator', 403);
      spec
        .given([])
        .when(pin({ moderation: NOBODY, post: null }))
        .thenThrows('not_room_moderator', 403);
    });

    it('refuses a post that is not visible, or in another room, with 404 post_not_found', () => {
      spec
        .given([])
        .when(pin({ post: null }))
        .thenThrows('post_not_found', 404);
      spec
        .given([])
        .when(pin({ post: { post_id: POST, agent_id: AUTHOR, room_slug: 'b2b-sales' } }))
        .thenThrows('post_not_found', 404);
    });

    it('appends nothing for a post already pinned, even with three pins', () => {
      spec
        .given([...pinned(2), roomPostPinned()])
        .when(pin())
        .thenNothingHappened();
    });

    it('refuses a fourth pin with 409 pin_limit; an unpin frees a slot', () => {
      spec.given(pinned(3)).when(pin()).thenThrows('pin_limit', 409);
      spec
        .given([...pinned(3), roomPostUnpinned({ post_id: pinned(1)[0].data.post_id })])
        .when(pin())
        .then([roomPostPinned({ pinned_at: NOW.toISOString() })]);
    });
  });

  describe('UnpinPost', () => {
    const spec = DeciderSpecification.for<UnpinPost, RoomState, RoomStreamEvent>({ decide: decideUnpinPost, ...roomAggregate });
    const unpin = (over: Partial<UnpinPost['data']> = {}): UnpinPost => ({
      type: 'UnpinPost',
      data: { room_slug: 'lead-gen', post_id: POST, user_id: USER, agent_id: READER, moderation: ADMIN, ...over },
      metadata: { now: NOW },
    });

    it('lets a super admin without a linked agent unpin', () => {
      spec
        .given([roomPostPinned()])
        .when(unpin({ agent_id: null }))
        .then([roomPostUnpinned({ agent_id: null, unpinned_at: NOW.toISOString() })]);
    });

    it('unpins a pinned post', () => {
      spec
        .given([roomPostPinned(), roomPostPinned({ post_id: OTHER_POST })])
        .when(unpin())
        .then([roomPostUnpinned({ unpinned_at: NOW.toISOString() })]);
    });

    it('refuses anyone but the creator or a super admin with 403 not_room_moderator', () => {
      spec
        .given([roomPostPinned()])
        .when(unpin({ moderation: NOBODY }))
        .thenThrows('not_room_moderator', 403);
    });

    it('refuses a post that is not pinned (any more) with 404 pin_not_found', () => {
      spec.given([]).when(unpin()).thenThrows('pin_not_found', 404);
      spec.given([roomPostPinned(), roomPostUnpinned()]).when(unpin()).thenThrows('pin_not_found', 404);
    });
  });
});
