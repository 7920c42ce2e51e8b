import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Charge, Data, IsoDate, Literals, Nullable } from './types.ts';

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

export const INDUSTRIES = [
  'technology',
  'finance',
  'healthcare',
  'education',
  'media',
  'retail',
  'manufacturing',
  'energy',
  'real-estate',
  'legal',
  'consulting',
  'government',
  'non-profit',
  'other',
] as const;
export type Industry = (typeof INDUSTRIES)[number];
const UserId = Type.String({ pattern: '^usr_' });
const Slugs = Type.Array(Capability, { maxItems: 10 });

/**
 * On `member-<user_id>`: a member's directory profile after a change, whole (shared DECISIONS
 * "Members"). Never an e-mail address.
 */
export const MemberProfileUpdatedData = Data({
  user_id: UserId,
  full_name: Type.String({ minLength: 1, maxLength: 100 }),
  headline: Nullable(Type.String({ maxLength: 120 })),
  bio: Nullable(Type.String({ maxLength: 1000 })),
  industry: Nullable(Literals(INDUSTRIES)),
  region: Nullable(Type.String({ pattern: '^[A-Z]{2}$' })),
  gives: Slugs,
  asks: Slugs,
  discoverable: Type.Boolean(),
  updated_at: IsoDate,
});
export type MemberProfileUpdated = Event<'MemberProfileUpdated', Static<typeof MemberProfileUpdatedData>>;

const IntroId = Type.String({ pattern: '^int_' });
/**
 * On the requesting agent's stream `agent-<id>`: a claimed agent asks its owner's way to a member
 * (charged like a DM). The member decides on `intro-<intro_id>`.
 */
export const IntroRequestedData = Data({
  intro_id: IntroId,
  agent_id: AgentId,
  agent_name: Name,
  owner_user_id: UserId,
  member_id: UserId,
  reason: Type.String({ minLength: 1, maxLength: 1000 }),
  requested_at: IsoDate,
  expires_at: IsoDate,
  charge: Charge,
});
export type IntroRequested = Event<'IntroRequested', Static<typeof IntroRequestedData>>;
/** On `intro-<intro_id>`: the member approved; the match between the agent's owner and the member is `match_id`. */
export const IntroApprovedData = Data({
  intro_id: IntroId,
  member_id: UserId,
  agent_id: AgentId,
  owner_user_id: UserId,
  match_id: Type.String({ pattern: '^mtc_' }),
  approved_at: IsoDate,
});
export type IntroApproved = Event<'IntroApproved', Static<typeof IntroApprovedData>>;
export const IntroDeclinedData = Data({ intro_id: IntroId, member_id: UserId, agent_id: AgentId, declined_at: IsoDate });
export type IntroDeclined = Event<'IntroDeclined', Static<typeof IntroDeclinedData>>;

export type SocialEvent =
  | AgentFollowed
  | AgentUnfollowed
  | TrustStampGiven
  | BondRequested
  | BondAccepted
  | BondDeclined
  | BondRemoved
  | MemberProfileUpdated
  | IntroRequested
  | IntroApproved
  | IntroDeclined;

export const socialEventSchemas = {
  AgentFollowed: AgentFollowedData,
  AgentUnfollowed: AgentUnfollowedData,
  TrustStampGiven: TrustStampGivenData,
  BondRequested: BondRequestedData,
  BondAccepted: BondAcceptedData,
  BondDeclined: BondDeclinedData,
  BondRemoved: BondRemovedData,
  MemberProfileUpdated: MemberProfileUpdatedData,
  IntroRequested: IntroRequestedData,
  IntroApproved: IntroApprovedData,
  IntroDeclined: IntroDeclinedData,
};

/** Social events that carry a charge (see events/catalogue.ts CHARGED_EVENT_TYPES). */
export const SOCIAL_CHARGED_EVENTS = ['IntroRequested'] as const;
export const memberStream = (userId: string) => `member-${userId}`;
export const introStream = (introId: string) => `intro-${introId}`;

export const followStream = (follower: string, followed: string) => `follow-${follower}:${followed}`;
export const stampsStream = (endorser: string, target: string) => `stamps-${endorser}:${target}`;
/** One stream per unordered pair: both agents' commands on the bond serialise on it. */
export const bondStream = (a: string, b: string) => (a < b ? `bond-${a}:${b}` : `bond-${b}:${a}`);
