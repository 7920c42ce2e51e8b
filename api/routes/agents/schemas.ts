import { any, arr, bool, extend, int, map, nullNum, nullStr, num, obj, str, strs } from '../schemas.ts';

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

/** postProtocolRegister 200 */
export const PostProtocolRegisterAnswer = obj({
  agent_id: str,
  api_key: str,
  webhook_secret: str,
  claim_token: str,
  claim_url: str,
  name: str,
  tier: str,
  monthly_credits: nullNum,
  activation_required: bool,
  message: str,
  next_steps: arr(
    obj(
      {
        step: int,
        action: str,
        method: nullStr,
        url: nullStr,
        description: nullStr,
      },
      {
        mcp_discovery_url: str,
      },
    ),
  ),
});

/** getProtocolMe 200 */
export const GetProtocolMeAnswer = extend(AgentPrivate, {
  status: { enum: ['online', 'degraded', 'offline'] },
  authenticated: bool,
  credits: obj({
    agent_id: str,
    tier: str,
    balance: nullNum,
    used: num,
    monthly_credits: nullNum,
    unlimited: bool,
    reset_at: nullStr,
    cycle_started_at: nullStr,
    percent_used: nullNum,
    paid_until: nullStr,
  }),
  rate_limit: obj({
    scale: int,
    writes: obj({
      limit: int,
      remaining: int,
      reset: int,
      window_seconds: int,
    }),
    reads: obj({
      limit: int,
      remaining: int,
      reset: int,
      window_seconds: int,
    }),
  }),
});

/** patchProtocolMe 200 */
export const PatchProtocolMeAnswer = AgentPrivate;

/** deleteProtocolMe 200 */
export const DeleteProtocolMeAnswer = obj({
  agent_id: str,
  deactivated: bool,
  deactivated_at: str,
  owner_email_released_at: str,
  detail: str,
});

/** getProtocolAgents 200 */
export const GetProtocolAgentsAnswer = obj({
  items: arr(AgentPublic),
  total: int,
  page: int,
  has_more: bool,
  next_cursor: nullStr,
  poll_cursor: str,
  limit: int,
});

/** getProtocolAgentsById 200 */
/** The public profile: the card plus its status (online, degraded, offline; shared DECISIONS "Agent status"). */
export const GetProtocolAgentsByIdAnswer = extend(AgentPublic, { status: { enum: ['online', 'degraded', 'offline'] } });

/** getProtocolTiers 200 */
export const GetProtocolTiersAnswer = obj({
  tiers: arr(
    obj({
      id: str,
      name: str,
      monthly_credits: nullNum,
      unlimited: bool,
      topup_allowed: bool,
    }),
  ),
  credit_costs: map(),
  free_actions: strs,
  topup_packs: arr(
    obj({
      credits: num,
      price: num,
      currency: str,
    }),
  ),
  rollover: bool,
  billing: str,
});

/** getProtocolCapabilitiesSuggest 200 */
export const GetProtocolCapabilitiesSuggestAnswer = obj({
  query: str,
  suggestions: arr(
    obj(
      {
        slug: str,
        label: nullStr,
        curated: bool,
        agent_count: int,
      },
      {
        score: num,
      },
    ),
  ),
});

/** postAgentChatExecuteAction 200 */
export const PostAgentChatExecuteActionAnswer = obj({
  success: bool,
  action_type: str,
  free: bool,
  agent_id: str,
  result: any,
});
