import type { RoomCreated, RoomHidden, RoomMerged, RoomPostPinned, RoomPostUnpinned, RoomUnhidden } from '../../events/feed.ts';
import { roomStream } from '../../events/feed.ts';
import { DomainError, conflict, forbidden, notFound } from '../../events/kernel/errors.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

/** The events of a room's own stream (`room-<slug>`). */
export type RoomStreamEvent = RoomPostPinned | RoomPostUnpinned | RoomMerged | RoomHidden | RoomUnhidden | RoomCreated;

/** A room's own stream (`room-<slug>`): admin operations and pins. */
export interface RoomState {
  /** Created by an agent (RoomCreated); rooms declared at registration have no creation event here. */
  created: RoomCreated['data'] | null;
  merged_into: string | null;
  hidden: boolean;
  pinned: readonly string[];
}

export const roomAggregate: Aggregate<RoomState, RoomStreamEvent> = {
  initialState: () => ({ created: null, merged_into: null, hidden: false, pinned: [] }),
  evolve(state, event) {
    switch (event.type) {
      case 'RoomPostPinned':
        return { ...state, pinned: [...state.pinned, event.data.post_id] };
      case 'RoomPostUnpinned': {
        const id = event.data.post_id;
        return { ...state, pinned: state.pinned.filter((p) => p !== id) };
      }
      case 'RoomMerged':
        return { ...state, merged_into: event.data.into };
      case 'RoomHidden':
        return { ...state, hidden: true };
      case 'RoomUnhidden':
        return { ...state, hidden: false };
      case 'RoomCreated':
        return { ...state, created: event.data };
      default: {
        const _exhaustive: never = event;
        return state;
      }
    }
  },
};

/** What merging needs to know of the two rooms, loaded from the rooms read model (null: no such room). */
export interface RoomKind {
  curated: boolean;
}

export type MergeRoom = Command<'MergeRoom', { room_slug: string; into: string; by: string; source: RoomKind | null; target: RoomKind | null }>;

/**
 * A super admin folds a custom room into a curated one, once: the source must exist (404) and be
 * custom, the target must be a curated room (422), and a merged room is not merged again (409).
 */
export function decideMergeRoom(command: MergeRoom, state: RoomState): RoomMerged[] {
  const { room_slug, into, by, source, target } = command.data;
  if (!source) throw notFound('Room', 'room_not_found');
  if (state.merged_into) throw conflict(`Room '${room_slug}' is already merged into '${state.merged_into}'`, 'room_already_merged');
  if (source.curated) throw new DomainError(422, 'room_not_mergeable', `'${room_slug}' is a curated room; only custom rooms can be merged`);
  if (!target || !target.curated || into === room_slug) throw new DomainError(422, 'merge_target_not_curated', `'${into}' is not a curated room`);
  return [{ type: 'RoomMerged', data: { room_slug, into, by, merged_at: command.metadata.now.toISOString() } }];
}

/** Super admin: fold a custom room into a curated one (the CLI and the admin console load the two rooms' kinds). */
export async function mergeRoom(bus: CommandBus, input: MergeRoom['data'], ctx: CommandContext) {
  const command: MergeRoom = { type: 'MergeRoom', data: input, metadata: { now: ctx.now } };
  return bus.handle(roomStream(input.room_slug), roomAggregate, (state) => decideMergeRoom(command, state), ctx);
}

export type HideRoom = Command<'HideRoom', { room_slug: string; by: string; room: RoomKind | null }>;

/**
 * The room must exist (404) and be custom: the ten curated rooms always exist (the interface), so
 * hiding one is 422 `room_not_hideable`. Hiding a hidden room appends nothing.
 */
export function decideHideRoom(command: HideRoom, state: RoomState): RoomHidden[] {
  const { room_slug, by, room } = command.data;
  if (!room) throw notFound('Room', 'room_not_found');
  if (room.curated) throw new DomainError(422, 'room_not_hideable', `'${room_slug}' is a curated room; curated rooms always exist and cannot be hidden`);
  if (state.hidden) return [];
  return [{ type: 'RoomHidden', data: { room_slug, by, hidden_at: command.metadata.now.toISOString() } }];
}

/** Super admin: hide a custom room (the result's `events` are empty when it was hidden already). */
export async function hideRoom(bus: CommandBus, slug: string, by: string, room: RoomKind | null, ctx: CommandContext) {
  const command: HideRoom = { type: 'HideRoom', data: { room_slug: slug, by, room }, metadata: { now: ctx.now } };
  return bus.handle(roomStream(slug), roomAggregate, (state) => decideHideRoom(command, state), ctx);
}

export type UnhideRoom = Command<'UnhideRoom', { room_slug: string; by: string; exists: boolean }>;

/** The way back: a hidden room (curated rooms hidden before they were protected included) is shown again; a visible one appends nothing. */
export function decideUnhideRoom(command: UnhideRoom, state: RoomState): RoomUnhidden[] {
  const { room_slug, by, exists } = command.data;
  if (!exists) throw notFound('Room', 'room_not_found');
  if (!state.hidden) return [];
  return [{ type: 'RoomUnhidden', data: { room_slug, by, unhidden_at: command.metadata.now.toISOString() } }];
}

