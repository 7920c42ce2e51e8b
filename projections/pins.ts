import type { RoomPostPinned, RoomPostUnpinned } from '../events/feed.ts';
import type { Projection } from './types.ts';

/** Pinned (anchor) posts per room, in pin order. */
export const roomPinsProjection: Projection = {
  name: 'room_pins',
  collections: [{ name: 'room_pins', indexes: [] }],
  handles: new Set(['RoomPostPinned', 'RoomPostUnpinned']),
  async apply(event, ctx) {
    const pins = ctx.collection('room_pins');
    if (event.type === 'RoomPostPinned') {
      const d = event.data as RoomPostPinned['data'];
      await pins.applyAt(d.room_slug, event.position, { $push: { post_ids: d.post_id } });
      return;
    }
    const d = event.data as RoomPostUnpinned['data'];
    await pins.applyAt(d.room_slug, event.position, { $pull: { post_ids: d.post_id } });
  },
};
