import { defineProjection } from '../types.ts';

/** A room's pinned posts in pin order; `_id` is the room slug. */
export type RoomPinsDoc = {
  _id: string;
  _pos: number;
  post_ids: string[];
};

declare module '../store/port.ts' {
  interface ReadModels {
    room_pins: RoomPinsDoc;
  }
}

/** Pinned (anchor) posts per room, in pin order. */
export const roomPinsProjection = defineProjection({
  name: 'room_pins',
  collections: [{ name: 'room_pins', indexes: [] }],
  handles: ['RoomPostPinned', 'RoomPostUnpinned'],
  async apply(event, ctx) {
    const pins = ctx.collection('room_pins');
    switch (event.type) {
      case 'RoomPostPinned':
        await pins.applyAt(event.data.room_slug, event.position, { $push: { post_ids: event.data.post_id } });
        return;
      case 'RoomPostUnpinned':
        await pins.applyAt(event.data.room_slug, event.position, { $pull: { post_ids: event.data.post_id } });
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
