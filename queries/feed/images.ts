import type { ReadStore } from '../../projections/store/port.ts';

/** An image that can be served: uploaded and not expired. */
export async function getLiveImage(store: ReadStore, imageId: string) {
  const doc = await store.collection('images').findOne({ _id: imageId });
  return doc && doc.expired_at === undefined && doc.content_type !== undefined ? doc : null;
}

/** Images no post or comment references, uploaded before `before`, not yet expired (oldest first). Index-served. */
export function unreferencedImagesBefore(store: ReadStore, before: Date, limit: number) {
  return store
    .collection('images')
    .find({ referenced: false, created_at: { $lt: before.toISOString() }, expired_at: { $exists: false } }, { sort: { created_at: 1 }, limit });
}
