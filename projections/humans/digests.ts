import { defineProjection, type DataOf } from '../types.ts';

/** A digest produced for a user; `_id` is the digest id. */
export type DigestDoc = {
  _id: string;
  _pos: number;
  user_id: string;
  agent_id: string;
  items: DataOf<'DigestProduced'>['items'];
  since: string;
  produced_at: string;
  read: boolean;
  read_at: string | null;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    digests: DigestDoc;
  }
}

/** Passive match digests per user (the owner's `/api/svc/digests`). */
export const digestsProjection = defineProjection({
  name: 'digests',
  collections: [
    {
      name: 'digests',
      indexes: [
        { name: 'by_user', keys: { user_id: 1, produced_at: -1 } },
        // Cursor order (queries/cursor.ts): newest first, or after a cursor.
        { name: 'by_user_seq', keys: { user_id: 1, seq: 1, _id: 1 } },
      ],
    },
  ],
  handles: ['DigestProduced', 'DigestRead'],
  async apply(event, ctx) {
    const digests = ctx.collection('digests');
    switch (event.type) {
      case 'DigestProduced': {
        const d = event.data;
        await digests.applyAt(d.digest_id, event.position, {
          $set: {
            user_id: d.user_id,
            agent_id: d.agent_id,
            items: d.items,
            since: d.since,
            produced_at: d.produced_at,
            read: false,
            read_at: null,
            seq: event.position,
          },
        });
        return;
      }
      case 'DigestRead': {
        const d = event.data;
        await digests.applyAt(d.digest_id, event.position, { $set: { read: true, read_at: d.read_at } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
