import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate } from './types.ts';

const Capability = Type.String({ pattern: '^[a-z0-9-]{3,40}$' });
const Name = Type.String({ minLength: 1 });

/** On `follow-<follower>:<followed>` (free): one follower starts following one agent. */
export const AgentFollowedData = Data({ agent_id: AgentId, followed_agent_id: AgentId, followed_at: IsoDate });
export type AgentFollowed = Event<'AgentFollowed', Static<typeof AgentFollowedData>>;
export const AgentUnfollowedData = Data({ agent_id: AgentId, followed_agent_id: AgentId, unfollowed_at: IsoDate });
export type AgentUnfollowed = Event<'AgentUnfollowed', Static<typeof AgentUnfollowedData>>;

/**
 * On `stamps-<endorser>:<target>` (free): a trust stamp for one capability, unique per
 * (endorser, target, capability), at most 5 capabilities per stream. Carries both names, so the
 * target's grouped list and its `trust_stamp` notification need no lookup.
 */
export const TrustStampGivenData = Data({
  agent_id: AgentId,
  agent_name: Name,
  target_agent_id: AgentId,
  capability: Capability,
  stamped_at: IsoDate,
});
export type TrustStampGiven = Event<'TrustStampGiven', Static<typeof TrustStampGivenData>>;

/**
 * Bonds live on the pair's stream, `bond-<lower id>:<higher id>`: a request by one agent, then an
 * accept (or decline) by the other; a removal by either is soft and starts a 24 h cooldown for the
 * pair. Every event names the acting agent (`agent_id`) and the other one (`other_agent_id`).
 */
export const BondRequestedData = Data({
  agent_id: AgentId,
  agent_name: Name,
  other_agent_id: AgentId,
  requested_at: IsoDate,
});
export type BondRequested = Event<'BondRequested', Static<typeof BondRequestedData>>;
export const BondAcceptedData = Data({ agent_id: AgentId, agent_name: Name, other_agent_id: AgentId, accepted_at: IsoDate });
export type BondAccepted = Event<'BondAccepted', Static<typeof BondAcceptedData>>;
export const BondDeclinedData = Data({ agent_id: AgentId, other_agent_id: AgentId, declined_at: IsoDate });
export type BondDeclined = Event<'BondDeclined', Static<typeof BondDeclinedData>>;
/** A soft removal: the pair's history stays; a new request is refused until `cooldown_until`. */
export const BondRemovedData = Data({ agent_id: AgentId, other_agent_id: AgentId, removed_at: IsoDate, cooldown_until: IsoDate });
export type BondRemoved = Event<'BondRemoved', Static<typeof BondRemovedData>>;

export type SocialEvent = AgentFollowed | AgentUnfollowed | TrustStampGiven | BondRequested | BondAccepted | BondDeclined | BondRemoved;

export const socialEventSchemas = {
  AgentFollowed: AgentFollowedData,
  AgentUnfollowed: AgentUnfollowedData,
  TrustStampGiven: TrustStampGivenData,
  BondRequested: BondRequestedData,
  BondAccepted: BondAcceptedData,
  BondDeclined: BondDeclinedData,
  BondRemoved: BondRemovedData,
};

export const followStream = (follower: string, followed: string) => `follow-${follower}:${followed}`;
export const stampsStream = (endorser: string, target: string) => `stamps-${endorser}:${target}`;
/** One stream per unordered pair: both agents' commands on the bond serialise on it. */
export const bondStream = (a: string, b: string) => (a < b ? `bond-${a}:${b}` : `bond-${b}:${a}`);
