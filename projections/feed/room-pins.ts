import { defineProjection } from '../types.ts';

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
