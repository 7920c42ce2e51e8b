import type { EventOfType } from '../../events/catalogue.ts';
import type { FederationPeerDecided, FederationPeerRegistered } from '../../events/federation.ts';
import { federationPeerStream } from '../../events/federation.ts';
import { conflict, notFound } from '../../events/kernel/errors.ts';
import { deriveId } from '../../events/kernel/ids.ts';
import type { Aggregate, Command, CommandBus, CommandContext } from '../handler.ts';

export type PeerStreamEvent = EventOfType<'FederationPeerRegistered' | 'FederationPeerDecided'>;
export type PeerStatus = 'none' | 'pending' | 'approved' | 'rejected';

export interface PeerState {
  status: PeerStatus;
  registered: FederationPeerRegistered['data'] | null;
}

export const peerAggregate: Aggregate<PeerState, PeerStreamEvent> = {
  initialState: () => ({ status: 'none', registered: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'FederationPeerRegistered':
        return { status: 'pending', registered: event.data };
      case 'FederationPeerDecided':
        return { ...state, status: event.data.status };
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  },
};

/** The peer id of a base URL: one per peer network (the URL's origin, lower case, no trailing slash). */
export function peerIdOf(baseUrl: string): string {
  return deriveId('fed', new URL(baseUrl).origin.toLowerCase());
}

export type RegisterPeer = Command<'RegisterPeer', Omit<FederationPeerRegistered['data'], 'registered_at'>>;
export type DecidePeer = Command<'DecidePeer', { peer_id: string; status: 'approved' | 'rejected'; decided_by: string }>;

/** A peer registers as pending; while pending or approved a new registration is 409; after a rejection it may ask again. */
export function decideRegisterPeer(command: RegisterPeer, state: PeerState): FederationPeerRegistered[] {
  if (state.status === 'pending' || state.status === 'approved') throw conflict(`This network is already ${state.status}`, 'peer_exists');
  return [{ type: 'FederationPeerRegistered', data: { ...command.data, registered_at: command.metadata.now.toISOString() } }];
}

/** A super admin approves or rejects a pending peer (404 unknown; 409 already decided). */
export function decideDecidePeer(command: DecidePeer, state: PeerState): FederationPeerDecided[] {
  if (state.status === 'none') throw notFound('Peer', 'peer_not_found');
  if (state.status !== 'pending') throw conflict(`This peer is already ${state.status}`, 'peer_decided');
  return [{ type: 'FederationPeerDecided', data: { ...command.data, decided_at: command.metadata.now.toISOString() } }];
}

export async function registerPeer(bus: CommandBus, input: Omit<RegisterPeer['data'], 'peer_id'>, ctx: CommandContext) {
  const peer_id = peerIdOf(input.base_url);
  const command: RegisterPeer = { type: 'RegisterPeer', data: { peer_id, ...input }, metadata: { now: ctx.now } };
  return bus.handle<PeerState, PeerStreamEvent, FederationPeerRegistered[]>(
    federationPeerStream(peer_id),
    peerAggregate,
    (s) => decideRegisterPeer(command, s),
    ctx,
  );
}

export async function decidePeer(bus: CommandBus, peerId: string, status: 'approved' | 'rejected', adminId: string, ctx: CommandContext) {
  const command: DecidePeer = { type: 'DecidePeer', data: { peer_id: peerId, status, decided_by: adminId }, metadata: { now: ctx.now } };
  return bus.handle<PeerState, PeerStreamEvent, FederationPeerDecided[]>(federationPeerStream(peerId), peerAggregate, (s) => decideDecidePeer(command, s), ctx);
}
