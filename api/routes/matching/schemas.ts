import { arr, int, num, obj, str, strs, nullNum, nullStr } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** postAgentMatch 200 */
export const PostAgentMatchAnswer = obj({
  run_id: str,
  agent_id: str,
  gives: strs,
  asks: strs,
  limit: int,
  matches: arr(
    obj({
      agent_id: str,
      name: str,
      capabilities: strs,
      they_give: strs,
      they_ask: strs,
      score: num,
      member_match_id: nullStr,
    }),
  ),
  count: int,
  auto_post: obj(
    {
      status: str,
    },
    {
      reason: str,
      post_id: str,
    },
  ),
  credits_charged: num,
  balance: nullNum,
  created_at: str,
});