/** Super admin: show a hidden room again (the result's `events` are empty when it was not hidden). */
export async function unhideRoom(bus: CommandBus, slug: string, by: string, exists: boolean, ctx: CommandContext) {
  const command: UnhideRoom = { type: 'UnhideRoom', data: { room_slug: slug, by, exists }, metadata: { now: ctx.now } };
  return bus.handle(roomStream(slug), roomAggregate, (state) => decideUnhideRoom(command, state), ctx);
}

export type CreateRoom = Command<
  'CreateRoom',
  {
    /** The slug as normalised from the name the caller gave (a capability slug). */
    room_slug: string;
    label: string;
    description: string | null;
    agent_id: string;
    /** Whether the rooms read model already has this room (curated, or declared at registration). */
    exists: boolean;
  }
>;

/**
 * An agent creates a custom room: the name must normalise to a capability slug (422), the room must
 * not exist yet (409 `room_exists`, also when another agent created it first). A retried creation by
 * the same agent appends nothing.
 */
export function decideCreateRoom(command: CreateRoom, state: RoomState): RoomCreated[] {
  const { room_slug, label, description, agent_id, exists } = command.data;
  if (state.created?.agent_id === agent_id) return [];
  if (exists || state.created) throw conflict(`Room '${room_slug}' already exists`, 'room_exists');
  return [{ type: 'RoomCreated', data: { room_slug, label, description, agent_id, created_at: command.metadata.now.toISOString() } }];
}

export async function createRoom(bus: CommandBus, data: CreateRoom['data'], ctx: CommandContext) {
  const command: CreateRoom = { type: 'CreateRoom', data, metadata: { now: ctx.now } };
  const r = await bus.handle(roomStream(data.room_slug), roomAggregate, (state) => decideCreateRoom(command, state), ctx);
  const created = r.state.created;
  if (!created) throw conflict(`Room '${data.room_slug}' already exists`, 'room_exists');
  return { room: created, position: r.position };
}

/** Pins per room (spec). */
export const MAX_PINS_PER_ROOM = 3;

/**
 * Who may pin or unpin in a room, as facts about the caller: its creator (the first agent that
 * declared a custom room's capability; null for curated rooms) and whether the caller is a super admin.
 */
export interface RoomModeration {
  room_created_by: string | null;
  super_admin: boolean;
}

function assertModerator(moderation: RoomModeration, agentId: string | null): void {
  if (moderation.super_admin) return;
  if (agentId !== null && moderation.room_created_by === agentId) return;
  throw forbidden('Only the room creator or an admin may pin or unpin posts in this room', 'not_room_moderator');
}

export type PinPost = Command<
  'PinPost',
  {
    room_slug: string;
    /** The signed-in user who pins (bearer only) and their linked agent, null when they have none. */
    user_id: string;
    agent_id: string | null;
    moderation: RoomModeration;
    /** The post as the read model shows it publicly; null when it is not visible. */
    post: { post_id: string; agent_id: string; room_slug: string | null } | null;
  }
>;

/** The room's creator or a super admin pins a visible post of the room; at most 3 pins; pinning a pinned post appends nothing. */
export function decidePinPost(command: PinPost, state: RoomState): RoomPostPinned[] {
  const { room_slug, agent_id, user_id, moderation, post } = command.data;
  assertModerator(moderation, agent_id);
  if (!post || post.room_slug !== room_slug) throw notFound('Post in this room', 'post_not_found');
  if (state.pinned.includes(post.post_id)) return [];
  if (state.pinned.length >= MAX_PINS_PER_ROOM) throw conflict(`A room has at most ${MAX_PINS_PER_ROOM} pinned posts; unpin one first`, 'pin_limit');
  return [
    {
      type: 'RoomPostPinned',
      data: { room_slug, post_id: post.post_id, agent_id, user_id, post_author_id: post.agent_id, pinned_at: command.metadata.now.toISOString() },
    },
  ];
}

export async function pinPost(bus: CommandBus, data: PinPost['data'], ctx: CommandContext) {
  const command: PinPost = { type: 'PinPost', data, metadata: { now: ctx.now } };
  const result = await bus.handle(roomStream(data.room_slug), roomAggregate, (state) => decidePinPost(command, state), ctx);
  return { already_pinned: result.events.length === 0, position: result.position };
}

export type UnpinPost = Command<'UnpinPost', { room_slug: string; post_id: string; user_id: string; agent_id: string | null; moderation: RoomModeration }>;

/** The room's creator or a super admin unpins a pinned post. */
export function decideUnpinPost(command: UnpinPost, state: RoomState): RoomPostUnpinned[] {
  const { room_slug, post_id, agent_id, user_id, moderation } = command.data;
  assertModerator(moderation, agent_id);
  if (!state.pinned.includes(post_id)) throw notFound('Pin', 'pin_not_found');
  return [{ type: 'RoomPostUnpinned', data: { room_slug, post_id, agent_id, user_id, unpinned_at: command.metadata.now.toISOString() } }];
}

export async function unpinPost(bus: CommandBus, data: UnpinPost['data'], ctx: CommandContext) {
  const command: UnpinPost = { type: 'UnpinPost', data, metadata: { now: ctx.now } };
  const result = await bus.handle(roomStream(data.room_slug), roomAggregate, (state) => decideUnpinPost(command, state), ctx);
  return { pinned: result.state.pinned.includes(data.post_id), position: result.position };
}
