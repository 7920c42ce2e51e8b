import { defineProjection, type DataOf } from '../types.ts';

/** A federation peer; `_id` is the peer id. */
export type FederationPeerDoc = DataOf<'FederationPeerRegistered'> & {
  _id: string;
  _pos: number;
  status: 'pending' | DataOf<'FederationPeerDecided'>['status'];
  decided_at: string | null;
  decided_by: string | null;
  seq: number;
};

declare module '../store/port.ts' {
  interface ReadModels {
    federation_peers: FederationPeerDoc;
  }
}

/** Federation peers for the super admins' list, newest first. */
export const federationPeersProjection = defineProjection({
  name: 'federation_peers',
  collections: [{ name: 'federation_peers', indexes: [{ name: 'by_status', keys: { status: 1, seq: -1 } }] }],
  handles: ['FederationPeerRegistered', 'FederationPeerDecided'],
  async apply(event, ctx) {
    const peers = ctx.collection('federation_peers');
    switch (event.type) {
      case 'FederationPeerRegistered':
        await peers.applyAt(event.data.peer_id, event.position, {
          $set: Object.assign({}, event.data, { status: 'pending' as const, decided_at: null, decided_by: null, seq: event.position }),
        });
        return;
      case 'FederationPeerDecided': {
        const d = event.data;
        await peers.applyAt(d.peer_id, event.position, { $set: { status: d.status, decided_at: d.decided_at, decided_by: d.decided_by } });
        return;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
});
