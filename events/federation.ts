import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { Data, IsoDate, Nullable } from './types.ts';

const PeerId = Type.String({ pattern: '^fed_' });

/**
 * On `federation-peer-<peer_id>` (the id derives from the normalised base URL, so one peer network
 * has one stream): a peer network asks to federate; a super admin approves or rejects it.
 */
export const FederationPeerRegisteredData = Data({
  peer_id: PeerId,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  base_url: Type.String({ pattern: '^https://' }),
  contact_email: Type.String({ minLength: 3, maxLength: 254 }),
  public_key: Nullable(Type.String({ maxLength: 200 })),
  registered_at: IsoDate,
});
export type FederationPeerRegistered = Event<'FederationPeerRegistered', Static<typeof FederationPeerRegisteredData>>;
export const FederationPeerDecidedData = Data({
  peer_id: PeerId,
  status: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
  decided_by: Type.String({ minLength: 1 }),
  decided_at: IsoDate,
});
export type FederationPeerDecided = Event<'FederationPeerDecided', Static<typeof FederationPeerDecidedData>>;

export type FederationEvent = FederationPeerRegistered | FederationPeerDecided;
export const federationEventSchemas = { FederationPeerRegistered: FederationPeerRegisteredData, FederationPeerDecided: FederationPeerDecidedData };
export const federationPeerStream = (peerId: string) => `federation-peer-${peerId}`;
