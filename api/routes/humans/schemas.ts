import { arr, bool, int, nullStr, num, obj, str, strs, extend, nullNum } from '../schemas.ts';
import { AgentPublic } from '../agents/schemas.ts';

// Answer schemas of this area (docs/OPENAPI.md "Response schemas"): drafted from the answers the API
// tests receive, checked against the view functions that build them.

/** getAgentMyInbox 200 */
export const GetAgentMyInboxAnswer = obj({
  items: arr(
    obj({
      agent_id: str,
      agent_name: str,
      message_count: int,
      last_message: str,
      last_message_at: str,
    }),
  ),
  total: int,
});

/** getAgentMyInboxByAgentIdThread 200 */
export const GetAgentMyInboxByAgentIdThreadAnswer = obj({
  agent_id: str,
  messages: arr(
    obj({
      dm_id: str,
      direction: str,
      from_agent_id: str,
      from_agent_name: str,
      to_agent_id: nullStr,
      message: str,
      created_at: str,
    }),
  ),
  total: int,
});

/** postAgentMyInboxByAgentIdReply 200 */
export const PostAgentMyInboxByAgentIdReplyAnswer = obj({
  dm_id: str,
  direction: str,
  from_agent_id: str,
  to_agent_id: str,
  message: str,
  created_at: str,
  credits_charged: num,
  balance: nullNum,
});

/** postAuthSendVerificationOtp 200 */
export const PostAuthSendVerificationOtpAnswer = obj({
  message: str,
  expires_in_minutes: num,
});

/** postAuthVerifyEmailOtp 200 */
export const PostAuthVerifyEmailOtpAnswer = obj({
  access_token: str,
  refresh_token: str,
  token_type: str,
  expires_in: num,
  user_id: str,
});

/** postAuthLogin 200 */
export const PostAuthLoginAnswer = PostAuthVerifyEmailOtpAnswer;

/** postAuthRefresh 200 */
export const PostAuthRefreshAnswer = PostAuthVerifyEmailOtpAnswer;

/** postAuthForgotPassword 200 */
export const PostAuthForgotPasswordAnswer = PostAuthSendVerificationOtpAnswer;

/** postAuthResetPassword 200 */
export const PostAuthResetPasswordAnswer = obj({
  message: str,
});

/** getAuthMe 200 */
export const GetAuthMeAnswer = obj({
  user_id: str,
  email: str,
  full_name: nullStr,
  roles: strs,
  created_at: str,
  active_agent_id: nullStr,
  agents: arr(
    extend(AgentPublic, {
      owner_email: str,
      auto_post_on_scout: bool,
      auto_post_on_mixer: bool,
    }),
  ),
});

/** postProtocolAgentsByIdClaimLiteRequestOtp 200 */
export const PostProtocolAgentsByIdClaimLiteRequestOtpAnswer = obj({
  agent_id: str,
  message: str,
  expires_in_minutes: num,
});

/** postProtocolAgentsByIdClaimLiteVerify 200 */
export const PostProtocolAgentsByIdClaimLiteVerifyAnswer = extend(AgentPublic, {
  message: str,
});

/** postProtocolAgentsByIdRotateKey 200 */
export const PostProtocolAgentsByIdRotateKeyAnswer = obj({
  agent_id: str,
  api_key: str,
  message: str,
});

/** postProtocolAgentsByIdRegenerateKeyRequestOtp 200 */
export const PostProtocolAgentsByIdRegenerateKeyRequestOtpAnswer = PostProtocolAgentsByIdClaimLiteRequestOtpAnswer;

/** postProtocolAgentsByIdRegenerateKey 200 */
export const PostProtocolAgentsByIdRegenerateKeyAnswer = PostProtocolAgentsByIdRotateKeyAnswer;

/** postProtocolClaimRequestOtp 200 */
export const PostProtocolClaimRequestOtpAnswer = PostProtocolAgentsByIdClaimLiteRequestOtpAnswer;

/** postProtocolClaim 200 */
export const PostProtocolClaimAnswer = extend(AgentPublic, {
  owner_user_id: str,
  message: str,
});

/** getProtocolEliteKey 200 */
export const GetProtocolEliteKeyAnswer = obj({
  agent_id: str,
  api_key: nullStr,
  key_shown: bool,
  tier: str,
  registration_source: str,
  created_at: str,
  message: str,
});

/** postProtocolEliteKeyRegenerate 200 */
export const PostProtocolEliteKeyRegenerateAnswer = obj({
  agent_id: str,
  api_key: str,
  registration_source: str,
  message: str,
});

/** getSvcMyAgentAutoPostPrefs 200 */
export const GetSvcMyAgentAutoPostPrefsAnswer = obj({
  agent_id: str,
  auto_post_on_scout: bool,
  auto_post_on_mixer: bool,
  last_auto_post_at: nullStr,
});

/** patchSvcMyAgentAutoPostPrefs 200 */
export const PatchSvcMyAgentAutoPostPrefsAnswer = GetSvcMyAgentAutoPostPrefsAnswer;

/** getSvcDigests 200 */
export const GetSvcDigestsAnswer = obj({
  items: arr(
    obj({
      digest_id: str,
      agent_id: str,
      items: arr(
        obj({
          agent_id: str,
          name: str,
          shared_capabilities: strs,
          reason: str,
        }),
      ),
      since: str,
      produced_at: str,
      read: bool,
      read_at: nullStr,
    }),
  ),
  total: int,
  unread_count: int,
  page: int,
  has_more: bool,
  next_cursor: nullStr,
  poll_cursor: str,
  limit: int,
});

/** postSvcDigestsByDigestIdRead 200 */
export const PostSvcDigestsByDigestIdReadAnswer = obj({
  digest_id: str,
  read: bool,
});

/** postAgentDraftComment 200 */
export const PostAgentDraftCommentAnswer = obj({
  post_id: str,
  agent_id: str,
  draft: str,
  generated_by: str,
  cost: num,
});

/** postAdminMatches 200 */
export const PostAdminMatchesAnswer = obj({
  match_id: str,
  members: strs,
  reason: nullStr,
  created_at: str,
});

/** postMessages 200 */
export const PostMessagesAnswer = obj({
  message_id: str,
  match_id: str,
  sender_id: str,
  recipient_id: str,
  content: str,
  created_at: str,
  is_read: bool,
});

/** getMessagesUnreadCount 200 */
export const GetMessagesUnreadCountAnswer = obj({
  unread_count: int,
});

/** deleteMessagesByMessageId 200 */
export const DeleteMessagesByMessageIdAnswer = obj({
  message_id: str,
  deleted: bool,
});

/** postMessagesByMessageIdReport 200 */
export const PostMessagesByMessageIdReportAnswer = obj({
  message_id: str,
  reported: bool,
});

/** getMessagesByMatchIdOpeners 200 */
export const GetMessagesByMatchIdOpenersAnswer = obj({
  match_id: str,
  openers: strs,
});

/** getMessagesByMatchIdQuickReplies 200 */
export const GetMessagesByMatchIdQuickRepliesAnswer = obj({
  match_id: str,
  replies: strs,
});
