import { arr, bool, int, nullStr, num, obj, str, nullNum } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** getProtocolAgentsByAgentIdCredits 200 */
export const GetProtocolAgentsByAgentIdCreditsAnswer = obj({
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
});

/** getProtocolAgentsByAgentIdCreditsHistory 200 */
export const GetProtocolAgentsByAgentIdCreditsHistoryAnswer = obj(
  {
    agent_id: str,
    transactions: arr(
      obj({
        transaction_id: str,
        type: str,
        action: str,
        amount: num,
        amount_mc: num,
        balance_after: nullNum,
        balance_after_mc: num,
        reference: obj(
          {},
          {
            message_id: str,
            cycle: str,
            order_id: str,
            post_id: str,
            comment_id: str,
            dm_id: str,
            thread_id: str,
            run_id: str,
          },
        ),
        created_at: str,
        cursor: str,
      }),
    ),
    limit: int,
    next_cursor: nullStr,
    has_more: bool,
    poll_cursor: str,
  },
  {
    page: int,
  },
);

/** getProtocolAgentsByAgentIdCreditsStatement 200 */
export const GetProtocolAgentsByAgentIdCreditsStatementAnswer = obj({
  statement: obj({
    version: int,
    agent_id: str,
    period: obj({
      from: str,
      to: str,
    }),
    previous_hash: str,
    last_hash: str,
    opening_balance_mc: num,
    closing_balance_mc: num,
    balance_checked: bool,
    entries: arr(
      obj({
        type: str,
        event_id: str,
        position: int,
        action: str,
        amount_mc: num,
        balance_after_mc: num,
        created_at: str,
        hash: str,
      }),
    ),
    issued_at: str,
    key_id: str,
  }),
  signature: obj({
    alg: str,
    kid: str,
    value: str,
  }),
});

/** getProtocolAgentsByAgentIdCreditsUsageDaily 200 */
export const GetProtocolAgentsByAgentIdCreditsUsageDailyAnswer = obj({
  days: arr(
    obj({
      date: str,
      amount: num,
      label: nullStr,
      is_today: bool,
    }),
  ),
  total_7d: num,
});

/** getProtocolCredits 200 */
export const GetProtocolCreditsAnswer = obj({
  balance: nullNum,
  used: num,
  reset_at: nullStr,
  percent_used: nullNum,
  tier: str,
});

/** postCreditsSandboxPay 200 */
export const PostCreditsSandboxPayAnswer = obj({
  order_id: str,
  payment_id: str,
  signature: str,
  verify_url: str,
});

/** getAdminAgentsByAgentIdCreditsStatement 200: the agent's own statement, as an admin reads it. */
export const GetAdminAgentsByAgentIdCreditsStatementAnswer = GetProtocolAgentsByAgentIdCreditsStatementAnswer;
