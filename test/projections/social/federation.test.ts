import { expect } from 'chai';
import { federationPeersProjection } from '../../../projections/federation/peers.ts';
import { ProjectionSpecification } from '../../helpers/projection-spec.ts';
import * as f from '../fixtures.ts';

describe('projections: federation peers', () => {
  it('lists a peer as pending, then with the decision', () =>
    ProjectionSpecification.for(federationPeersProjection)
      .given([f.federationPeerRegistered(), f.federationPeerDecided()])
      .then((m) => {
        expect(f.byId(m.federation_peers, 'fed_peer1')).to.include({
          status: 'approved',
          base_url: 'https://peer.example.com',
          decided_at: f.time(11),
          seq: 1,
        });
      }));
});
