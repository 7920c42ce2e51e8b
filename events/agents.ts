import type { Event, JsonSchema } from './types.ts';
import { isoDate, nullable } from './types.ts';

export type Tier = 'free' | 'pro' | 'elite' | 'builder' | 'enterprise';

export type AgentRegistered = Event<
  'AgentRegistered',
  {
    agent_id: string;
    name: string;
    description: string | null;
    capabilities: string[];
    owner_name: string;
    owner_email: string;
    webhook_url: string | null;
    /** AES-256-GCM ciphertext: deliveries must be signed with the secret itself, so it cannot be a one-way hash. */
    webhook_secret_enc: string;
    api_key_hash: string;
    claim_token_hash: string;
    tier: Tier;
    registration_source: string;
    intent_type: string;
    registered_at: string;
  }
>;

export type AgentProfileUpdated = Event<
  'AgentProfileUpdated',
  {
    agent_id: string;
    name?: string;
    description?: string | null;
    webhook_url?: string | null;
  }
>;

/** Appended with expected revision "no stream" on `owner-email-<hash>`: one agent per owner e-mail. */
export type OwnerEmailReserved = Event<
  'OwnerEmailReserved',
  {
    email_hash: string;
    agent_id: string;
    reserved_at: string;
  }
>;

export type SuperAdminGranted = Event<'SuperAdminGranted', { email: string; granted_at: string }>;

export type AgentEvent = AgentRegistered | AgentProfileUpdated;

const capabilities = { type: 'array', items: { type: 'string', pattern: '^[a-z0-9-]{3,40}$' }, minItems: 1 };

export const agentEventSchemas: Record<string, JsonSchema> = {
  AgentRegistered: {
    type: 'object',
    additionalProperties: false,
    required: [
      'agent_id',
      'name',
      'description',
      'capabilities',
      'owner_name',
      'owner_email',
      'webhook_url',
      'webhook_secret_enc',
      'api_key_hash',
      'claim_token_hash',
      'tier',
      'registration_source',
      'intent_type',
      'registered_at',
    ],
    properties: {
      agent_id: { type: 'string', pattern: '^agt_' },
      name: { type: 'string', minLength: 1 },
      description: nullable({ type: 'string', maxLength: 500 }),
      capabilities,
      owner_name: { type: 'string', minLength: 1 },
      owner_email: { type: 'string', minLength: 3 },
      webhook_url: nullable({ type: 'string', pattern: '^https://' }),
      webhook_secret_enc: { type: 'string' },
      api_key_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      claim_token_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      tier: { enum: ['free', 'pro', 'elite', 'builder', 'enterprise'] },
      registration_source: { type: 'string' },
      intent_type: { type: 'string' },
      registered_at: isoDate,
    },
  },
  AgentProfileUpdated: {
    type: 'object',
    additionalProperties: false,
    required: ['agent_id'],
    minProperties: 2,
    properties: {
      agent_id: { type: 'string', pattern: '^agt_' },
      name: { type: 'string', minLength: 1 },
      description: nullable({ type: 'string', maxLength: 500 }),
      webhook_url: nullable({ type: 'string', pattern: '^https://' }),
    },
  },
  OwnerEmailReserved: {
    type: 'object',
    additionalProperties: false,
    required: ['email_hash', 'agent_id', 'reserved_at'],
    properties: { email_hash: { type: 'string' }, agent_id: { type: 'string', pattern: '^agt_' }, reserved_at: isoDate },
  },
  SuperAdminGranted: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'granted_at'],
    properties: { email: { type: 'string' }, granted_at: isoDate },
  },
};

export const agentStream = (agentId: string) => `agent-${agentId}`;
export const ownerEmailStream = (emailHash: string) => `owner-email-${emailHash}`;
export const ADMINS_STREAM = 'admins';
