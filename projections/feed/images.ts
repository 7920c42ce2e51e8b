import { defineProjection } from '../types.ts';

/** Uploaded images (the bytes are in the blob store): what serving one needs. */
export const imagesProjection = defineProjection({
  name: 'images',
  collections: [{ name: 'images', indexes: [] }],
  handles: ['ImageUploaded'],
  async apply(event, ctx) {
    const d = event.data;
    await ctx.collection('images').applyAt(d.image_id, event.position, {
      $set: { agent_id: d.agent_id, content_type: d.content_type, size_bytes: d.size_bytes, sha256: d.sha256, created_at: d.uploaded_at },
    });
  },
});
