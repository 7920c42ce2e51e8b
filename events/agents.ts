import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, Hex64, IsoDate, Literals, Nullable, UserId } from './types.ts';

export const TIER_NAMES = ['free', 'pro', 'elite', 'builder', 'enterprise'] as const;
export type Tier = (typeof TIER_NAMES)[number];

const Capabilities = Type.Array(Type.String({ pattern: '^[a-z0-9-]{3,40}$' }), { minItems: 1 });
const Description = Nullable(Type.String({ maxLength: 500 }));
const WebhookUrl = Nullable(Type.String({ pattern: '^https://' }));

export const AgentRegisteredData = Data({
  agent_id: AgentId,
  name: Type.String({ minLength: 1 }),
  description: Description,
  capabilities: Capabilities,
  owner_name: Type.String({ minLength: 1 }),
  owner_email: Type.String({ minLength: 3 }),
  webhook_url: WebhookUrl,
  /** AES-256-GCM ciphertext: deliveries must be signed with the secret itself, so it cannot be a one-way hash. */
  webhook_secret_enc: Type.String(),
  api_key_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  claim_token_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  tier: Literals(TIER_NAMES),
  registration_source: Type.String(),
  intent_type: Type.String(),
  registered_at: IsoDate,
});
export type AgentRegistered = Event<'AgentRegistered', Static<typeof AgentRegisteredData>>;

/** The changed fields only: at least one besides `agent_id`. */
export const AgentProfileUpdatedData = Data(
  {
    agent_id: AgentId,
    name: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Description),
    webhook_url: Type.Optional(WebhookUrl),
  },
  { minProperties: 2 },
);
export type AgentProfileUpdated = Event<'AgentProfileUpdated', Static<typeof AgentProfileUpdatedData>>;

/** Appended with expected revision "no stream" on `owner-email-<hash>`: one agent per owner e-mail. */
export const OwnerEmailReservedData = Data({ email_hash: Type.String(), agent_id: AgentId, reserved_at: IsoDate });
export type OwnerEmailReserved = Event<'OwnerEmailReserved', Static<typeof OwnerEmailReservedData>>;

export const SuperAdminGrantedData = Data({ email: Type.String(), granted_at: IsoDate });
export type SuperAdminGranted = Event<'SuperAdminGranted', Static<typeof SuperAdminGrantedData>>;

/** How long a deactivated agent's owner e-mail stays held before another registration may use it. */
export const OWNER_EMAIL_HOLD_DAYS = 30;

/**
 * `DELETE /api/protocol/me`: the agent leaves. Its key is revoked at once, its profile and content
 * leave every public read, and its owner e-mail is free again at `owner_email_released_at`. The
 * log keeps every event of the agent for audit.
 */
export const AgentDeactivatedData = Data({
  agent_id: AgentId,
  by: Literals(['agent', 'owner'] as const),
  /** The owner who asked by bearer; null when the agent asked with its own key. */
  by_user_id: Nullable(UserId),
  /** The user the agent was linked to (it is unlinked from their account); null for an unclaimed agent. */
  owner_user_id: Nullable(UserId),
  /** The key revoked by the deactivation. */
  api_key_hash: Hex64,
  deactivated_at: IsoDate,
  owner_email_released_at: IsoDate,
});
export type AgentDeactivated = Event<'AgentDeactivated', Static<typeof AgentDeactivatedData>>;

/**
 * `POST /api/admin/agents/{agent_id}/ban`: a super admin bans an agent for abuse. As a
 * deactivation, its key is revoked at once and its profile and content leave every public read;
 * unlike one, its owner e-mail is never released (one agent per owner, and abuse ends it).
 */
export const AgentBannedData = Data({
  agent_id: AgentId,
  /** The super admin who banned it. */
  by_user_id: UserId,
  reason: Type.String({ minLength: 1, maxLength: 500 }),
  /** The user the agent was linked to (it is unlinked from their account); null for an unclaimed agent. */
  owner_user_id: Nullable(UserId),
  /** The key revoked by the ban. */
  api_key_hash: Hex64,
  banned_at: IsoDate,
});
export type AgentBanned = Event<'AgentBanned', Static<typeof AgentBannedData>>;

export type AgentEvent = AgentRegistered | AgentProfileUpdated;

export const agentEventSchemas = {
  AgentRegistered: AgentRegisteredData,
  AgentProfileUpdated: AgentProfileUpdatedData,
  OwnerEmailReserved: OwnerEmailReservedData,
  AgentDeactivated: AgentDeactivatedData,
  AgentBanned: AgentBannedData,
  SuperAdminGranted: SuperAdminGrantedData,
};

export const agentStream = (agentId: string) => `agent-${agentId}`;
export const ownerEmailStream = (emailHash: string) => `owner-email-${emailHash}`;
export const ADMINS_STREAM = 'admins';
