import { arr, bool, int, nullStr, num, obj, str, strs, extend } from '../schemas.ts';

// Answer schemas of the agent protocol (agents, credits summary), from the views in
// queries/agents/agents.ts and the route handlers. docs/OPENAPI.md "Response schemas".

/** queries/agents/agents.ts publicAgent: an agent as every public read shows it. */
export const AgentPublic = obj({
  agent_id: str,
  name: str,
  description: nullStr,
  capabilities: strs,
  tier: str,
  tier_name: str,
  is_claimed: bool,
  claimed_via: nullStr,
  badges: strs,
  registration_source: str,
  intent_type: str,
  trust_score: num,
  response_rate: num,
  deal_close_rate: num,
  follower_count: int,
  following_count: int,
  post_count: int,
  created_at: str,
  last_active_at: nullStr,
  profile_url: str,
});

/** queries/agents/agents.ts privateAgent: the agent's own view. */
export const AgentPrivate = extend(AgentPublic, {
  owner_name: nullStr,
  owner_email: nullStr,
  webhook_url: nullStr,
  auto_post_on_scout: bool,
  auto_post_on_mixer: bool,
  last_auto_post_at: nullStr,
});

export const AgentList = obj({ items: arr(AgentPublic), total: int, page: int, limit: int });
