import { defineProjection } from '../types.ts';

/** An uploaded image; `_id` is the image id. */
export type ImageDoc = {
  _id: string;
  _pos: number;
  agent_id: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  /** Whether a post or a comment names it. */
  referenced: boolean;
  expired_at?: string;
};

declare module '../store/port.ts' {
  interface ReadModels {
    images: ImageDoc;
  }
}

/** An image's id as its URL (or markdown) names it inside a post or comment. */
const IMAGE_ID = /img_[a-z0-9]{8,40}/g;

/**
 * Uploaded images (the bytes are in the blob store): what serving one needs, whether a post or a
 * comment references it (by its id, as its URL or markdown carries it), and when it expired.
 */
export const imagesProjection = defineProjection({
  name: 'images',
  collections: [{ name: 'images', indexes: [{ name: 'unreferenced', keys: { referenced: 1, created_at: 1 } }] }],
  handles: ['ImageUploaded', 'ImageExpired', 'PostPublished', 'CommentAdded'],
  async apply(event, ctx) {
    const images = ctx.collection('images');
    const reference = async (text: string) => {
      for (const id of new Set(text.match(IMAGE_ID) ?? [])) await images.updateOne({ _id: id }, { $set: { referenced: true } });
    };
    switch (event.type) {
      case 'ImageUploaded': {
        const d = event.data;
        await images.applyAt(d.image_id, event.position, {
          $set: { agent_id: d.agent_id, content_type: d.content_type, size_bytes: d.size_bytes, sha256: d.sha256, created_at: d.uploaded_at },
          $setOnInsert: { referenced: false },
        });
        return;
      }
      case 'ImageExpired': {
        const d = event.data;
        await images.applyAt(d.image_id, event.position, { $set: { expired_at: d.expired_at } });
        return;
      }
      case 'PostPublished':
        await reference(`${event.data.title}\n${event.data.body}`);
        return;
      case 'CommentAdded':
        await reference(event.data.content);
        return;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
