import type { DecidePeer, PeerState, PeerStreamEvent, RegisterPeer } from '../../../commands/federation/peers.ts';
import { decideDecidePeer, decideRegisterPeer, peerAggregate } from '../../../commands/federation/peers.ts';
import { DeciderSpecification } from '../../helpers/decider-spec.ts';
import * as f from '../../fixtures/events.ts';

const now = f.NOW.toISOString();

describe('commands: federation peers (federation-peer-<id>)', () => {
  const registers = DeciderSpecification.for<RegisterPeer, PeerState, PeerStreamEvent>({ decide: decideRegisterPeer, ...peerAggregate });
  const decides = DeciderSpecification.for<DecidePeer, PeerState, PeerStreamEvent>({ decide: decideDecidePeer, ...peerAggregate });
  const register: RegisterPeer = {
    type: 'RegisterPeer',
    data: { peer_id: 'fed_peer1', name: 'Peer Network', base_url: 'https://peer.example.com', contact_email: 'ops@peer.example.com', public_key: null },
    metadata: { now: f.NOW },
  };
  const decide = (status: 'approved' | 'rejected'): DecidePeer => ({
    type: 'DecidePeer',
    data: { peer_id: 'fed_peer1', status, decided_by: 'usr_admin000000000000000' },
    metadata: { now: f.NOW },
  });

  it('registers a peer as pending', () =>
    registers
      .given([])
      .when(register)
      .then([f.federationPeerRegistered({ registered_at: now })]));
  it('refuses a registration while pending or approved (409)', () => {
    registers.given([f.federationPeerRegistered()]).when(register).thenThrows('peer_exists', 409);
    registers.given([f.federationPeerRegistered(), f.federationPeerDecided()]).when(register).thenThrows('peer_exists', 409);
  });
  it('takes a new registration after a rejection', () =>
    registers
      .given([f.federationPeerRegistered(), f.federationPeerDecided({ status: 'rejected' })])
      .when(register)
      .then([f.federationPeerRegistered({ registered_at: now })]));
  it('approves or rejects a pending peer', () => {
    decides
      .given([f.federationPeerRegistered()])
      .when(decide('approved'))
      .then([f.federationPeerDecided({ decided_at: now })]);
    decides
      .given([f.federationPeerRegistered()])
      .when(decide('rejected'))
      .then([f.federationPeerDecided({ status: 'rejected', decided_at: now })]);
  });
  it('refuses an unknown peer (404) and a decided one (409)', () => {
    decides.given([]).when(decide('approved')).thenThrows('peer_not_found', 404);
    decides.given([f.federationPeerRegistered(), f.federationPeerDecided()]).when(decide('rejected')).thenThrows('peer_decided', 409);
  });
});
