import type { RoomHidden, RoomMerged, RoomPostPinned, RoomPostUnpinned } from '../../events/feed.ts';
import { roomStream } from '../../events/feed.ts';
import { conflict, notFound } from '../../events/kernel/errors.ts';
import type { Event } from '../../events/types.ts';
import type { Aggregate, CommandBus, CommandContext } from '../handler.ts';

/** A room's own stream (`room-<slug>`): admin operations and pins. */
export interface RoomState {
  merged_into: string | null;
  hidden: boolean;
  pinned: readonly string[];
}

export const roomAggregate: Aggregate<RoomState> = {
  initialState: () => ({ merged_into: null, hidden: false, pinned: [] }),
  evolve(state, event: Event<string, unknown>) {
    if (event.type === 'RoomPostPinned') return { ...state, pinned: [...state.pinned, (event.data as RoomPostPinned['data']).post_id] };
    if (event.type === 'RoomPostUnpinned') {
      const id = (event.data as RoomPostUnpinned['data']).post_id;
      return { ...state, pinned: state.pinned.filter((p) => p !== id) };
    }
    if (event.type === 'RoomMerged') return { ...state, merged_into: (event.data as RoomMerged['data']).into };
    if (event.type === 'RoomHidden') return { ...state, hidden: true };
    return state;
  },
};

/** Super admin: fold a custom room into a curated one (the caller has checked both rooms exist). */
export async function mergeRoom(bus: CommandBus, slug: string, into: string, by: string, ctx: CommandContext) {
  return bus.handle(
    roomStream(slug),
    roomAggregate,
    (state) => {
      if (state.merged_into) throw conflict(`Room '${slug}' is already merged into '${state.merged_into}'`, 'room_already_merged');
      const e: RoomMerged = { type: 'RoomMerged', data: { room_slug: slug, into, by, merged_at: ctx.now.toISOString() } };
      return [e];
    },
    ctx,
  );
}

/** Super admin: hide a room. Hiding a hidden room appends nothing. */
export async function hideRoom(bus: CommandBus, slug: string, by: string, ctx: CommandContext) {
  return bus.handle(
    roomStream(slug),
    roomAggregate,
    (state) => {
      if (state.hidden) return [];
      const e: RoomHidden = { type: 'RoomHidden', data: { room_slug: slug, by, hidden_at: ctx.now.toISOString() } };
      return [e];
    },
    ctx,
  );
}

/** Pins per room (spec). */
export const MAX_PINS_PER_ROOM = 3;

export async function pinPost(bus: CommandBus, slug: string, post: { post_id: string; agent_id: string }, by: string, ctx: CommandContext) {
  let already = false;
  const result = await bus.handle(
    roomStream(slug),
    roomAggregate,
    (state) => {
      already = state.pinned.includes(post.post_id);
      if (already) return [];
      if (state.pinned.length >= MAX_PINS_PER_ROOM) throw conflict(`A room has at most ${MAX_PINS_PER_ROOM} pinned posts; unpin one first`, 'pin_limit');
      const e: RoomPostPinned = {
        type: 'RoomPostPinned',
        data: { room_slug: slug, post_id: post.post_id, agent_id: by, post_author_id: post.agent_id, pinned_at: ctx.now.toISOString() },
      };
      return [e];
    },
    ctx,
  );
  return { already_pinned: already, position: result.position };
}

export async function unpinPost(bus: CommandBus, slug: string, postId: string, by: string, ctx: CommandContext) {
  const result = await bus.handle(
    roomStream(slug),
    roomAggregate,
    (state) => {
      if (!state.pinned.includes(postId)) throw notFound('Pin', 'pin_not_found');
      const e: RoomPostUnpinned = { type: 'RoomPostUnpinned', data: { room_slug: slug, post_id: postId, agent_id: by, unpinned_at: ctx.now.toISOString() } };
      return [e];
    },
    ctx,
  );
  return { position: result.position };
}
