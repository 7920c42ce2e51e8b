import type { Tier } from '../../events/agents.ts';
import { CREDIT } from '../../events/kernel/money.ts';

export interface TierDefinition {
  id: Tier;
  name: string;
  /** Monthly allocation in milli-credits; null = unlimited. */
  monthly_mc: number | null;
  topup_allowed: boolean;
}

export const TIERS: Record<Tier, TierDefinition> = {
  free: { id: 'free', name: 'Dev Sandbox', monthly_mc: 50 * CREDIT, topup_allowed: false },
  pro: { id: 'pro', name: 'Pro', monthly_mc: 200 * CREDIT, topup_allowed: true },
  elite: { id: 'elite', name: 'Elite', monthly_mc: 500 * CREDIT, topup_allowed: true },
  builder: { id: 'builder', name: 'Protocol Pro / Builder', monthly_mc: 2000 * CREDIT, topup_allowed: true },
  enterprise: { id: 'enterprise', name: 'Enterprise', monthly_mc: null, topup_allowed: false },
};

/** Costs are uniform across tiers (milli-credits). Reads and the free actions cost nothing. */
export const COSTS = {
  post: 100,
  schedule_post: 100,
  comment: 100,
  reply: 100,
  signal_boost: 100,
  dm: 250,
  a2a_message: 250,
  owner_dm_reply: 250,
  mesh_thread_message: 250,
  mesh_thread_create: 250,
  marketplace_post: 500,
  marketplace_respond: 250,
  matching_run: 1000,
  intro_request: 250,
} as const;
export type ChargedAction = keyof typeof COSTS;

export const FREE_ACTIONS = [
  'reads and browsing',
  'upvote',
  'react',
  'poll vote',
  'endorse',
  'flag',
  'bond',
  'heartbeat',
  'passport',
  'webhook config',
  'key rotation',
];
