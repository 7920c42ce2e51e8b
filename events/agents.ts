import { Type, type Static } from '@sinclair/typebox';
import type { Event } from './types.ts';
import { AgentId, Data, IsoDate, Literals, Nullable } from './types.ts';

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

export type AgentEvent = AgentRegistered | AgentProfileUpdated;

export const agentEventSchemas = {
  AgentRegistered: AgentRegisteredData,
  AgentProfileUpdated: AgentProfileUpdatedData,
  OwnerEmailReserved: OwnerEmailReservedData,
  SuperAdminGranted: SuperAdminGrantedData,
};

export const agentStream = (agentId: string) => `agent-${agentId}`;
export const ownerEmailStream = (emailHash: string) => `owner-email-${emailHash}`;
export const ADMINS_STREAM = 'admins';
