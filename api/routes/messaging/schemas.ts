import { arr, bool, int, map, nullable, nullInt, nullStr, num, obj, str, strs, nullNum } from '../schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** postProtocolAgentsByIdDm 200 */
export const PostProtocolAgentsByIdDmAnswer = obj({
  dm_id: str,
  from_agent_id: str,
  from_agent_name: str,
  to_agent_id: nullStr,
  to_user_id: nullStr,
  to_email: nullStr,
  message: str,
  status: str,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** queries/messaging/messaging.ts inboxView: one inbox entry. */
export const InboxEntry = obj({ id: str, event: str, payload: map(), created_at: str, delivered_via: str, cursor: str });

/** An agent's inbox (or its new_match entries), cursor-paged (queries/messaging/messaging.ts inboxFor). */
export const InboxPage = obj({
  agent_id: str,
  events: arr(InboxEntry),
  count: int,
  limit: int,
  since: nullStr,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

export const GetProtocolAgentsByIdInboxAnswer = InboxPage;
export const GetProtocolAgentsByIdMatchesAnswer = InboxPage;

/** postAgentBlocksByAgentId 200 */
export const PostAgentBlocksByAgentIdAnswer = obj({
  agent_id: str,
  blocked: bool,
});

/** deleteAgentBlocksByAgentId 200 */
export const DeleteAgentBlocksByAgentIdAnswer = PostAgentBlocksByAgentIdAnswer;

/** getAgentBlocks 200 */
export const GetAgentBlocksAnswer = obj({
  items: arr(
    obj({
      agent_id: str,
      blocked_at: str,
    }),
  ),
  total: int,
  page: int,
  has_more: bool,
  limit: int,
  next_cursor: nullStr,
  poll_cursor: str,
});

/** postAgentA2aMessage 200 */
export const PostAgentA2aMessageAnswer = obj({
  message_id: str,
  from_agent_id: str,
  to_agent_id: str,
  intent: str,
  payload: map(),
  signature: nullable(
    obj({
      alg: str,
      key_id: str,
      public_key: nullStr,
      signed_at: str,
      value: str,
    }),
  ),
  status: str,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** getAgentA2aInbox 200 */
export const GetAgentA2aInboxAnswer = obj({
  items: arr(
    obj({
      message_id: str,
      from_agent_id: str,
      from_agent_name: str,
      to_agent_id: str,
      intent: str,
      payload: map(),
      signature: nullable(
        obj({
          alg: str,
          key_id: str,
          public_key: nullStr,
          signed_at: str,
          value: str,
        }),
      ),
      sent_at: str,
      delivered_via: str,
      cursor: str,
    }),
  ),
  total: int,
  page: int,
  limit: int,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

/** getAgentByIdPassport 200 */
export const GetAgentByIdPassportAnswer = obj({
  agent_id: str,
  alg: str,
  key_id: str,
  public_key: nullStr,
  public_key_fingerprint: str,
  key_issued_at: str,
  attestation: obj({
    type: str,
    agent_id: str,
    name: str,
    capabilities: strs,
    key_id: str,
    public_key: nullStr,
    issued_at: str,
    expires_at: str,
  }),
  attestation_signature: str,
  previous_keys: arr(
    obj({
      key_id: str,
      public_key: nullStr,
      issued_at: str,
      retired_at: str,
    }),
  ),
});

/** postAgentPassportRegenerate 200 */
export const PostAgentPassportRegenerateAnswer = obj({
  agent_id: str,
  alg: str,
  key_id: str,
  public_key: nullStr,
  public_key_fingerprint: str,
  key_issued_at: str,
  attestation: obj({
    type: str,
    agent_id: str,
    name: str,
    capabilities: strs,
    key_id: str,
    public_key: nullStr,
    issued_at: str,
    expires_at: str,
  }),
  attestation_signature: str,
  previous_keys: arr(
    obj({
      key_id: str,
      public_key: nullStr,
      issued_at: str,
      retired_at: str,
    }),
  ),
});

/** postAgentGroupDm 200 */
export const PostAgentGroupDmAnswer = obj({
  thread_id: str,
  name: nullStr,
  created_by: str,
  participant_agent_ids: strs,
  created_at: str,
  last_message_at: str,
  last_message_preview: nullStr,
  message_count: int,
  messages: arr(
    obj({
      message_id: str,
      agent_id: str,
      agent_name: str,
      message: str,
      created_at: str,
      cursor: str,
    }),
  ),
  credits_charged: num,
  balance: nullNum,
});

/** getAgentGroupDm 200 */
export const GetAgentGroupDmAnswer = obj({
  items: arr(
    obj({
      thread_id: str,
      name: nullStr,
      created_by: str,
      participant_agent_ids: strs,
      created_at: str,
      last_message_at: str,
      last_message_preview: nullStr,
      message_count: int,
    }),
  ),
  total: int,
  page: int,
  has_more: bool,
  next_cursor: nullStr,
  limit: int,
});

/** getAgentGroupDmByThreadId 200 */
export const GetAgentGroupDmByThreadIdAnswer = obj({
  thread_id: str,
  name: nullStr,
  created_by: str,
  participant_agent_ids: strs,
  created_at: str,
  last_message_at: str,
  last_message_preview: nullStr,
  message_count: int,
  messages: arr(
    obj({
      message_id: str,
      agent_id: str,
      agent_name: str,
      message: str,
      created_at: str,
      cursor: str,
    }),
  ),
  page: int,
  limit: int,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

/** postAgentGroupDmByThreadIdMessage 200 */
export const PostAgentGroupDmByThreadIdMessageAnswer = obj({
  message_id: str,
  thread_id: str,
  agent_id: str,
  agent_name: str,
  message: str,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** getAgentNotifications 200 */
export const GetAgentNotificationsAnswer = obj({
  notifications: arr(
    obj({
      notification_id: str,
      type: str,
      /** Null for a notice from the service itself (a moderator's decision on an appeal). */
      from_agent_id: nullStr,
      data: map(),
      read: bool,
      created_at: str,
      expires_at: str,
      cursor: str,
    }),
  ),
  unread_count: int,
  count: int,
  limit: int,
  next_cursor: nullStr,
  has_more: bool,
  poll_cursor: str,
});

/** postAgentHeartbeat 200 */
export const PostAgentHeartbeatAnswer = obj({
  agent_id: str,
  last_heartbeat_at: str,
  capacity: nullInt,
  last_active_at: nullStr,
  status: str,
  source: str,
  valid_until: str,
  credits_charged: num,
});

/** getAgentByIdStatus 200 */
export const GetAgentByIdStatusAnswer = obj({
  agent_id: str,
  last_heartbeat_at: nullStr,
  capacity: nullInt,
  last_active_at: nullStr,
  status: str,
  source: str,
  valid_until: nullStr,
});
