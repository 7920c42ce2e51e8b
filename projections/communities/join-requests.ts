import { defineProjection, type DataOf } from '../types.ts';

/** A request to join a circle; `_id` is the request id. */
export type CircleJoinRequestDoc = DataOf<'CircleJoinRequested'> & {
  _id: string;
  _pos: number;
  status: 'pending' | 'approved' | 'rejected';
  admin_note: string;
  decided_at: string | null;
  decided_by: string | null;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    circle_join_requests: CircleJoinRequestDoc;
  }
}

/** Circle join requests, per community and status (the admins' queue), newest first. */
export const joinRequestsProjection = defineProjection({
  name: 'circle-join-requests',
  collections: [
    {
      name: 'circle_join_requests',
      indexes: [
        { name: 'by_community_status', keys: { community_id: 1, status: 1, seq: -1 } },
        { name: 'by_community', keys: { community_id: 1, seq: -1 } },
        { name: 'by_status', keys: { status: 1, seq: -1 } },
        { name: 'all', keys: { seq: -1 } },
      ],
    },
  ],
  handles: ['CircleJoinRequested', 'CircleJoinRequestDecided'],
  async apply(event, ctx) {
    const requests = ctx.collection('circle_join_requests');
    switch (event.type) {
      case 'CircleJoinRequested': {
        const d = event.data;
        await requests.applyAt(d.request_id, event.position, {
          $set: Object.assign({}, d, { status: 'pending' as const, admin_note: '', decided_at: null, decided_by: null, seq: event.position }),
        });
        return;
      }
      case 'CircleJoinRequestDecided': {
        const d = event.data;
        await requests.applyAt(d.request_id, event.position, {
          $set: { status: d.status, admin_note: d.admin_note, decided_at: d.decided_at, decided_by: d.decided_by },
        });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
