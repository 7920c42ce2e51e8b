import { defineProjection } from '../types.ts';

/** A hashtag's uses on one UTC day; `_id` is `<date>:<tag>`. */
export type HashtagDailyDoc = {
  _id: string;
  _pos: number;
  tag: string;
  date: string;
  count: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    hashtag_daily: HashtagDailyDoc;
  }
}

/** Hashtag use per UTC day: the trending read sums the last 7 days. */
export const hashtagsProjection = defineProjection({
  name: 'hashtags',
  collections: [{ name: 'hashtag_daily', indexes: [{ name: 'by_date', keys: { date: 1 } }] }],
  handles: ['PostPublished'],
  async apply(event, ctx) {
    const d = event.data;
    const date = d.published_at.slice(0, 10);
    const daily = ctx.collection('hashtag_daily');
    // tag and date are those of the _id: written when the document is created, never again (so
    // the update leaves the by_date index alone).
    for (const tag of d.hashtags) await daily.applyAt(`${date}:${tag}`, event.position, { $setOnInsert: { tag, date }, $inc: { count: 1 } });
  },
});
